package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type traceDoc struct {
	Blob   string `json:"blob"`
	Events []struct {
		ID       string   `json:"id"`
		State    string   `json:"state"`
		Resumes  bool     `json:"resumes"`
		Verdicts []string `json:"verdicts"`
		Passes   []struct {
			Blob    string   `json:"blob"`
			Attempt *float64 `json:"attempt"`
			AtLeast bool     `json:"atLeast"`
			Fate    string   `json:"fate"`
			Where   string   `json:"where"`
			Drains  int      `json:"drains"`
			Actions []struct {
				Action string `json:"action"`
			} `json:"actions"`
		} `json:"passes"`
	} `json:"events"`
}

func traceOf(t *testing.T, args ...string) traceDoc {
	t.Helper()
	var d traceDoc
	if err := json.Unmarshal([]byte(mustRun(t, append([]string{"trace", "-o", "json"}, args...)...)), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// Issue 49's first test: a drain into a handler that still fails. A simulated day later every event of the
// drained blobs has come back one attempt further on each pass — 0, 1, 2 — and ends quarantined at the cap,
// the drain told on its first pass; the twin, which was there, agrees for every one of them.
func TestTraceFollowsADrainIntoAFailingHandlerToTheCap(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "twin", "script", "set", "friend-requests", "down", "--status", "500", "--dir", dir)
	var ls struct {
		Blobs []struct {
			Name string `json:"name"`
		} `json:"blobs"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "ls", "--dir", dir, "--pane", "stranded", "--filter", "sub:friend-requests", "-o", "json")), &ls); err != nil {
		t.Fatal(err)
	}
	if len(ls.Blobs) < 3 {
		t.Fatalf("the twin opens on %d stranded friend-requests blobs", len(ls.Blobs))
	}
	var ids []string
	for _, b := range ls.Blobs {
		for _, e := range traceOf(t, "--dir", dir, b.Name).Events {
			ids = append(ids, e.ID)
		}
	}
	mustRun(t, "drain", "--dir", dir, "--filter", "sub:friend-requests", "--yes")
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "24h")
	lastWhere := map[string]string{}
	for _, id := range ids {
		d := traceOf(t, "--dir", dir, "--event", id)
		if len(d.Events) != 1 {
			t.Fatalf("%s: %+v", id, d)
		}
		e := d.Events[0]
		lastWhere[id] = e.Passes[len(e.Passes)-1].Where
		if e.State != "quarantined" || !e.Resumes || !slices.Equal(e.Verdicts, []string{"cap"}) || len(e.Passes) != 3 {
			t.Fatalf("%s ends %s (resumes %v, %v) after %d passes: %+v", id, e.State, e.Resumes, e.Verdicts, len(e.Passes), e)
		}
		for n, p := range e.Passes {
			// (The last pass may stand only in its quarantine copy, whose ids the replay wrote back without the
			// count: that copy says "at least the cap", no more. An archived copy beside it says the count.)
			last := n == len(e.Passes)-1
			if p.Attempt == nil || int(*p.Attempt) != n || p.AtLeast && !last {
				t.Errorf("%s pass %d: attempt %v (at least %v), want %d", id, n, p.Attempt, p.AtLeast, n)
			}
			want := "republished"
			if n == len(e.Passes)-1 {
				want = "quarantined"
			}
			if p.Fate != want {
				t.Errorf("%s pass %d: %s, want %s", id, n, p.Fate, want)
			}
		}
		if first := e.Passes[0]; first.Drains != 1 || len(first.Actions) != 1 || first.Actions[0].Action != "drain" {
			t.Errorf("%s: the drain is not told on its first pass: %+v", id, first)
		}
	}
	var truth struct {
		Events []struct {
			ID    string   `json:"id"`
			State string   `json:"state"`
			Blobs []string `json:"blobs"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, append([]string{"twin", "truth", "--dir", dir, "-o", "json"}, ids...)...)), &truth); err != nil {
		t.Fatal(err)
	}
	if len(truth.Events) != len(ids) {
		t.Fatalf("truth of %d events for %d asked", len(truth.Events), len(ids))
	}
	for i, e := range truth.Events {
		if e.ID != ids[i] || e.State != "quarantined" || !slices.Contains(e.Blobs, lastWhere[ids[i]]) {
			t.Errorf("the twin says %+v; trace says quarantined in %s", e, lastWhere[ids[i]])
		}
	}
}

