package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One voice for a blob the replay function crashes on: check reports it once, as crash (never also stranded, never
// with "run deadletter drain"); a drain of every stranded blob passes it by with a note and exit 0 as far as it is
// concerned; drain NAME leaves it (crash, exit 3) and writes nothing; --force drains it.
func TestTheCrashBlobHasOneVoice(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	var crash string
	for _, b := range lsJSONOf(t, "--dir", dir, "--pane", "stranded").Blobs {
		if c, ok := b["crash"].(map[string]any); ok && c["depth"].(float64) > 0 {
			crash = b["name"].(string)
		}
	}
	if crash == "" {
		t.Fatal("the seeded incident has no crash blob in the stranded pane")
	}
	path := filepath.Join(dir, filepath.FromSlash(crash))
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st0, _ := os.Stat(path)

	// check: crash once, and no finding names it as stranded or tells to drain it.
	var rep struct {
		Findings []struct {
			Kind    string
			Count   int
			Message string
			Names   []string
		}
	}
	out, _, _ := runCmd(t, "check", "--dir", dir, "--json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range rep.Findings {
		for _, n := range f.Names {
			if n != crash {
				continue
			}
			seen++
			if f.Kind != "crash" {
				t.Errorf("the crash blob is also a %s finding: %s", f.Kind, f.Message)
			}
		}
	}
	if seen != 1 {
		t.Fatalf("check names the crash blob %d times:\n%s", seen, out)
	}
	said, _, _ := runCmd(t, "check", "--dir", dir, "-o", "wide")
	for _, line := range strings.Split(said, "\n") {
		if strings.Contains(line, "crash") && strings.Contains(line, "deadletter drain") {
			t.Fatalf("check tells to drain what the replay crashes on: %q", line)
		}
	}

	// Named: left, exit 3, nothing written.
	out, errs, code := runCmd(t, "drain", "--dir", dir, "--yes", crash)
	if code != 3 || !strings.Contains(out, "crash") || !strings.Contains(out, "--force does it anyway") {
		t.Fatalf("drain NAME of the crash blob: exit %d\n%s%s", code, out, errs)
	}
	after, _ := os.ReadFile(path)
	st1, _ := os.Stat(path)
	if string(after) != string(before) || !st1.ModTime().Equal(st0.ModTime()) {
		t.Fatal("drain NAME rewrote the crash blob it left")
	}

	// Every stranded blob: the crash blob passed by with a note, and not the reason for a non-zero exit (the
	// seeded incident's handled blobs still make it 3, so a second container without them says 0).
	out, errs, _ = runCmd(t, "drain", "--dir", dir, "--yes")
	if !strings.Contains(out, "note: 1 blob(s) the replay function crashes on passed by") || !strings.Contains(out, "name it with --force") {
		t.Fatalf("a drain of everything does not say it passed the crash blob by:\n%s%s", out, errs)
	}
	only := t.TempDir()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(only, filepath.FromSlash(crash))), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(only, filepath.FromSlash(crash)), before, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(only, filepath.FromSlash(crash)), st0.ModTime(), st0.ModTime())
	if out, errs, code := runCmd(t, "drain", "--dir", only, "--yes"); code != 0 || !strings.Contains(out, "1 crash") {
		t.Fatalf("a cron drain over only a crash blob: exit %d (want 0)\n%s%s", code, out, errs)
	}
	if _, _, code := runCmd(t, "drain", "--dir", only, "--yes", "--force"); code != 2 {
		t.Fatalf("--force without names: exit %d, want a usage error", code)
	}

	// --force drains it.
	if out, errs, code := runCmd(t, "drain", "--dir", dir, "--yes", "--force", crash); code != 0 || !strings.Contains(out, "1 drained") {
		t.Fatalf("drain --force NAME: exit %d\n%s%s", code, out, errs)
	}
}
