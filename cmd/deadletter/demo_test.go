package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/internal/output"
)

// eventsOf are a blob's events as show reads them: original id → replay attempt.
func eventsOf(t *testing.T, dir, name string) map[string]float64 {
	t.Helper()
	var s struct {
		Events []struct {
			OriginalID    string  `json:"originalId"`
			ReplayAttempt float64 `json:"replayAttempt"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "show", name, "--json", "--dir", dir)), &s); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, e := range s.Events {
		out[e.OriginalID] = e.ReplayAttempt
	}
	return out
}

func namesOf(l lsOut) []string {
	var out []string
	for _, b := range l.Blobs {
		out = append(out, b["name"].(string))
	}
	return out
}

// Every claim the README ("Rehearsing") and docs/twin.md ("What it teaches") make about the demo, walked on the
// demo's own twin (the incident, seed 1, opened now):
//   - the quarantine pane holds capped events (at the cap they are quarantined), and restoring a capped copy
//     exits 0 and resumes its events: two twin hours later the replay has republished them (its archived copy);
//   - drained at the opening, the blobs whose handlers recovered are consumed within the twin's minutes
//     (replayed), the webhook events are quarantined (not idempotent), the one nested too deep stays (it crashes
//     the replay every time), and nothing raises STALLED;
//   - drained while its handler still fails, an idempotent subscription's events (blob-deletions) come back
//     about two hours later (Event Grid gives them up at their first attempt past the hour), one attempt further
//     on.
//
// (The subscription still failing is blob-deletions, its handler down until three hours after the opening.)
func TestTheDemoTeachesWhatTheDocsSay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, "twin", "start", "--dir", dir)

	capped := namesOf(lsJSONOf(t, "--dir", dir, "--pane", "quarantine", "--verdict", "cap"))
	if len(capped) == 0 {
		t.Fatal("the demo's quarantine pane holds no capped event (/verdict:cap finds nothing)")
	}
	var restored output.ResultsJSON
	if err := json.Unmarshal([]byte(mustRun(t, "restore", capped[0], "--yes", "--json", "--dir", dir)), &restored); err != nil {
		t.Fatal(err)
	}
	if len(restored.Results) != 1 || restored.Results[0].Outcome != "restored" || restored.Results[0].Resume == 0 {
		t.Fatalf("restoring a capped copy: %+v", restored.Results)
	}
	target := string(restored.Results[0].Target)

	failing := namesOf(lsJSONOf(t, "--dir", dir, "--pane", "stranded", "--subscription", "BLOB-DELETIONS"))
	if len(failing) == 0 {
		t.Fatal("no stranded blob-deletions blob at the opening")
	}
	before := map[string]float64{}
	existed := map[string]bool{}
	for _, n := range namesOf(lsJSONOf(t, "--dir", dir, "--subscription", "BLOB-DELETIONS")) {
		existed[n] = true
	}
	for _, n := range failing {
		for id, a := range eventsOf(t, dir, n) {
			before[id] = a
		}
	}
	if out, errs, code := runCmd(t, "drain", "--yes", "--dir", dir); code != 0 && code != 3 {
		t.Fatalf("drain: exit %d\n%s%s", code, out, errs)
	}

	mustRun(t, "twin", "advance", "--by", "15m", "--dir", dir)
	var d output.DiffJSON
	json.Unmarshal([]byte(mustRun(t, "twin", "diff", "-o", "json", "--dir", dir)), &d)
	kinds := map[string]map[string]int{} // subscription → kind → blobs drained
	for _, b := range d.Blobs {
		if len(b.Actions) == 0 {
			continue
		}
		sub, _, _ := strings.Cut(string(b.Name), "/")
		if kinds[sub] == nil {
			kinds[sub] = map[string]int{}
		}
		kinds[sub][b.Kind]++
	}
	for _, sub := range []string{"BLOB-DELETIONS", "FRIEND-REQUESTS", "PUSH-NOTIFICATIONS"} {
		if k := kinds[sub]; k["replayed"] == 0 || len(k) != 1 {
			t.Errorf("%s drained, a quarter of an hour on: %v (want every blob replayed)", sub, k)
		}
	}
	if k := kinds["WEBHOOKS"]; k["quarantined"] == 0 || len(k) != 1 {
		t.Errorf("WEBHOOKS drained: %v (want every blob quarantined: not idempotent)", k)
	}
	deep := namesOf(lsJSONOf(t, "--dir", dir, "--pane", "stranded", "--subscription", "THREAD-REPLIES"))
	if len(deep) != 1 {
		t.Errorf("stranded thread replies after the drain: %v (want only the one nested too deep)", deep)
	}
	var check output.CheckJSON
	json.Unmarshal([]byte(runExit(t, 1, "check", "--json", "--dir", dir)), &check)
	for _, f := range check.Findings {
		if f.Kind == "replayStalled" {
			t.Fatal("STALLED after the drain, though the replay runs")
		}
	}

	mustRun(t, "twin", "advance", "--by", "2h", "--dir", dir)
	// Back as a new dead letter (which the running replay takes at once: its archived copy shows it).
	again := 0
	for _, n := range namesOf(lsJSONOf(t, "--dir", dir, "--subscription", "BLOB-DELETIONS")) {
		if existed[n] || existed[rootOf(n)] {
			continue
		}
		for id, a := range eventsOf(t, dir, n) {
			if was, ok := before[id]; ok {
				if a != was+1 {
					t.Errorf("%s back in %s at attempt %v, was %v", id, n, a, was)
				}
				again++
			}
		}
	}
	if again == 0 {
		t.Fatal("two hours and a quarter after the drain, no blob-deletions event came back one attempt further on")
	}

	mustRun(t, "twin", "advance", "--by", "30m", "--dir", dir)
	if l := lsJSONOf(t, "--dir", dir, "--pane", "archived"); !strings.Contains(strings.Join(namesOf(l), "\n"), "archived/"+target) {
		t.Fatalf("three twin hours after the restore, %s was not replayed", target)
	}
	if out := mustRun(t, "twin", "status", "--dir", dir); strings.Contains(out, "NOWHERE") {
		t.Fatal(out)
	}
}

// The demo's banner gives way in the room the header leaves it: every handler down when they fit, then the first
// ones and "+N more", then only how many, then only the rehearsal and its clock — never wider than the room.
func TestDemoBannerGivesWay(t *testing.T) {
	t.Parallel()
	head, failing := "REHEARSAL 06-01 09:30 ×60", "blob-deletions 500 (2h36m left), friend-requests 503 (2h left), webhooks 404 (1h51m left)"
	for _, c := range []struct {
		room int
		want string
	}{
		{200, head + " · script down: " + failing},
		{80, head + " · script down: blob-deletions 500 (2h36m left) +2 more"},
		{46, head + " · script: 3 down"},
		{40, head + " · 3 down"},
		{20, head},
	} {
		got := demoBanner(head, failing, c.room)
		if got != c.want {
			t.Errorf("in %d columns: %q, want %q", c.room, got, c.want)
		}
	}
	if got := demoBanner(head, "", 10); got != head {
		t.Errorf("nothing failing: %q", got)
	}
}
