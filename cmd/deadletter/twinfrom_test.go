package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

// failingOf is what report says of the readiness: the subscriptions failing.
func failingOf(t *testing.T, args ...string) []string {
	t.Helper()
	var r struct {
		Readiness []struct {
			Subscription string `json:"subscription"`
			Failing      bool   `json:"failing"`
		} `json:"readiness"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, append([]string{"report", "--format", "json"}, args...)...)), &r); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, x := range r.Readiness {
		if x.Failing {
			out = append(out, x.Subscription)
		}
	}
	sort.Strings(out)
	return out
}

// downOf is what twin script show says is down now, until further notice.
func downOf(t *testing.T, dir string) []string {
	t.Helper()
	var s struct {
		Script []output.WindowJSON `json:"script"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "twin", "script", "show", "--dir", dir, "-o", "json")), &s); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, w := range s.Script {
		if w.Now && w.To == "" {
			out = append(out, w.Who)
		}
	}
	sort.Strings(out)
	return out
}

// sameListing compares two ls --json listings blob by blob: names, sizes, Last-Modified, panes and what the
// payloads say; the ages differ by exactly the time between the two clocks.
func sameListing(t *testing.T, src, tw lsOut) {
	t.Helper()
	if len(src.Blobs) == 0 || len(src.Blobs) != len(tw.Blobs) {
		t.Fatalf("the source lists %d blobs, the twin %d", len(src.Blobs), len(tw.Blobs))
	}
	srcNow, _ := time.Parse(time.RFC3339, src.Now)
	twNow, _ := time.Parse(time.RFC3339, tw.Now)
	drift := srcNow.Sub(twNow).Seconds()
	for i := range src.Blobs {
		a, b := src.Blobs[i], tw.Blobs[i]
		if d := a["ageSeconds"].(float64) - b["ageSeconds"].(float64); d < drift-1 || d > drift+1 {
			t.Errorf("%s: age %v in the source, %v in the twin, clocks %s apart", a["name"], a["ageSeconds"], b["ageSeconds"], srcNow.Sub(twNow))
		}
		for _, k := range []string{"ageSeconds", "expiring", "expiresAt"} {
			delete(a, k)
			delete(b, k)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("blob %d differs:\nsource %v\ntwin   %v", i, a, b)
		}
	}
}

// twin start --from a seeded Azurite container: the twin lists as the source does (names, sizes, ages, panes,
// verdicts — its register copied), the source's ETags are unchanged, the twin is the operator's only (0700) and
// keeps no credential, and the inferred script marks down exactly what the readiness says is failing.
func TestTwinFromAzurite(t *testing.T) {
	t.Parallel()
	cs := storetest.AzuriteConnectionString(t)
	az := storetest.Azure(t)
	container := strings.TrimPrefix(az.Describe(), "devstoreaccount1/")
	reg := filepath.Join(t.TempDir(), "handlers.json")
	src := []string{"--connection-string", cs, "--container", container, "--handlers", reg}
	mustRun(t, append([]string{"seed", "--count", "12", "--register-out", reg}, src...)...)
	etags := func() map[string]string {
		l, err := store.ListAll(context.Background(), az)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, b := range l.Blobs {
			m[b.Name] = b.ETag
		}
		return m
	}
	before := etags()
	dir := filepath.Join(t.TempDir(), "twin")
	var started output.TwinStartJSON
	out := mustRun(t, "twin", "start", "--dir", dir, "--from", cs, "--container", container, "--handlers", reg, "-o", "json")
	if err := json.Unmarshal([]byte(out), &started); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if started.Blobs != len(before) {
		t.Fatalf("copied %d blobs of %d", started.Blobs, len(before))
	}
	sameListing(t, lsJSONOf(t, src...), lsJSONOf(t, "--dir", dir))
	if after := etags(); !reflect.DeepEqual(before, after) {
		t.Fatal("the source's ETags changed: twin start --from wrote to it")
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the twin's directory: %v %v, want 0700", fi.Mode(), err)
	}
	status := mustRun(t, "twin", "status", "--dir", dir, "--json")
	if strings.Contains(status, "Eby4vDM") || strings.Contains(status, "AccountKey") {
		t.Fatal("twin status holds the source's key")
	}
	if got, want := downOf(t, dir), failingOf(t, src...); !reflect.DeepEqual(got, want) {
		t.Fatalf("the inferred script has %v down, the readiness says %v failing", got, want)
	}
}

