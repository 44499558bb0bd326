package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/testkit"
	"github.com/deadletter/deadletter/internal/twin"
)

// goldenNow is the wall-clock moment the golden twin opens at: its directory's clock stands there, so every
// command run on it reads one service time.
var goldenNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// goldenTwin is the incident's twin on a pinned clock, stopped: the fixture every JSON golden is taken on.
func goldenTwin(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "estate")
	tw, err := twin.Start(context.Background(), dir, made.Twin, "incident", 1, goldenNow)
	if err != nil {
		t.Fatal(err)
	}
	tw.Close()
	return dir
}

// unstable are the parts of a command's JSON no fixture pins: the temporary directory's path, and a run's id.
var unstable = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"(drainId|restoreId|runId)":"[^"]*"`), `"$1":"ID"`},
}

func normalized(t *testing.T, out, dir string) []byte {
	t.Helper()
	out = strings.ReplaceAll(out, dir, "DIR")
	if state := os.Getenv("XDG_STATE_HOME"); state != "" { // TestMain's, a temporary directory of its own
		out = strings.ReplaceAll(out, state, "STATE")
	}
	out = strings.ReplaceAll(out, filepath.Dir(filepath.Dir(dir)), "TMP")
	for _, u := range unstable {
		out = u.re.ReplaceAllString(out, u.with)
	}
	return []byte(out)
}

// jsonGolden runs one command line on the golden twin (and a config naming it) and compares its standard output
// with testdata/json/<name>.golden. The JSON a command prints is a contract (docs/json.md): a change here is
// additive, or listed in docs/json.md's changes with its reason — `go test ./cmd/deadletter -run TestJSONGoldens
// -update` rewrites them on purpose.
func jsonGolden(t *testing.T, dir, cfgPath string, code int, args ...string) {
	t.Helper()
	args = append(args, "--config", cfgPath)
	out, errs, got := runCmd(t, args...)
	if got != code {
		t.Fatalf("deadletter %v: exit %d, want %d\n%s%s", args, got, code, out, errs)
	}
	golden.RequireEqual(t, normalized(t, out, dir))
	o := slices.Clone(args)
	if c := slices.Index(o, "--json"); c >= 0 {
		o = slices.Concat(o[:c], []string{"-o", "json"}, o[c+1:])
	}
	if c := slices.Index(o, "--format"); c >= 0 {
		o[c] = "-o"
	}
	if !slices.Equal(o, args) && !writes(args) {
		if again, errs, _ := runCmd(t, o...); again != out {
			t.Errorf("deadletter %v prints other JSON than --json:\n%s%s", o, again, errs)
		}
	}
}

// writes says a command line changes the container, so is run once.
func writes(args []string) bool {
	return slices.Contains(args, "--yes") || slices.Contains(args, "advance")
}

func TestJSONGoldens(t *testing.T) {
	t.Parallel()
	dir := goldenTwin(t)
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	cfg := "current-context: golden\ncontexts:\n  - name: golden\n    dir: " + dir + "\n  - name: other\n    account-url: https://estate.blob.core.windows.net\n    container: dl\n    read-only: true\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// (Named by what they are, not by their GUIDs: a change to the incident's script draws other ones.)
	quarantine := firstName(t, dir, "--pane", "quarantine", "--subscription", "webhooks")
	ledger := firstName(t, dir, "--pane", "quarantine", "--subscription", "storage-ledger")
	strandedName := firstName(t, dir, "--pane", "stranded", "--subscription", "webhooks")
	for _, c := range []struct {
		name string
		code int
		args []string
	}{
		{"ls", 0, []string{"ls", "--json", "--pane", "stranded"}},
		{"ls-jsonl", 0, []string{"ls", "--jsonl", "--pane", "quarantine"}},
		{"check", 1, []string{"check", "--json"}},
		{"report", 0, []string{"report", "--format", "json"}},
		{"twin-status", 0, []string{"twin", "status", "--dir", dir, "--json"}},
		{"context-list", 0, []string{"context", "list"}},
		{"context-show", 0, []string{"context", "show", "other"}},
		{"context-list-json", 0, []string{"context", "list", "-o", "json"}},
		{"context-show-json", 0, []string{"context", "show", "other", "-o", "json"}},
		{"drain-dry-run", 0, []string{"drain", "--dry-run", "--json"}},
		{"restore-dry-run", 3, []string{"restore", "--all", "--subscription", "storage-ledger", "--dry-run", "--json"}},
		{"show", 0, []string{"show", quarantine, "--json"}},
		// (Writes into a directory of its own, not the container: once, with -o json.)
		{"export", 0, []string{"export", "--all", "--pane", "quarantine", "--subscription", "storage-ledger", "--to", filepath.Join(filepath.Dir(dir), "export"), "-o", "json"}},
		// The writes, last: each changes what the ones after it read.
		{"drain", 0, []string{"drain", strandedName, "--yes", "-o", "json"}},
		{"restore", 0, []string{"restore", quarantine, "--force", "--yes", "-o", "json"}},
		{"ack", 0, []string{"ack", ledger, "--for", "4h", "--note", "INC-1", "--yes", "-o", "json"}},
		{"twin-advance", 0, []string{"twin", "advance", "--dir", dir, "--by", "1h", "-o", "json"}},
	} {
		t.Run(c.name, func(t *testing.T) { jsonGolden(t, dir, cfgPath, c.code, c.args...) })
	}
}

// firstName is the first blob ls lists with args on dir.
func firstName(t *testing.T, dir string, args ...string) string {
	t.Helper()
	l := lsJSONOf(t, append([]string{"--dir", dir}, args...)...)
	if len(l.Blobs) == 0 {
		t.Fatalf("ls %v lists nothing", args)
	}
	return l.Blobs[0]["name"].(string)
}

// TestJSONGoldenWatch is watch's first pass on the golden twin: one state line per kind of finding check names.
func TestJSONGoldenWatch(t *testing.T) {
	t.Parallel()
	dir := goldenTwin(t)
	var c struct{ Findings []struct{ Kind string } }
	out, _, _ := runCmd(t, "check", "--dir", dir, "--json")
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, f := range c.Findings {
		kinds[f.Kind] = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &testkit.LockedBuffer{}
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"watch", "--dir", dir, "-o", "json", "--interval", "1h"}, stdio{in: strings.NewReader(""), out: w, err: w})
	}()
	for deadline := time.Now().Add(20 * time.Second); strings.Count(w.String(), `"event":"state"`) < len(kinds); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("watch printed %d state lines of %d:\n%s", strings.Count(w.String(), `"event":"state"`), len(kinds), w.String())
		}
	}
	cancel()
	<-done
	golden.RequireEqual(t, normalized(t, w.String(), dir))
}
