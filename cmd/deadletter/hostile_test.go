package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// hostileNames are the blob names the corpus is stored under, rotating: spaces, %, unicode, 1,024 characters,
// escape sequences, and prefixes that look like the replay's own but are at the root.
var hostileNames = []string{
	"WITH SPACE/2026/11/30/1/a b.json",
	"PCT/2026/11/30/1/100%25%zz.json",
	"ÜNÏCÖDE/2026/11/30/1/☃-名前.json",
	"LONG", // made exactly 1,024 characters long by longName
	"Archived/2026/11/30/1/look-alike.json",
	"archivedX/2026/11/30/1/look-alike.json",
	"QUARANTINE/2026/11/30/1/upper.json",
	"ESC/\x1b[2J\x1b]0;pwned\x07/x.json",
}

type corpusCase struct {
	file      string
	body      []byte
	malformed bool
	errHas    string
	events    int
	// crash is the depth of a payload the replay function throws on (0: it does not).
	crash int
}

// hostileCorpus is testdata/hostile plus what is too large to commit, generated.
func hostileCorpus(t *testing.T) []corpusCase {
	t.Helper()
	read := func(f string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hostile", f))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ev := `{"id":"big-%d","subject":"s","eventType":"ProcessPushNotification","dataVersion":"1","data":{},"deadLetterReason":"MaxDeliveryAttemptsExceeded"}`
	var batch []string
	for i := 0; i < 10000; i++ {
		batch = append(batch, strings.Replace(ev, "%d", strings.Repeat("x", i%7)+string(rune('a'+i%26))+itoa(i), 1))
	}
	huge := `[{"id":"huge","subject":"s","eventType":"ProcessPushNotification","dataVersion":"1","data":"` + strings.Repeat("A", 50<<20) + `"}]`
	return []corpusCase{
		{"not-json.json", read("not-json.json"), true, "JSON syntax error at byte offset", 0, 0},
		{"bom.json", read("bom.json"), true, "byte order mark", 1, 0},
		{"trailing-garbage.json", read("trailing-garbage.json"), true, "JSON syntax error at byte offset", 0, 0},
		{"null.json", read("null.json"), true, "not an array: the payload is null", 0, 0},
		{"empty-array.json", read("empty-array.json"), false, "", 0, 0},
		{"invalid-utf8.json", read("invalid-utf8.json"), false, "", 1, 0},
		{"numbers-for-strings.json", read("numbers-for-strings.json"), true, `field "id": want a string, got a number`, 1, 0},
		{"separator-odd.json", read("separator-odd.json"), false, "", 8, 0},
		{"cloudevents-msdocs-trailing-comma.json", read("cloudevents-msdocs-trailing-comma.json"), true, "JSON syntax error", 0, 0},
		{"namespace-binary-msdocs.json", read("namespace-binary-msdocs.json"), true, `field "id": missing`, 1, 0},
		{"eventgrid-blobcreated-msdocs.json", read("eventgrid-blobcreated-msdocs.json"), false, "", 1, 0},
		{"custom-schema-msdocs.json", read("custom-schema-msdocs.json"), false, "", 1, 0},
		// JSON.parse takes any depth: this is an array whose element is not an object, malformed by the schema.
		{"nesting-100000.json", []byte(strings.Repeat("[", 100000) + strings.Repeat("]", 100000)), true, "element 0: want an object, got an array", 0, 0},
		{"no-data.json", read("no-data.json"), true, `element 1, field "data": missing`, 2, 0},
		{"lone-surrogate-id.json", read("lone-surrogate-id.json"), false, "", 1, 0},
		{"batch-10000.json", []byte("[" + strings.Join(batch, ",") + "]"), false, "", 10000, 0},
		{"data-50MB.json", []byte(huge), false, "", 1, 0},
		// Valid, but nested past what JSON.stringify can serialize: the replay function throws on it.
		{"deep-data-5000.json", read("deep-data-5000.json"), false, "", 1, 5002},
	}
}

// longName is a blob name of exactly 1,024 characters (Azure's limit), in segments a file system can hold.
func longName(file string) string {
	prefix := strings.Repeat("L", 200) + "/" + strings.Repeat("o", 200) + "/" + strings.Repeat("n", 200) + "/" + strings.Repeat("g", 200) + "/"
	return prefix + strings.Repeat("x", 1024-len(prefix)-len(file)-1) + "-" + file
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func TestHostileCorpus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, _ := dirstore.Open(dir)
	place, err := made.Make(dir, made.Seed) // the register deadletter keeps for the directory, as a seed leaves it
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(place.Register(), []byte(`{"ProcessPushNotification": true, "ProcessWebhook": false}`), 0o600)
	corpus := hostileCorpus(t)
	byName := map[string]corpusCase{}
	for i, c := range corpus {
		name := hostileNames[i%len(hostileNames)]
		if name == "LONG" {
			name = longName(c.file)
		} else {
			name = strings.TrimSuffix(name, ".json") + "-" + strings.TrimSuffix(c.file, ".json") + ".json"
		}
		if _, err := d.Write(context.Background(), name, c.body, store.WriteOptions{}); err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		d.Backdate(context.Background(), name, time.Now().Add(-2*time.Hour))
		byName[name] = c
	}
	start := time.Now()
	l := lsJSONOf(t, "--dir", dir)
	if len(l.Blobs) != len(corpus) {
		t.Fatalf("ls listed %d of %d", len(l.Blobs), len(corpus))
	}
	for _, b := range l.Blobs {
		name := b["name"].(string)
		c := byName[name]
		if b["pane"] != "stranded" {
			t.Errorf("%s (%q): pane %v; look-alike prefixes are at the root", c.file, name, b["pane"])
		}
		e, _ := b["error"].(string)
		if b["malformed"] != c.malformed || !strings.Contains(e, c.errHas) || int(b["events"].(float64)) != c.events {
			t.Errorf("%s: malformed %v error %q events %v; want %v %q %d", c.file, b["malformed"], e, b["events"], c.malformed, c.errHas, c.events)
		}
		crash, hasCrash := b["crash"].(map[string]any)
		switch {
		case c.crash == 0 && hasCrash:
			t.Errorf("%s: ls says the replay crashes on it: %v", c.file, crash)
		case c.crash > 0 && (!hasCrash || crash["depth"] != float64(c.crash) || crash["reason"] == ""):
			t.Errorf("%s: ls crash %v, want depth %d with a reason", c.file, b["crash"], c.crash)
		}
		out, errs, code := runCmd(t, "show", name, "--dir", dir)
		if code != 0 || strings.ContainsAny(out+errs, "\x1b\x07") {
			t.Errorf("show %s: exit %d, raw control characters: %v\n%s", c.file, code, strings.ContainsAny(out, "\x1b\x07"), errs)
		}
		var sj map[string]any
		js, _, code := runCmd(t, "show", name, "--dir", dir, "--json")
		if code != 0 || json.Unmarshal([]byte(js), &sj) != nil {
			t.Errorf("show --json %s: exit %d", c.file, code)
		}
		pv, _ := sj["preview"].(map[string]any)
		if c.crash > 0 {
			// The function throws serializing the republish (its data is what nests): nothing republished or
			// quarantined, the original stays.
			top, _ := sj["crash"].(map[string]any)
			pc, _ := pv["crash"].(map[string]any)
			_, rep := pv["republish"]
			quar, _ := pv["quarantine"].([]any)
			if top == nil || top["depth"] != float64(c.crash) || pc == nil || pc["depth"] != float64(c.crash) || pc["stage"] != "publish" || pc["reason"] == "" ||
				rep || len(quar) != 0 || pv["deleteOriginal"] != false {
				t.Errorf("show --json %s: crash %v preview %v", c.file, top, pv)
			}
			if !strings.Contains(out, itoa(c.crash)) {
				t.Errorf("show %s does not say how deep it nests:\n%s", c.file, out)
			}
		} else if _, ok := pv["crash"]; ok {
			t.Errorf("show --json %s: a crash preview %v", c.file, pv)
		}
	}
	// The separator cases: every id parses as the estate parses it.
	for name, c := range byName {
		if c.file != "separator-odd.json" {
			continue
		}
		js, _, _ := runCmd(t, "show", name, "--dir", dir, "--json")
		var sj struct {
			Events []struct {
				ID, OriginalID string
				ReplayAttempt  float64
				Uncountable    bool
			}
		}
		json.Unmarshal([]byte(js), &sj)
		want := map[string][2]any{"|": {"|", 0}, "||": {"||", 0}, "a||2": {"a|", 2}, "|7": {"|7", 0}, "a|b|": {"a|b|", 0}, "x\n|1": {"x\n|1", 0}}
		for _, e := range sj.Events {
			if w, ok := want[e.ID]; ok && (e.OriginalID != w[0] || e.ReplayAttempt != float64(w[1].(int))) {
				t.Errorf("id %q: original %q attempt %v, want %v", e.ID, e.OriginalID, e.ReplayAttempt, w)
			}
			if e.ID == "x\n|1" && !e.Uncountable {
				t.Error("an id with a line terminator is uncountable")
			}
		}
	}
	// Restore each one from quarantine: malformed payloads are refused, nothing panics, nothing is lost.
	for name, c := range byName {
		q := "quarantine/" + strings.ReplaceAll(name, "\x1b", "ESC")
		if len(q) > 1024 {
			q = "quarantine/" + longName(c.file)[len("quarantine/"):]
		}
		if _, err := d.Write(context.Background(), q, c.body, store.WriteOptions{}); err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		out, _, code := runCmd(t, "restore", q, "--dir", dir, "--yes", "--json")
		var res struct {
			Results []struct{ Outcome, Error, Target string }
		}
		if json.Unmarshal([]byte(out), &res) != nil || len(res.Results) != 1 {
			t.Fatalf("restore %s: exit %d %s", c.file, code, out)
		}
		r := res.Results[0]
		switch {
		case c.malformed && r.Outcome != "refused":
			t.Errorf("restore of malformed %s: %+v", c.file, r)
		case c.crash > 0 && (r.Outcome != "refused" || !strings.Contains(r.Error, "crash")):
			t.Errorf("restore of %s, which the replay crashes on: %+v", c.file, r)
		case r.Outcome == "restored":
			if _, err := d.Stat(context.Background(), r.Target); err != nil {
				t.Errorf("%s restored to %s, which is missing", c.file, r.Target)
			}
		case r.Outcome == "refused":
			if _, err := d.Stat(context.Background(), q); err != nil {
				t.Errorf("a refused restore lost %s", q)
			}
		default:
			t.Errorf("restore %s: %+v", c.file, r)
		}
	}
	if time.Since(start) > 2*time.Minute {
		t.Fatalf("the corpus took %s: something is close to hanging", time.Since(start))
	}
}

func TestCheckOfAMissingDirectoryIsTwo(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "typo")
	if _, errs, code := runCmd(t, "check", "--dir", missing); code != 2 || !strings.Contains(errs, "typo") {
		t.Fatalf("check of a missing directory: exit %d %s", code, errs)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("check created the directory it was asked to look at")
	}
}