// The question a twin answers: on a twin of the incident, webhooks brought up in half an hour, drain, three
// hours on — twin diff names every drained blob's fate, and it is what show predicted before the drain
// (replayed, quarantined, or — crashing — stranded again), the drain's run id beside it.
func TestTwinFromDrainAdvanceDiff(t *testing.T) {
	t.Parallel()
	src := seeded(t)
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir, "--from", src)
	sameListing(t, lsJSONOf(t, "--dir", src), lsJSONOf(t, "--dir", dir))
	if got, want := downOf(t, dir), failingOf(t, "--dir", src); !reflect.DeepEqual(got, want) || len(want) == 0 {
		t.Fatalf("the inferred script has %v down, the readiness says %v failing", got, want)
	}
	mustRun(t, "twin", "script", "set", "webhooks", "up", "--at", "+30m", "--dir", dir)
	predicted := map[string]string{}
	for _, b := range lsJSONOf(t, "--dir", dir, "--pane", "stranded").Blobs {
		name := b["name"].(string)
		var s struct {
			Preview map[string]any `json:"preview"`
		}
		json.Unmarshal([]byte(mustRun(t, "show", name, "--json", "--dir", dir)), &s)
		switch {
		case s.Preview["crash"] != nil:
			predicted[name] = "stranded"
		case s.Preview["archiveName"] != nil:
			predicted[name] = "replayed"
		case s.Preview["quarantineName"] != nil:
			predicted[name] = "quarantined"
		default:
			t.Fatalf("show predicts nothing of %s: %v", name, s.Preview)
		}
	}
	var drained output.ResultsJSON
	// (the blobs the replay crashes on or handled already are passed by, as every drain of all stranded blobs does)
	json.Unmarshal([]byte(runExit(t, 0, "drain", "--yes", "--json", "--dir", dir)), &drained)
	mustRun(t, "twin", "advance", "--by", "3h", "--dir", dir)
	var d output.DiffJSON
	if err := json.Unmarshal([]byte(mustRun(t, "twin", "diff", "-o", "json", "--dir", dir)), &d); err != nil {
		t.Fatal(err)
	}
	fates := map[string]output.DiffBlobJSON{}
	for _, b := range d.Blobs {
		fates[string(b.Name)] = b
	}
	n, kinds := 0, map[string]bool{}
	for _, r := range drained.Results {
		if r.Outcome != "drained" {
			continue
		}
		n++
		name := string(r.Name)
		f, ok := fates[name]
		switch {
		case !ok:
			t.Fatalf("twin diff says nothing of drained %s", name)
		case f.Kind != predicted[name]:
			t.Errorf("%s: %s (%s); show predicted %s", name, f.Kind, f.Fate, predicted[name])
		case len(f.Actions) == 0 || !strings.Contains(string(f.Actions[0]), "drain at"):
			t.Errorf("%s: the drain that led there is not named: %v", name, f.Actions)
		case !f.Changed:
			t.Errorf("%s: %s, yet not changed", name, f.Kind)
		}
		kinds[f.Kind] = true
	}
	if n == 0 || !kinds["replayed"] || !kinds["quarantined"] {
		t.Fatalf("%d drained, fates %v: the incident should have both replayed and quarantined", n, kinds)
	}
}

// twin rm removes a twin deadletter made, and refuses anything else, leaving it as it is.
func TestTwinRm(t *testing.T) {
	t.Parallel()
	other := seeded(t)
	out, errs, code := runCmd(t, "twin", "rm", "--dir", other)
	if code == 0 || !strings.Contains(errs, "twin rm removes only a twin deadletter made") {
		t.Fatalf("twin rm of a seeded directory: exit %d\n%s%s", code, out, errs)
	}
	plain := t.TempDir()
	os.WriteFile(filepath.Join(plain, "keep.json"), []byte("[]"), 0o600)
	if _, _, code := runCmd(t, "twin", "rm", "--dir", plain); code == 0 {
		t.Fatal("twin rm removed a directory deadletter did not make")
	}
	if _, err := os.Stat(filepath.Join(plain, "keep.json")); err != nil {
		t.Fatal("twin rm touched a directory it refused")
	}
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir, "--from", other)
	mustRun(t, "twin", "rm", "--dir", dir)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the twin is still there: %v", err)
	}
	if _, _, code := runCmd(t, "twin", "status", "--dir", dir); code == 0 {
		t.Fatal("twin status after rm")
	}
}

