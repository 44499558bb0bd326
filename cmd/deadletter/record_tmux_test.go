package main

import (
	"regexp"
	"strings"
	"testing"
)

// In tmux, L shows the record — a drain done on the command line, by whom — and enter on a drained blob's row
// opens it where it is now: two hours of twin time later, the replay's archived/ or quarantine/ copy.
func TestTheRecordInTmux(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "twin", "start", "--dir", dir)
	said := regexp.MustCompile(`(\d+) drained`).FindStringSubmatch(mustRun(t, "drain", "--dir", dir, "--yes"))
	if said == nil {
		t.Fatal("the drain did not say how many it drained")
	}
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "2h")
	tm := newTerm(t, 140, 45, binary(t), "--dir", dir, "--interval", "1h")
	tm.screen("[1 Stranded")
	tm.keys("L")
	// as many drained as the drain said
	tm.screen("The record: every action on", "drain by", "(you)", "deadletter drain --dir --yes", said[0], "times on the twin's clock") // (the clock, said once)
	tm.keys("j")                                                                                                                        // the first drained blob, whole under the cursor
	// (Only the row under the cursor is whole: the others are cut before their fate's words end.) Wait for the
	// cursor to reach it: the key may land after a first capture.
	s := tm.screenMatches(`(replayed: archived|taken by the replay and quarantined) at \d{4}-`)
	m := regexp.MustCompile(`(replayed: archived|taken by the replay and quarantined) at \d{4}-`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("the drained blob's row does not say where it went:\n%s", s)
	}
	tm.keys("Enter")
	want := "archived ·"
	if m[1] != "replayed: archived" {
		want = "quarantine ·"
	}
	tm.screen(want)
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// L at 80 and at 120 columns says what became of each blob (its outcome before its name: a narrow box cuts the
// name, not the outcome), and the record keeps the filter words the action was asked with.
func TestTheRecordShowsOutcomesAndFilterWordsInTmux(t *testing.T) {
	dir := seeded(t)
	mustRun(t, "drain", "--dir", dir, "--filter", "sub:webhooks -is:handled", "--yes")
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		tm := newTerm(t, size[0], size[1], binary(t), "--dir", dir, "--interval", "1h")
		tm.screen("[1 Stranded")
		tm.keys("L")
		s := tm.screen("The record", `--filter "sub:webhooks`, `-is:handled"`)
		if n := strings.Count(s, "→ now at the root"); n < 2 {
			t.Errorf("at %dx%d the record shows %d outcomes:\n%s", size[0], size[1], n, s)
		}
		tm.keys("Escape")
		tm.keys("q")
		tm.exited()
	}
}