// A blob asked for by a fragment gives the journey of each of its events, ending in it; a quarantine copy's
// events never read attempt 0 (at least the cap when the cap stopped them, else unknown); an id nothing holds
// exits 1.
func TestTraceOfABlobAndOfNothing(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "12h")
	out, _, code := runCmd(t, "trace", "--dir", dir, "--event", "no-such-event", "-o", "json")
	var none traceDoc
	if code != exitFindings || json.Unmarshal([]byte(out), &none) != nil || len(none.Events) != 0 {
		t.Fatalf("an id no blob holds: exit %d, %q", code, out)
	}
	var ls struct {
		Blobs []struct {
			Name     string         `json:"name"`
			Verdicts map[string]int `json:"verdicts"`
		} `json:"blobs"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "ls", "--dir", dir, "--pane", "quarantine", "-o", "json")), &ls); err != nil {
		t.Fatal(err)
	}
	// Four copies the cap quarantined and four quarantined for another reason, in the listing's order (each trace
	// reads the whole twin: every one of its sixty copies took a minute of the suite for no more coverage).
	var picked []string
	byCap := map[bool]int{}
	for _, b := range ls.Blobs {
		if c := b.Verdicts["cap"] > 0; byCap[c] < 4 {
			byCap[c]++
			picked = append(picked, b.Name)
		}
	}
	capped, other := 0, 0
	for _, name := range picked {
		// Its GUID names the dead letter (the root blob, the replay's archived copy holding all of it, this copy):
		// trace takes the one holding every event; its full name, this copy.
		guid := strings.TrimSuffix(name[strings.LastIndexByte(name, '/')+1:], ".json")
		if d := traceOf(t, "--dir", dir, guid); strings.TrimPrefix(strings.TrimPrefix(d.Blob, "archived/"), "quarantine/") != strings.TrimPrefix(name, "quarantine/") {
			t.Fatalf("%s traces %s", guid, d.Blob)
		}
		d := traceOf(t, "--dir", dir, name)
		if d.Blob != name || len(d.Events) == 0 {
			t.Fatalf("%s: %+v", name, d)
		}
		for _, e := range d.Events {
			last := e.Passes[len(e.Passes)-1]
			if e.State != "quarantined" || last.Where != name {
				t.Errorf("%s in %s: %s, last pass in %s", e.ID, name, e.State, last.Where)
			}
			switch {
			case slices.Equal(e.Verdicts, []string{"cap"}):
				capped++
				// (exact when the root blob or the archived copy still says it, else at least the cap)
				if last.Attempt == nil || *last.Attempt < 2 {
					t.Errorf("%s stopped by the cap reads attempt %v (at least %v)", e.ID, last.Attempt, last.AtLeast)
				}
			default:
				other++
				if last.Attempt != nil && *last.Attempt == 0 {
					t.Errorf("%s (%v) reads attempt 0 in a copy that stripped its count", e.ID, e.Verdicts)
				}
			}
		}
	}
	if capped == 0 || other == 0 {
		t.Fatalf("the twin's quarantine held %d capped and %d other events: the test saw too little", capped, other)
	}
}

// Issue 49's log: after a drain into a failing handler, the events dead-letter again up to the cap; an edit
// repairs their quarantine copy and the replay takes it. log --events tells every one of those steps for the
// drained events, and its JSON carries each event's passes.
func TestLogFollowsAnActionsEvents(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "twin", "script", "set", "friend-requests", "down", "--status", "500", "--until", "+6h", "--dir", dir)
	var ls struct {
		Blobs []struct {
			Name string `json:"name"`
		} `json:"blobs"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "ls", "--dir", dir, "--pane", "stranded", "--filter", "sub:friend-requests", "-o", "json")), &ls); err != nil {
		t.Fatal(err)
	}
	drained := ls.Blobs[0].Name
	id := traceOf(t, "--dir", dir, drained).Events[0].ID
	mustRun(t, "drain", "--dir", dir, drained, "--yes")
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "8h")
	e := traceOf(t, "--dir", dir, "--event", id).Events[0]
	quarantined := e.Passes[len(e.Passes)-1].Where
	if e.State != "quarantined" || !strings.HasPrefix(quarantined, "quarantine/") {
		t.Fatalf("%s: %+v", id, e)
	}
	// An edit that changes nothing the estate judges (a reason's words), so the repaired copy replays.
	editor := filepath.Join(t.TempDir(), "editor")
	os.WriteFile(editor, []byte("#!/bin/sh\nsed -i 's/TimeToLiveExceeded/TimeToLiveExceeded (repaired)/' \"$1\"\n"), 0o700)
	t.Setenv("EDITOR", editor)
	t.Setenv("VISUAL", "")
	mustRun(t, "edit", quarantined, "--dir", dir, "--yes")
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "2h")

	var lj struct {
		Records []struct {
			Action string `json:"action"`
			Blobs  []struct {
				Name   string `json:"name"`
				Events []struct {
					ID     string `json:"id"`
					State  string `json:"state"`
					Passes []struct {
						Fate string `json:"fate"`
						Via  string `json:"via"`
					} `json:"passes"`
				} `json:"events"`
			} `json:"blobs"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "log", "--dir", dir, "--events", "-o", "json")), &lj); err != nil {
		t.Fatal(err)
	}
	var fates []string
	state := ""
	for _, r := range lj.Records {
		for _, b := range r.Blobs {
			for _, ev := range b.Events {
				if r.Action == "drain" && b.Name == drained && ev.ID == id {
					for _, p := range ev.Passes {
						fates = append(fates, p.Fate+"/"+p.Via)
					}
					state = ev.State
				}
			}
		}
	}
	want := []string{"republished/", "republished/", "repaired/", "republished/repaired"}
	if !slices.Equal(fates, want) || (state != "delivering" && state != "presumed delivered") {
		t.Fatalf("the drain's event %s: passes %v, now %q; want %v, then delivering or presumed delivered", id, fates, state, want)
	}
	text := mustRun(t, "log", "--dir", dir, "--events")
	for _, w := range []string{"event " + id + ": republished as |1", "dead-lettered again", ") → repaired by edit", "quarantined (", "in the repaired copy"} {
		if !strings.Contains(text, w) {
			t.Errorf("log --events lacks %q:\n%s", w, text)
		}
	}
}

// twin diff --events follows the events of each blob that moved: a drained friend-requests blob's events, a day
// after a drain into a failing handler, republished twice and quarantined at the cap.
func TestTwinDiffFollowsTheEvents(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "twin", "script", "set", "friend-requests", "down", "--status", "500", "--dir", dir)
	mustRun(t, "drain", "--dir", dir, "--filter", "sub:friend-requests", "--yes")
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "24h")
	var d struct {
		Blobs []struct {
			Name   string `json:"name"`
			Kind   string `json:"kind"`
			Events []struct {
				State  string `json:"state"`
				Passes []struct {
					Fate string `json:"fate"`
				} `json:"passes"`
			} `json:"events"`
		} `json:"blobs"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "twin", "diff", "--dir", dir, "--events", "-o", "json")), &d); err != nil {
		t.Fatal(err)
	}
	followed := 0
	for _, b := range d.Blobs {
		if !strings.HasPrefix(b.Name, "FRIEND-REQUESTS/") || b.Kind != "replayed" {
			continue
		}
		for _, e := range b.Events {
			followed++
			if e.State != "quarantined" || len(e.Passes) != 3 || e.Passes[0].Fate != "republished" {
				t.Errorf("%s: %+v", b.Name, e)
			}
		}
	}
	if followed == 0 {
		t.Fatalf("no drained friend-requests event followed: %+v", d.Blobs)
	}
	if text := mustRun(t, "twin", "diff", "--dir", dir, "--events"); !strings.Contains(text, "republished as |1") || !strings.Contains(text, "now quarantined") {
		t.Fatalf("%s", text)
	}
}

// A blob whose payload is malformed is named and said malformed — not "no blob is named so" — exit 1.
func TestTraceOfAMalformedBlob(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := "WEBHOOKS/2026/12/1/10/22222222-0000-0000-0000-000000000000.json"
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(`[{"id": `), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runCmd(t, "trace", "--dir", dir, "22222222")
	if code != exitFindings || !strings.Contains(errs, "malformed") || strings.Contains(errs, "no blob is named") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// drain --dry-run with --canary names the canaries, one a subscription; with --rate it says how long.
func TestDrainDryRunSaysTheCanariesAndThePace(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	_, errs, code := runCmd(t, "drain", "--dir", dir, "--dry-run", "--canary", "--rate", "2/s")
	if code != exitOK || !strings.Contains(errs, "--canary would drain first, one per subscription") ||
		!strings.Contains(errs, "--rate 2/s would take about") || !strings.Contains(errs, "in waves of 20") {
		t.Fatalf("exit %d:\n%s", code, errs)
	}
}