// twin script set's grammar: a subscription in any case or replay, down|up, --at/--until as times or +DURATION,
// --status with down only; what it refuses is a usage error naming the choices, and the script is unchanged.
func TestTwinScriptSetGrammar(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, "twin", "start", "--dir", dir)
	before := mustRun(t, "twin", "script", "show", "--dir", dir, "-o", "json")
	for _, bad := range [][]string{
		{"nope", "down"}, {"webhooks", "sideways"}, {"webhooks", "up", "--status", "500"}, {"webhooks", "down", "--status", "42"},
		{"webhooks", "down", "--at", "soon"}, {"webhooks", "down", "--at", "+1h", "--until", "+30m"},
	} {
		_, errs, code := runCmd(t, append([]string{"twin", "script", "set", "--dir", dir}, bad...)...)
		if code != 2 {
			t.Errorf("twin script set %v: exit %d\n%s", bad, code, errs)
		}
	}
	if _, errs, _ := runCmd(t, "twin", "script", "set", "webhooks", "down", "--at", "9999-01-01T00:00:00Z", "--dir", dir); !strings.Contains(errs, "past the far end") {
		t.Errorf("an --at past the script's end, no --until: %s", errs)
	}
	if _, errs, _ := runCmd(t, "twin", "script", "set", "nope", "down", "--dir", dir); !strings.Contains(errs, "webhooks") || !strings.Contains(errs, "replay") {
		t.Errorf("an unknown subscription does not list the choices: %s", errs)
	}
	if got := mustRun(t, "twin", "script", "show", "--dir", dir, "-o", "json"); got != before {
		t.Fatal("a refused change changed the script")
	}
	mustRun(t, "twin", "script", "set", "Friend-Requests", "down", "--status", "0", "--until", "+2h", "--dir", dir)
	mustRun(t, "twin", "script", "set", "REPLAY", "down", "--at", "+10m", "--dir", dir)
	out := mustRun(t, "twin", "script", "show", "--dir", dir)
	if !strings.Contains(out, "friend-requests") || !strings.Contains(out, "TimedOut") || !strings.Contains(out, "replay") || !strings.Contains(out, "until further notice") {
		t.Fatalf("script show after the changes:\n%s", out)
	}
	if _, _, code := runCmd(t, "twin", "script", "show", "--dir", dir, "-o", "yaml"); code != 2 {
		t.Fatal("-o yaml is not a usage error")
	}
}

// Every command on a twin's directory judges by the rules the twin was started with — the TTL that decides its
// panes, the lifecycle rule that decides what check says is expiring — and a rule flag that contradicts them is a
// usage error naming the twin's value (found by a fresh-eyes test: ls showed as live the blobs the twin had
// dropped, and drain planned fewer drains than the twin's TTL makes stranded).
func TestCommandsJudgeByTheTwinsRules(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t8")
	mustRun(t, "twin", "start", "--dir", dir, "--ttl", "20m", "--scenario", "replay-stopped")
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "50m")
	plain := mustRun(t, "ls", "--dir", dir, "--json")
	if given := mustRun(t, "ls", "--dir", dir, "--json", "--ttl", "20m"); plain != given {
		t.Fatalf("ls on the twin judges by other rules than the twin's --ttl 20m:\n%s\nwith --ttl 20m:\n%s", plain, given)
	}
	if a, b := mustRun(t, "drain", "--dry-run", "--json", "--dir", dir), mustRun(t, "drain", "--dry-run", "--json", "--dir", dir, "--ttl", "20m"); a != b {
		t.Fatalf("drain --dry-run plans by other rules than the twin's:\n%s\nwith --ttl 20m:\n%s", a, b)
	}
	_, errs, code := runCmd(t, "ls", "--dir", dir, "--ttl", "1h")
	if code != 2 || !strings.Contains(errs, "runs by --ttl 20m") {
		t.Fatalf("a --ttl that contradicts the twin's: exit %d\n%s", code, errs)
	}
	t.Setenv("DEADLETTER_RETENTION", "10d")
	if _, errs, code := runCmd(t, "check", "--dir", dir); code != 2 || !strings.Contains(errs, "runs by --retention 30d") {
		t.Fatalf("a retention from the environment that contradicts the twin's: exit %d\n%s", code, errs)
	}
}

