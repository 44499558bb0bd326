package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/testkit"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// TestMain keeps what deadletter records about the directories the tests make (internal/made) in a state
// directory of the tests' own, for the in-process runs and the binary alike — and fails the run when a test left
// something behind: a process, a tmux server, a file in the package folder. The binary built for the tests goes
// with the run.
func TestMain(m *testing.M) {
	state, err := os.MkdirTemp("", "deadletter-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	testkit.WaitingParallelism()
	hygiene := testkit.TakeHygiene()
	code := m.Run()
	os.RemoveAll(state)
	left := testkit.KillTmuxServers(tmuxPrefix())
	if binPath != "" {
		if err := os.RemoveAll(filepath.Dir(binPath)); err != nil {
			left = append(left, "the test binary's folder: "+err.Error())
		} else if _, err := os.Stat(filepath.Dir(binPath)); err == nil {
			left = append(left, "the test binary's folder is still there: "+filepath.Dir(binPath))
		}
	}
	left = append(hygiene.Leftovers(), left...)
	for _, l := range left {
		fmt.Fprintln(os.Stderr, "test hygiene:", l)
	}
	if len(left) > 0 && code == 0 {
		code = 1
	}
	os.Exit(code)
}

func runCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	return out.String(), errb.String(), code
}

func mustRun(t *testing.T, args ...string) string { t.Helper(); return runExit(t, 0, args...) }

// runExit runs the command line and fails unless it exits with code.
func runExit(t *testing.T, code int, args ...string) string {
	t.Helper()
	out, errs, got := runCmd(t, args...)
	if got != code {
		t.Fatalf("deadletter %v: exit %d, want %d\n%s", args, got, code, errs)
	}
	return out
}

func seeded(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	mustRun(t, "seed", "--dir", dir)
	return dir
}

type lsOut struct {
	Container string           `json:"container"`
	Now       string           `json:"now"`
	Blobs     []map[string]any `json:"blobs"`
}