// A quarantine folder that is a symbolic link (moved to another disk, say) must not read as an empty quarantine
// and a healthy container: check says it could not look, and ls lists the link as refused.
func TestCheckWithASymlinkedQuarantineIsTwo(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	moved := filepath.Join(t.TempDir(), "quarantine")
	if err := os.Rename(filepath.Join(dir, "quarantine"), moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, filepath.Join(dir, "quarantine")); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCmd(t, "check", "--dir", dir)
	if code != 2 || !strings.Contains(errs, "quarantine") || !strings.Contains(errs, "symbolic link") {
		t.Fatalf("check: exit %d\n%s%s", code, out, errs)
	}
	out, _, code = runCmd(t, "check", "--dir", dir, "--json")
	var c struct {
		Healthy *bool
		Error   string
	}
	if code != 2 || json.Unmarshal([]byte(out), &c) != nil || c.Healthy == nil || *c.Healthy || !strings.Contains(c.Error, "symbolic link") {
		t.Fatalf("check --json: exit %d %s", code, out)
	}
	l := lsJSONOf(t, "--dir", dir)
	found := false
	for _, b := range l.Blobs {
		if b["name"] == "quarantine" {
			found = true
			if e, _ := b["error"].(string); !strings.Contains(e, "symbolic link") || b["ageSeconds"].(float64) > 3600 {
				t.Errorf("the link as ls lists it: %v", b)
			}
		}
	}
	if !found {
		t.Error("ls does not list the symlinked folder")
	}
}

func TestReadingWritesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "S"), 0o755)
	os.WriteFile(filepath.Join(dir, "S", "a.json"), []byte(`[]`), 0o644)
	mustRun(t, "ls", "--dir", dir)
	mustRun(t, "show", "S/a.json", "--dir", dir)
	runCmd(t, "check", "--dir", dir)
	if _, err := os.Stat(filepath.Join(dir, ".deadletter")); err == nil {
		t.Fatal("reading a snapshot wrote into it")
	}
}

// Nothing whose contents are unknown may read as healthy, on any screen: a FIFO (refused, never opened) and a
// payload over the size limit make check exit 2, report say healthy false with both counted as unreadable, and
// the dashboard raise UNREADABLE instead of its healthy line.
func TestUnreadableIsNeverHealthy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "SUB"), 0o755)
	storetest.Mkfifo(t, filepath.Join(dir, "SUB", "fifo.json"))
	big := make([]byte, store.MaxBlobBytes+1)
	copy(big, "[")
	if err := os.WriteFile(filepath.Join(dir, "SUB", "big.json"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runCmd(t, "check", "--dir", dir)
	if code != 2 || !strings.Contains(errs, "could not read 2 payload(s)") {
		t.Fatalf("check: exit %d %s", code, errs)
	}
	out, _, _ := runCmd(t, "report", "--dir", dir, "--format", "json")
	var r struct {
		Healthy    bool
		Unreadable int
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Healthy || r.Unreadable != 2 {
		t.Fatalf("report: %v %s", err, out)
	}
	out, _, _ = runCmd(t, "report", "--dir", dir)
	if strings.Contains(out, "- Healthy") || !strings.Contains(out, "2 blob(s) could not be read") {
		t.Fatalf("report markdown:\n%s", out)
	}
}

// demo never seeds fake dead letters into the operator's container: DEADLETTER_DIR is not the demo's directory,
// and a --dir that holds blobs (and is not an earlier demo) is refused.
func TestDemoLeavesRealContainersAlone(t *testing.T) {
	snapshot := seeded(t)
	before := lsJSONOf(t, "--dir", snapshot)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("DEADLETTER_DIR", snapshot)
	// No terminal: refused before anything is seeded — after the directory is chosen and checked, so a demo that
	// took DEADLETTER_DIR for its own would say it is not a demo directory.
	if _, errs, code := runCmd(t, "demo"); code != 2 || !strings.Contains(errs, "draws on a terminal") || strings.Contains(errs, "not a demo deadletter made") {
		t.Fatalf("demo with DEADLETTER_DIR set and no terminal: exit %d %s", code, errs)
	}
	if after := lsJSONOf(t, "--dir", snapshot); len(after.Blobs) != len(before.Blobs) {
		t.Fatalf("demo wrote into DEADLETTER_DIR: %d → %d blobs", len(before.Blobs), len(after.Blobs))
	}
	if ents, _ := os.ReadDir(os.Getenv("XDG_CACHE_HOME")); len(ents) != 0 {
		t.Fatalf("demo seeded with no terminal to show it: %v", ents)
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	if _, errs, code := runCmd(t, "demo", "--dir", file); code != 2 || !strings.Contains(errs, "is a file, not a directory") {
		t.Fatalf("demo --dir FILE: exit %d %s", code, errs)
	}
	_, errs, code := runCmd(t, "demo", "--dir", snapshot)
	if code != 2 || !strings.Contains(errs, "is not a demo deadletter made") {
		t.Fatalf("demo --dir on a real container: exit %d %s", code, errs)
	}
}

// seed never overwrites a handler register it did not write (it may be the estate's real one): refused before a
// blob is written, unless --force; its own register again is fine.
func TestSeedKeepsAForeignRegister(t *testing.T) {
	t.Parallel()
	reg := filepath.Join(t.TempDir(), "handlers.json")
	os.WriteFile(reg, []byte(`{"ProcessPayment": false}`), 0o644)
	dir := filepath.Join(t.TempDir(), "c")
	_, errs, code := runCmd(t, "seed", "--dir", dir, "--register-out", reg)
	if b, _ := os.ReadFile(reg); code != 2 || string(b) != `{"ProcessPayment": false}` || !strings.Contains(errs, "is not the scenario's register") {
		t.Fatalf("seed over a foreign register: exit %d %s %s", code, errs, b)
	}
	if _, err := os.Stat(dir); err == nil {
		if l := lsJSONOf(t, "--dir", dir); len(l.Blobs) != 0 {
			t.Fatal("blobs were seeded before the refusal")
		}
	}
	mustRun(t, "seed", "--dir", dir, "--register-out", reg, "--force")
	mustRun(t, "seed", "--dir", dir, "--register-out", reg) // its own register now: fine
}

// What an action asks about is what it will write, and every blob it considers is in its report: an entry that
// cannot be read (a FIFO) is tried by a drain but not counted as drained, restore --all reports it as a result,
// and a named restore neither asks about nor counts a blob it refuses.
func TestActionsReportWhatTheyCannotRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := time.Now().Add(-72 * time.Hour)
	ev := func(typ string) string {
		return `[{"id":"e1|2","subject":"s","eventType":"` + typ + `","dataVersion":"1","data":null}]`
	}
	at := func(name string) string {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		return p
	}
	for name, body := range map[string]string{"S/2026/1/1/1/a.json": ev("A"), "quarantine/S/2026/1/1/1/b.json": ev("A"),
		"quarantine/S/2026/1/1/1/n.json": ev("B")} {
		if err := os.WriteFile(at(name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(at(name), old, old)
	}
	for _, name := range []string{"S/2026/1/1/1/fifo.json", "quarantine/S/2026/1/1/1/fifo.json"} {
		storetest.Mkfifo(t, at(name))
		os.Chtimes(at(name), old, old)
	}
	handlers := filepath.Join(t.TempDir(), "handlers.json")
	os.WriteFile(handlers, []byte(`{"A":true,"B":false}`), 0o644)

	// A FIFO is not a blob: refused, said so, and neither asked about nor tried.
	out, errs, code := runCmd(t, "drain", "--dir", dir, "--handlers", handlers, "--dry-run")
	if code != 3 || !strings.Contains(errs, "1 blob(s) to drain") || !strings.Contains(out, "1 would drain, 1 refused") ||
		!strings.Contains(out, "refused       S/2026/1/1/1/fifo.json: not a blob deadletter will read or rewrite") {
		t.Fatalf("drain: exit %d\n%s%s", code, errs, out)
	}

	out, errs, code = runCmd(t, "restore", "--all", "--dir", dir, "--handlers", handlers, "--dry-run", "--json")
	var res struct {
		Results []struct{ Name, Outcome string }
	}
	got := map[string]string{}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("restore --all: %v %s", err, out)
	}
	for _, r := range res.Results {
		got[path.Base(r.Name)] = r.Outcome
	}
	if code != 3 || len(got) != 3 || got["b.json"] != "wouldRestore" || got["n.json"] != "refused" || got["fifo.json"] != "refused" {
		t.Fatalf("restore --all: exit %d %v\n%s", code, got, errs)
	}

	// By name, a refused blob is explained and reported, never asked about: off a terminal, with nothing to
	// write, no --yes is needed and nothing changes.
	out, errs, code = runCmd(t, "restore", "--dir", dir, "--handlers", handlers, "quarantine/S/2026/1/1/1/n.json")
	if code != 3 || !strings.Contains(out, "refused") || !strings.Contains(errs, "1 blob(s) are refused or unreadable") {
		t.Fatalf("restore of a refused blob: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(at("quarantine/S/2026/1/1/1/n.json")); err != nil {
		t.Fatal("the refused copy moved")
	}
	others := rules.Tally{rules.OutcomeRefused: 1, rules.OutcomeFailed: 2}
	if q := present.RestoreQuestion(1, others, "blob(s)"); q != "Restore 1 of 4 blob(s)? (1 refused, 2 could not be read: left where they are)" {
		t.Fatal(q)
	}
}

// Files the operator names are read only when they are regular files of sane size: a FIFO does not hang the
// command, /dev/zero is not read without end, seed does not write into a FIFO.
func TestOperatorFilesMustBeRegular(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	storetest.Mkfifo(t, fifo)
	big := filepath.Join(t.TempDir(), "big.json")
	os.WriteFile(big, bytes.Repeat([]byte(" "), 2<<20), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--dir", dir, "--handlers", fifo}, "is a FIFO, not a regular file"},
		{[]string{"check", "--dir", dir, "--handlers", "/dev/zero"}, "is a device, not a regular file"},
		{[]string{"check", "--dir", dir, "--handlers", big}, "is over 1.0 MiB"},
		{[]string{"seed", "--dir", t.TempDir(), "--register-out", fifo}, "is a FIFO, not a regular file"},
	} {
		start := time.Now()
		_, errs, code := runCmd(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || time.Since(start) > 10*time.Second {
			t.Errorf("%v: exit %d after %s: %s", c.args, code, time.Since(start), errs)
		}
	}
}