// twin script set cannot rewrite what the twin has run: a change that ends before its clock is refused, saying
// the clock, and records nothing; one that starts before it starts at the clock. A --status Event Grid takes as
// delivered (200–204) is refused: a handler answering it is up (found by a fresh-eyes test: an outage that never
// ran was listed, and a twin dead-lettered events answered 200).
func TestTwinScriptSetKeepsThePast(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "t2")
	mustRun(t, "twin", "start", "--dir", dir)
	var st output.TwinStatusJSON
	json.Unmarshal([]byte(mustRun(t, "twin", "status", "--dir", dir, "--json")), &st)
	clock, _ := time.Parse(time.RFC3339, st.Clock)
	before := mustRun(t, "twin", "script", "show", "--dir", dir, "-o", "json")
	past := func(d time.Duration) string { return clock.Add(-d).Format(time.RFC3339) }
	_, errs, code := runCmd(t, "twin", "script", "set", "thread-replies", "down", "--at", past(2*time.Hour), "--until", past(time.Hour), "--dir", dir)
	if code != 2 || !strings.Contains(errs, "clock stands at "+st.Clock) {
		t.Fatalf("a change wholly in the past: exit %d\n%s", code, errs)
	}
	// an --until in the past with no --at (which is then the clock) says the clock too, not an --at never given
	if _, errs, code := runCmd(t, "twin", "script", "set", "webhooks", "up", "--until", past(time.Hour), "--dir", dir); code != 2 || !strings.Contains(errs, "clock stands at "+st.Clock) {
		t.Fatalf("an --until in the past: exit %d\n%s", code, errs)
	}
	for _, s := range []string{"200", "204", "100"} {
		if _, errs, code := runCmd(t, "twin", "script", "set", "webhooks", "down", "--status", s, "--dir", dir); code != 2 {
			t.Fatalf("--status %s: exit %d\n%s", s, code, errs)
		}
	}
	if got := mustRun(t, "twin", "script", "show", "--dir", dir, "-o", "json"); got != before {
		t.Fatal("a refused change changed the script")
	}
	if out := mustRun(t, "log", "--dir", dir); strings.Contains(out, "thread-replies") {
		t.Fatalf("a refused change was recorded:\n%s", out)
	}
	out, errs, code := runCmd(t, "twin", "script", "set", "thread-replies", "down", "--status", "404", "--at", past(time.Hour), "--until", "+1h", "--dir", dir, "-o", "json")
	if code != 0 || !strings.Contains(errs, "starts at the clock") {
		t.Fatalf("a change begun in the past: exit %d\n%s%s", code, out, errs)
	}
	var s struct {
		Script []output.WindowJSON `json:"script"`
	}
	json.Unmarshal([]byte(out), &s)
	found := false
	for _, w := range s.Script {
		if w.Who == "thread-replies" && w.Status == 404 {
			found = true
			if w.From != st.Clock {
				t.Fatalf("the change begun in the past starts at %s, not the clock %s", w.From, st.Clock)
			}
		}
	}
	if !found {
		t.Fatalf("no thread-replies window after the change: %s", out)
	}
	mustRun(t, "twin", "script", "set", "webhooks", "down", "--status", "205", "--until", "+1h", "--dir", dir)
}

// twin diff's text lists exactly the blobs its JSON marks changed — none right after the start, when every blob
// is where it was (found by a fresh-eyes test: 25 "stranded again" lines of blobs JSON marked unchanged) — and,
// after a drain and an hour, the drained ones; --all lists every blob.
func TestTwinDiffTextShowsWhatChanged(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "t1")
	mustRun(t, "twin", "start", "--dir", dir)
	same := func(wantSome bool) {
		t.Helper()
		var d output.DiffJSON
		if err := json.Unmarshal([]byte(mustRun(t, "twin", "diff", "-o", "json", "--dir", dir)), &d); err != nil {
			t.Fatal(err)
		}
		var changed []string
		for _, b := range d.Blobs {
			if b.Changed {
				changed = append(changed, string(b.Name))
			}
		}
		var listed []string
		lines := strings.Split(strings.TrimSpace(mustRun(t, "twin", "diff", "--dir", dir)), "\n")
		for _, l := range lines[1 : len(lines)-1] {
			if !strings.HasPrefix(l, " ") {
				listed = append(listed, strings.Fields(l)[1])
			}
		}
		sort.Strings(changed)
		sort.Strings(listed)
		if !reflect.DeepEqual(changed, listed) || wantSome != (len(changed) > 0) {
			t.Fatalf("JSON marks %d changed %v; the text lists %d %v", len(changed), changed, len(listed), listed)
		}
		all := strings.Split(strings.TrimSpace(mustRun(t, "twin", "diff", "--all", "--dir", dir)), "\n")
		if got := (len(all) - 2) / 2; got != len(d.Blobs) {
			t.Fatalf("--all lists %d blob(s) of %d", got, len(d.Blobs))
		}
	}
	same(false)
	runCmd(t, "drain", "--yes", "--dir", dir)
	mustRun(t, "twin", "advance", "--by", "1h", "--dir", dir)
	same(true)
}
