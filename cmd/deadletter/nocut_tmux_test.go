package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// brokenName is a line that ends inside a name broken at its hyphen (PUSH- / NOTIFICATIONS).
var brokenName = regexp.MustCompile(`[A-Z]{2,}-$`)

// Issue 51 in the real binary: at 80×24 and 120×40, the first screen, help, the record (L), the overview and a
// wrapped detail keep every line within the terminal, break no name at its hyphen, show the record's outcome
// for every blob, indent the advice they wrap, and cut the key line only with an ellipsis.
func TestNothingIsCutAt80x24And120x40InTmux(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "drain", "--dir", dir, "--filter", "sub:push-notifications", "--yes")
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		w, h := size[0], size[1]
		tm := newTerm(t, w, h, binary(t), "--dir", dir, "--interval", "1h")
		check := func(what, s string) {
			t.Helper()
			lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
			for i, l := range lines {
				l = strings.TrimRight(l, " ")
				if ansi.StringWidth(l) > w {
					t.Errorf("%dx%d %s, line %d is wider than the terminal: %q", w, h, what, i, l)
				}
				if brokenName.MatchString(l) {
					t.Errorf("%dx%d %s, line %d breaks a name at its hyphen: %q", w, h, what, i, l)
				}
			}
			if last := strings.TrimRight(lines[len(lines)-1], " "); ansi.StringWidth(last) >= w && !strings.HasSuffix(last, "…") {
				t.Errorf("%dx%d %s: the key line is cut without an ellipsis: %q", w, h, what, last)
			}
		}
		check("first screen", tm.screen("REHEARSAL", "[1 Stranded"))
		tm.keys("?")
		check("help", tm.screen("esc close"))
		tm.keys("Escape")
		tm.screen("[1 Stranded")
		tm.keys("L")
		s := tm.screen("The record", "drained")
		check("the record", s)
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "PUSH-NOTIFICATIONS/") && !strings.Contains(l, "drained") {
				t.Errorf("%dx%d the record: a blob's line without its outcome: %q", w, h, l)
			}
		}
		tm.keys("Escape")
		tm.screen("[1 Stranded")
		tm.keys("o")
		check("overview", tm.screen("Overview"))
		tm.keys("1")
		tm.screen("[1 Stranded")
		tm.keys("Enter")
		s = tm.screen("→ Drain it")
		check("detail", s)
		// Advice wraps under its own text: a line after an arrow's line is indented or another arrow.
		lines := strings.Split(s, "\n")
		for i := 1; i < len(lines); i++ {
			prev, l := strings.TrimRight(lines[i-1], " "), lines[i]
			if strings.HasPrefix(prev, "→ ") && ansi.StringWidth(prev) > w-12 && l != "" && !strings.HasPrefix(l, "  ") &&
				!strings.HasPrefix(l, "→") && !strings.HasPrefix(l, "replay:") {
				t.Errorf("%dx%d detail: advice wrapped to column 0: %q after %q", w, h, l, prev)
			}
		}
		tm.keys("Escape")
		tm.keys("q")
		if code := tm.exited(); code != 0 {
			t.Fatalf("%dx%d exit %d", w, h, code)
		}
	}
}