func lsJSONOf(t *testing.T, args ...string) lsOut {
	t.Helper()
	var l lsOut
	out := mustRun(t, append([]string{"ls", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("ls --json is not JSON: %v\n%s", err, out)
	}
	return l
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

var lsFields = []string{"ageSeconds", "error", "events", "expiresAt", "expiring", "handled", "lastModified", "malformed", "maxReplayAttempt", "maxReplayAttemptAtLeast", "name", "outcomes", "pane", "reasons", "size", "stalled", "untriggerable", "verdicts"}

func TestSeedLsCoversEveryPaneAndVerdict(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	l := lsJSONOf(t, "--dir", dir)
	if !strings.HasPrefix(l.Container, "dir:") {
		t.Fatalf("container %q", l.Container)
	}
	if _, err := time.Parse(time.RFC3339, l.Now); err != nil || !strings.HasSuffix(l.Now, "Z") {
		t.Fatalf("now %q is not RFC 3339 UTC", l.Now)
	}
	panes, verdicts := map[string]int{}, map[string]int{}
	malformed := 0
	handled, crash := 0, 0
	for _, b := range l.Blobs {
		got := keys(b)
		if _, ok := b["handledBy"]; ok {
			handled++
			got = slices.DeleteFunc(got, func(k string) bool { return k == "handledBy" })
		}
		if c, ok := b["crash"].(map[string]any); ok {
			crash++
			if c["depth"].(float64) <= rules.CertainStackDepth || !strings.Contains(c["reason"].(string), "JSON.stringify") {
				t.Fatalf("crash %v", c)
			}
			got = slices.DeleteFunc(got, func(k string) bool { return k == "crash" })
		}
		if !reflect.DeepEqual(got, lsFields) {
			t.Fatalf("ls blob fields %v, want %v", got, lsFields)
		}
		panes[b["pane"].(string)]++
		for v := range b["verdicts"].(map[string]any) {
			verdicts[v]++
		}
		if b["malformed"].(bool) {
			malformed++
			if e, _ := b["error"].(string); e == "" {
				t.Fatalf("malformed blob without its error: %v", b)
			}
		}
		for _, f := range []string{"lastModified", "expiresAt"} {
			if _, err := time.Parse(time.RFC3339, b[f].(string)); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
	}
	for _, p := range []string{"live", "stranded", "quarantine", "archived"} {
		if panes[p] == 0 {
			t.Errorf("no blob in pane %s: %v", p, panes)
		}
	}
	for _, v := range []string{"replay", "cap", "notIdempotent", "unroutable"} {
		if verdicts[v] == 0 {
			t.Errorf("no %s verdict: %v", v, verdicts)
		}
	}
	if malformed < 3 {
		t.Errorf("want malformed blobs of several kinds, got %d", malformed)
	}
	if handled < 2 || crash != 1 {
		t.Errorf("the incident has handled blobs and a crash: %d handled, %d crash", handled, crash)
	}
	q := lsJSONOf(t, "--dir", dir, "--pane", "quarantine")
	if len(q.Blobs) != panes["quarantine"] {
		t.Fatalf("--pane quarantine gave %d blobs, want %d", len(q.Blobs), panes["quarantine"])
	}
}

var eventFields = []string{"attemptAtLeast", "countReset", "deadLetterReason", "deliveryAttempts", "eventType", "id", "index", "lastDeliveryAttemptTime", "lastDeliveryOutcome", "lastHttpStatusCode", "originalId", "publishTime", "replayAttempt", "subject", "uncountable", "verdicts"}

func TestShowEverySeededBlob(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	uncountable := false
	for _, b := range lsJSONOf(t, "--dir", dir).Blobs {
		name := b["name"].(string)
		var s map[string]any
		if err := json.Unmarshal([]byte(mustRun(t, "show", name, "--dir", dir, "--json")), &s); err != nil {
			t.Fatal(err)
		}
		for _, f := range lsFields {
			if _, ok := s[f]; !ok {
				t.Fatalf("show %s lacks ls field %s", name, f)
			}
		}
		evs := s["events"].([]any)
		for _, e := range evs {
			if got := keys(e.(map[string]any)); !reflect.DeepEqual(got, eventFields) {
				t.Fatalf("event fields %v", got)
			}
			if e.(map[string]any)["uncountable"].(bool) {
				uncountable = true
			}
		}
		switch b["pane"] {
		case "live", "stranded":
			pv, ok := s["preview"].(map[string]any)
			if !ok {
				t.Fatalf("root blob %s without preview", name)
			}
			if c, ok := s["crash"].(map[string]any); ok {
				// A crash: the function throws before writing or deleting; the preview says only that.
				if _, ok := pv["republish"]; ok || pv["crash"] == nil || pv["deleteOriginal"] != false || c["depth"] == nil {
					t.Fatalf("crash preview of %s: %v", name, pv)
				}
				continue
			}
			for _, f := range []string{"republish", "quarantine", "publishRequests"} {
				if _, ok := pv[f]; !ok {
					t.Fatalf("preview lacks %s", f)
				}
			}
			if !b["malformed"].(bool) && len(evs) != len(pv["republish"].([]any))+len(pv["quarantine"].([]any)) {
				t.Fatalf("preview of %s does not account for every event", name)
			}
		case "quarantine":
			rp, ok := s["restore"].(map[string]any)
			if !ok || rp["target"] == nil || rp["resume"] == nil || rp["requarantine"] == nil {
				t.Fatalf("quarantine blob %s without restore prediction: %v", name, s["restore"])
			}
		}
		human := mustRun(t, "show", name, "--dir", dir)
		if !strings.Contains(human, "pane") {
			t.Fatalf("show %s: %s", name, human)
		}
	}
	if !uncountable {
		t.Error("the incident has an uncountable id; show --json never flagged it")
	}
}

func TestFlagsBeatEnvironmentBeatDefaults(t *testing.T) {
	dir := t.TempDir()
	d, _ := dirstore.Open(dir)
	d.Write(context.Background(), "S/a.json", []byte(`[]`), store.WriteOptions{})
	d.Backdate(context.Background(), "S/a.json", time.Now().Add(-30*time.Minute))
	pane := func(args ...string) string {
		return lsJSONOf(t, append([]string{"--dir", dir}, args...)...).Blobs[0]["pane"].(string)
	}
	if p := pane(); p != "live" {
		t.Fatalf("default TTL 60m: %s", p)
	}
	t.Setenv("DEADLETTER_TTL", "20m")
	if p := pane(); p != "stranded" {
		t.Fatalf("env TTL 20m: %s", p)
	}
	if p := pane("--ttl", "45m"); p != "live" {
		t.Fatalf("flag beats env: %s", p)
	}
	t.Setenv("DEADLETTER_TTL", "soon")
	if _, errs, code := runCmd(t, "ls", "--dir", dir); code != 2 || !strings.Contains(errs, "DEADLETTER_TTL") || !strings.Contains(errs, "'deadletter ls --help'") {
		t.Fatalf("bad env: %d %s", code, errs)
	}
	t.Setenv("DEADLETTER_TTL", "")
	// A container named by a flag beats one named in the environment, whichever backend each is.
	t.Setenv("AZURE_STORAGE_ACCOUNT_CONNECTION_STRING", "UseDevelopmentStorage=true")
	if p := pane(); p != "live" {
		t.Fatalf("--dir with a connection string exported: %s", p)
	}
	t.Setenv("DEADLETTER_DIR", dir)
	if _, errs, code := runCmd(t, "ls"); code != 2 || !strings.Contains(errs, "name two containers") ||
		!strings.Contains(errs, "AZURE_STORAGE_ACCOUNT_CONNECTION_STRING, DEADLETTER_DIR") {
		t.Fatalf("two containers from the environment: %d %s", code, errs)
	}
	t.Setenv("AZURE_STORAGE_ACCOUNT_CONNECTION_STRING", "")
	t.Setenv("DEADLETTER_DIR", "")
	if _, errs, code := runCmd(t, "ls", "--dir", dir, "--account-url", "https://a.blob.core.windows.net"); code != 2 || !strings.Contains(errs, "--dir and --account-url name two containers") {
		t.Fatalf("two containers from flags: %d %s", code, errs)
	}
	// Not a directory is said as that, not as a register that cannot be read.
	if _, errs, code := runCmd(t, "ls", "--dir", filepath.Join(dir, "S", "a.json")); code != 2 || !strings.Contains(errs, "is not a directory") {
		t.Fatalf("--dir on a file: %d %s", code, errs)
	}
	// The dashboard with no terminal says what to use instead.
	if _, errs, code := runCmd(t, "--dir", dir); code != 2 || !strings.Contains(errs, "draws on a terminal") {
		t.Fatalf("the dashboard with no terminal: %d %s", code, errs)
	}
	t.Setenv("DEADLETTER_READ_ONLY", "yes")
	if _, errs, code := runCmd(t, "ls", "--dir", dir); code != 2 || !strings.Contains(errs, "want true or false") {
		t.Fatalf("a bool from the environment: %d %s", code, errs)
	}
}

func TestBadHandlersFile(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	bad := filepath.Join(t.TempDir(), "h.json")
	os.WriteFile(bad, []byte(`{"ProcessWebhook": "no"}`), 0o644)
	_, errs, code := runCmd(t, "ls", "--dir", dir, "--handlers", bad)
	if code != 2 || !strings.Contains(errs, `"ProcessWebhook" is a string, want true`) || !strings.Contains(errs, bad) {
		t.Fatalf("%d %s", code, errs)
	}
}

func TestReadOnlyAndConfirmation(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	state := func() string { // names and ETags: what a write or delete would change
		d, _ := dirstore.Open(dir)
		l, _ := store.ListAll(context.Background(), d)
		var b strings.Builder
		for _, bi := range l.Blobs {
			b.WriteString(bi.Name + " " + bi.ETag + "\n")
		}
		return b.String()
	}
	before := state()
	for _, args := range [][]string{
		{"drain", "--dir", dir, "--read-only", "--yes"},
		{"restore", "quarantine/x.json", "--dir", dir, "--read-only", "--yes"},
		{"drain", "--dir", dir}, // no terminal, no --yes
	} {
		_, errs, code := runCmd(t, args...)
		if code != 2 || errs == "" {
			t.Fatalf("%v: exit %d %q", args, code, errs)
		}
	}
	if after := state(); after != before {
		t.Fatal("a refused command changed the container")
	}
	// A dry run changes nothing, so read-only allows it.
	if out, errs, code := runCmd(t, "drain", "--dir", dir, "--read-only", "--dry-run", "--yes"); code != 0 || !strings.Contains(out, "dry run, nothing changed") {
		t.Fatalf("read-only dry run: exit %d %s %s", code, out, errs)
	}
	if after := state(); after != before {
		t.Fatal("a read-only dry run changed the container")
	}
}

func TestDrainAndRestoreCommands(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	var res struct {
		DryRun  bool
		Results []struct{ Name, Outcome, Target, Error string }
	}
	// Blobs the replay already handled are left, passed by as a drain of every stranded blob does (exit 0).
	json.Unmarshal([]byte(runExit(t, 0, "drain", "--dir", dir, "--yes", "--json")), &res)
	if len(res.Results) == 0 {
		t.Fatal("nothing drained")
	}
	handled, crash := 0, 0
	for _, r := range res.Results {
		switch {
		case r.Outcome == "handled" && strings.Contains(r.Error, "--include-handled"):
			handled++
		case r.Outcome == "crash" && strings.Contains(r.Error, "name it with --force"):
			crash++ // passed by: the replay throws on it however often it is drained
		case r.Outcome != "drained":
			t.Fatalf("%+v", r)
		}
	}
	// What is left stranded is exactly what the replay had already handled, and the blob it crashes on.
	if n := len(lsJSONOf(t, "--dir", dir, "--pane", "stranded").Blobs); n != handled+crash || handled == 0 || crash != 1 {
		t.Fatalf("%d still stranded, %d skipped as handled, %d as crash", n, handled, crash)
	}
	var names []string
	for _, b := range lsJSONOf(t, "--dir", dir, "--pane", "quarantine").Blobs {
		names = append(names, b["name"].(string))
	}
	out, _, code := runCmd(t, append([]string{"restore", "--dir", dir, "--yes", "--json"}, names...)...)
	json.Unmarshal([]byte(out), &res)
	if code != 3 { // some are refused
		t.Fatalf("restore exit %d: %s", code, out)
	}
	got := map[string]int{}
	for _, r := range res.Results {
		got[r.Outcome]++
		if r.Outcome == "restored" && !strings.Contains(r.Target, ".restored-") {
			t.Fatalf("%+v", r)
		}
	}
	if got["restored"] == 0 || got["refused"] == 0 {
		t.Fatalf("restore outcomes %v", got)
	}
}

func TestHugeBlobIsRefusedNotRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "S"), 0o755)
	f, _ := os.Create(filepath.Join(dir, "S", "huge.json"))
	f.Truncate(store.MaxBlobBytes + 1)
	f.Close()
	l := lsJSONOf(t, "--dir", dir)
	if e, _ := l.Blobs[0]["error"].(string); !strings.Contains(e, "larger than 64 MiB") {
		t.Fatalf("ls: %v", l.Blobs[0])
	}
	out := mustRun(t, "show", "S/huge.json", "--dir", dir)
	if !strings.Contains(out, "NOT READ") {
		t.Fatalf("show: %s", out)
	}
	// A quarantine copy that size: its restore plan cannot be read, and the restore says so (it once panicked).
	os.MkdirAll(filepath.Join(dir, "quarantine", "S"), 0o755)
	os.Rename(filepath.Join(dir, "S", "huge.json"), filepath.Join(dir, "quarantine", "S", "huge.json"))
	out, errs, code := runCmd(t, "restore", "--dir", dir, "--dry-run", "--yes", "quarantine/S/huge.json")
	if code != 1 || !strings.Contains(errs, "not read") || !strings.Contains(out, "failed") {
		t.Fatalf("restore: exit %d\n%s\n%s", code, out, errs)
	}
}

// seed then ls/show against Azurite give the same panes, verdicts and previews as a directory seeded with the
// same scenario (times and ETags aside). Azure cannot backdate, so both run with a TTL every root blob passes.
func TestAzuriteMatchesDirectory(t *testing.T) {
	t.Parallel()
	cs := storetest.AzuriteConnectionString(t)
	az := storetest.Azure(t)
	container := strings.TrimPrefix(az.Describe(), "devstoreaccount1/")
	dir := t.TempDir()
	reg := filepath.Join(t.TempDir(), "handlers.json")
	common := []string{"--ttl", "2s", "--handlers", reg}
	azArgs := append([]string{"--connection-string", cs, "--container", container}, common...)
	dirArgs := append([]string{"--dir", dir}, common...)
	mustRun(t, append([]string{"seed", "--count", "10", "--register-out", reg}, azArgs...)...)
	mustRun(t, append([]string{"seed", "--count", "10", "--register-out", reg}, dirArgs...)...)
	// Azure's fresh blobs cannot be backdated: wait (bounded) until the service clock takes them past the TTL.
	for deadline := time.Now().Add(30 * time.Second); len(lsJSONOf(t, append([]string{"--pane", "live"}, azArgs...)...).Blobs) > 0; {
		if time.Now().After(deadline) {
			t.Fatal("Azurite's seeded blobs never passed the TTL")
		}
		time.Sleep(200 * time.Millisecond)
	}

	type row struct {
		Pane, Verdicts, Reasons string
		Events                  float64
		Malformed               bool
		Preview                 string
	}
	collect := func(args []string) map[string]row {
		m := map[string]row{}
		for _, b := range lsJSONOf(t, args...).Blobs {
			name := b["name"].(string)
			var s map[string]any
			json.Unmarshal([]byte(mustRun(t, append([]string{"show", name, "--json"}, args...)...)), &s)
			pv, _ := json.Marshal(s["preview"])
			v, _ := json.Marshal(b["verdicts"])
			r, _ := json.Marshal(b["reasons"])
			prefix := strings.SplitN(name, "/", 2)[0]
			m[prefix+"…"+path.Base(name)] = row{Pane: b["pane"].(string), Verdicts: string(v), Reasons: string(r), Events: b["events"].(float64), Malformed: b["malformed"].(bool), Preview: string(pv)}
		}
		return m
	}
	a, d := collect(azArgs), collect(dirArgs)
	if len(a) != len(d) || len(a) == 0 {
		t.Fatalf("azurite has %d blobs, directory %d", len(a), len(d))
	}
	for k, dv := range d {
		if av, ok := a[k]; !ok || !reflect.DeepEqual(av, dv) {
			t.Fatalf("%s differs:\nazurite   %+v\ndirectory %+v", k, av, dv)
		}
	}
}
