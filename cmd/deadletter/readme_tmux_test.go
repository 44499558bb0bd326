package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's screenshot is the binary's: the demo's first screen (paused, so it holds still) at 120×24 — its
// first twelve lines and its key line — is what the README shows: the header, the alerts, the tabs, the columns
// and the key line word for word (times, counts and spacing aside), and as many rows (whose blobs and ages follow
// the time of day the twin starts at). DEADLETTER_UPDATE_README=1 writes the capture into the README.
func TestTheReadmeScreenshotIsTheBinarysInTmux(t *testing.T) {
	home, err := os.MkdirTemp("", "h")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	dir := filepath.Join(home, ".cache", "deadletter", "demo") // (shown as ~/.cache/deadletter/demo in the README)
	tm := newTerm(t, 120, 24, binary(t), "demo", "--dir", dir)
	tm.screen("REHEARSAL", "PAUSED", "[1 Stranded", "d drain", "▲CRASH")
	gone(tm, "reading payloads") // (the screen as it settles, every payload read)
	s := tm.screen("REHEARSAL", "PAUSED", "[1 Stranded", "d drain")
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for len(lines) < 24 {
		lines = append(lines, "")
	}
	var shot []string
	for _, l := range append(append(lines[:12:12], ""), lines[23]) {
		shot = append(shot, strings.TrimRight(dirWord.ReplaceAllString(l, "dir:~/.cache/deadletter/demo "), " "))
	}
	tm.keys("q")
	tm.exited()

	readme := filepath.Join(moduleDir(t), "README.md")
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```\n(deadletter REHEARSAL .*?)\n```")
	m := block.FindSubmatchIndex(b)
	if m == nil {
		t.Fatal("the README has no screenshot block")
	}
	if os.Getenv("DEADLETTER_UPDATE_README") != "" {
		out := string(b[:m[2]]) + strings.Join(shot, "\n") + string(b[m[3]:])
		if err := os.WriteFile(readme, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	// What the screen says, not what the clock and the counts are: letters and the marks, in order.
	words := regexp.MustCompile(`[^\pL▸▲]+`)
	norm := func(l string) string { return words.ReplaceAllString(l, " ") }
	have := strings.Split(string(b[m[2]:m[3]]), "\n")
	if len(have) != len(shot) {
		t.Fatalf("the README's screenshot has %d lines, the binary's first screen %d (DEADLETTER_UPDATE_README=1 rewrites it):\n%s", len(have), len(shot), strings.Join(shot, "\n"))
	}
	for i := range shot {
		if i >= 4 && i < 12 {
			continue // the rows: the incident's blobs, whose order and ages follow the time of day the twin starts at
		}
		if norm(have[i]) != norm(shot[i]) {
			t.Errorf("README screenshot line %d is\n%q\nthe binary shows\n%q\n(DEADLETTER_UPDATE_README=1 rewrites it)", i+1, have[i], shot[i])
		}
	}
}

// dirWord is the header's directory, cut or whole.
var dirWord = regexp.MustCompile(`dir:\S+(…\S+)?\s`)

// moduleDir is the module's root (where go.mod is), from the test's working directory.
func moduleDir(t *testing.T) string {
	t.Helper()
	d, _ := os.Getwd()
	for ; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	t.Fatal("no go.mod above the test")
	return ""
}
