package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
)

// estateView is what a command line says of a container, reduced to what must not move when files are planted:
// check's findings and exit code, every blob's pane and verdicts, and what a drain would do to each blob.
type estateView struct {
	CheckCode int
	Findings  []string
	Blobs     []string
	Drain     []string
}

func viewOf(t *testing.T, dir string) estateView {
	t.Helper()
	var v estateView
	m, code := checkJSONOf(t, "--dir", dir)
	v.CheckCode = code
	fs, _ := m["findings"].([]any)
	for _, f := range fs {
		f := f.(map[string]any)
		v.Findings = append(v.Findings, f["kind"].(string)+"="+jsonOf(f["count"]))
	}
	for _, b := range lsJSONOf(t, "--dir", dir).Blobs {
		v.Blobs = append(v.Blobs, b["name"].(string)+" "+b["pane"].(string)+" "+jsonOf(b["verdicts"]))
	}
	sort.Strings(v.Blobs)
	out, errs, _ := runCmd(t, "drain", "--dir", dir, "--dry-run", "--json")
	var d struct {
		Results []struct{ Name, Outcome string } `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("drain --dry-run --json: %v\n%s%s", err, out, errs)
	}
	for _, r := range d.Results {
		v.Drain = append(v.Drain, r.Name+" "+r.Outcome)
	}
	sort.Strings(v.Drain)
	return v
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// plant fills a directory's .deadletter folder with everything an older deadletter obeyed there — a clock forty
// days back, a register calling every handler idempotent, a twin's state, the demo's mark, a made-by id — as a
// hostile writer, or a copy of a container holding blobs of those names, would.
func plant(t *testing.T, dir string) {
	t.Helper()
	state := filepath.Join(dir, ".deadletter")
	os.MkdirAll(state, 0o755)
	back := time.Now().Add(-40 * 24 * time.Hour).UTC().Format(time.RFC3339)
	for name, body := range map[string]string{
		"clock.json":    `{"at":"` + back + `","wall":"` + time.Now().UTC().Format(time.RFC3339) + `","speed":0}`,
		"handlers.json": `{"ProcessPushNotification":true,"ProcessFriendRequest":true,"ProcessThreadReply":true,"ProcessWebhook":true,"ProcessBlobDeletion":true}`,
		"twin.json":     `{"scenario":"incident","seed":1,"start":"` + back + `","now":"` + back + `","queue":[{"sub":"webhooks","due":"` + back + `"}]}`,
		"state.json":    `{"format":1,"scenario":"incident"}`,
		"demo":          "x\n",
		"made":          "00000000000000000000000000000000\n",
	} {
		if err := os.WriteFile(filepath.Join(state, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A container is data, never configuration: files planted in a directory container's .deadletter folder change
// no finding, no exit code, no verdict and no drain; the directory is no twin, and the demo will not clear it.
func TestPlantedFilesSteerNothing(t *testing.T) {
	t.Parallel()
	real := t.TempDir()
	mustRun(t, "seed", "--dir", real, "--register-out", filepath.Join(t.TempDir(), "handlers.json"))
	before := viewOf(t, real)
	if before.CheckCode != 1 || len(before.Drain) == 0 {
		t.Fatalf("the seeded container is not the incident: %+v", before)
	}
	plant(t, real)
	if after := viewOf(t, real); !reflect.DeepEqual(before, after) {
		t.Fatalf("planted files changed what deadletter says:\nbefore %+v\nafter  %+v", before, after)
	}
	if _, errs, code := runCmd(t, "twin", "status", "--dir", real); code != 2 || !strings.Contains(errs, "is not a directory deadletter made") {
		t.Fatalf("twin status on a directory with a planted twin.json: exit %d %s", code, errs)
	}
	if _, errs, code := runCmd(t, "twin", "advance", "--dir", real, "--by", "1h"); code != 2 || !strings.Contains(errs, "is not a directory deadletter made") {
		t.Fatalf("twin advance on a directory with a planted twin.json: exit %d %s", code, errs)
	}
	n := len(before.Blobs)
	_, errs, code := runCmd(t, "demo", "--dir", real)
	if code != 2 || !strings.Contains(errs, "is not a demo deadletter made") {
		t.Fatalf("demo on a directory with a planted mark: exit %d %s", code, errs)
	}
	if got := len(lsJSONOf(t, "--dir", real).Blobs); got != n {
		t.Fatalf("demo touched the container: %d blobs, was %d", got, n)
	}
}

// The same, through the real binary on a terminal, where the old demo went on to delete the container: it
// refuses, exits 2, and every blob is still there.
func TestDemoRefusesAPlantedMarkInTmux(t *testing.T) {
	real := t.TempDir()
	mustRun(t, "seed", "--dir", real, "--register-out", filepath.Join(t.TempDir(), "handlers.json"))
	n := len(lsJSONOf(t, "--dir", real).Blobs)
	plant(t, real)
	tm := newTerm(t, 120, 30, binary(t), "demo", "--dir", real)
	if code := tm.exited(); code != 2 {
		t.Fatalf("demo on a planted mark: exit %d\n%s", code, tm.capture())
	}
	tm.screen("is not a demo deadletter made")
	if got := len(lsJSONOf(t, "--dir", real).Blobs); got != n {
		t.Fatalf("demo touched the container: %d blobs, was %d", got, n)
	}
}

// A seeded directory's register is the one deadletter keeps for it, outside it: the seed's verdicts hold, a
// register planted inside is not read, and a copy of the directory elsewhere (its mark and all) is not one
// deadletter made, so it is judged without a register until the operator names one.
func TestTheRegisterComesFromTheOperator(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	want := viewOf(t, dir)
	if !strings.Contains(strings.Join(want.Blobs, "\n"), `"notIdempotent"`) {
		t.Fatalf("the seed's register was not applied: %v", want.Blobs)
	}
	plant(t, dir)
	os.Remove(filepath.Join(dir, ".deadletter", "made")) // (plant's own id would unmake it: keep the real one)
	mustRun(t, "seed", "--dir", dir, "--count", "0")     // seeding again keeps the record and marks it again
	if w, g := verdictsByEvent(t, want.Blobs), verdictsByEvent(t, viewOf(t, dir).Blobs); !reflect.DeepEqual(w, g) {
		t.Fatalf("a planted register changed the verdicts:\nwant %v\ngot  %v", w, g)
	}
	copied := t.TempDir()
	if err := os.CopyFS(copied, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if got := viewOf(t, copied); strings.Contains(strings.Join(got.Blobs, "\n"), `"notIdempotent"`) {
		t.Fatalf("a copy of a seeded directory carried its register: %v", got.Blobs)
	}
}

// --speed is bounded: a speed that would run the clock backwards or out of range is a usage error, before any
// directory is touched.
func TestDemoSpeedIsBounded(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "demo")
	for _, s := range []string{"1e15", "NaN", "-1", "0", "+Inf"} {
		if _, errs, code := runCmd(t, "demo", "--dir", dir, "--speed", s); code != 2 || !strings.Contains(errs, "--speed") {
			t.Fatalf("demo --speed %s: exit %d %s", s, code, errs)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("the demo made its directory before refusing its speed")
	}
}

// verdictsByEvent keys viewOf's blob lines by where a blob sits and its file name, without the hour folder: a
// second seed names each blob by its age from its own clock, so one that runs across an hour boundary writes the
// same blob again under the next hour (it never overwrites). Two lines for one key must agree.
func verdictsByEvent(t *testing.T, blobs []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, b := range blobs {
		name, v, _ := strings.Cut(b, " ")
		parts := strings.Split(name, "/")
		key := parts[len(parts)-1]
		if !rules.IsRoot(name) {
			key = parts[0] + "/" + key
		}
		if old, ok := m[key]; ok && old != v {
			t.Fatalf("%s is judged two ways: %s and %s", key, old, v)
		}
		m[key] = v
	}
	return m
}
