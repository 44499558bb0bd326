package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// In a real terminal: a filter pasted (bracketed paste, one message) is applied as if typed, never read as keys —
// its "d" does not drain, its "y" copies nothing; y then copies the row's name through the terminal's clipboard
// (OSC 52, which tmux keeps as a buffer); v lists the saved views and enter opens one.
func TestPasteClipboardAndViewsInTmux(t *testing.T) {
	dir := seeded(t)
	before := drainCounts(t, dir)
	cfg := writeConfig(t, "views:\n  - name: stranded-webhooks\n    filter: \"sub:=WEBHOOKS is:root\"\n")
	os.Chmod(cfg, 0o600)
	tm := newTerm(t, 120, 32, binary(t), "--config", cfg, "--dir", dir, "--interval", "1h")
	tm.tmux("set-option", "-g", "set-clipboard", "on")
	tm.screen("[1 Stranded")

	tm.tmux("set-buffer", "-b", "typed", "sub:=WEBHOOKS reason:ttl -is:handled")
	tm.keys("/")
	tm.screen("/")
	tm.tmux("paste-buffer", "-p", "-d", "-b", "typed", "-t", "dl")
	tm.keys("Enter")
	s := tm.screen("filter: sub:=WEBHOOKS reason:ttl -is:handled")
	if strings.Contains(s, "Drain") {
		t.Fatalf("the paste was read as keys:\n%s", s)
	}
	rows := regexp.MustCompile(`(?m)^▸?\s+\*?\s*([A-Z-]+)\s+\d\d-\d\d \d\dh`).FindAllStringSubmatch(s, -1)
	if len(rows) == 0 {
		t.Fatalf("the pasted filter shows no row:\n%s", s)
	}
	for _, r := range rows {
		if r[1] != "WEBHOOKS" {
			t.Errorf("a %s row under the pasted filter", r[1])
		}
	}

	tm.keys("y")
	tm.screen("copied the name")
	if buf := tm.tmux("show-buffer"); !regexp.MustCompile(`^WEBHOOKS/\d{4}/\d+/\d+/\d+/[0-9a-f-]+\.json$`).MatchString(strings.TrimSpace(buf)) {
		t.Errorf("tmux's clipboard holds %q, not the row's name", buf)
	}

	tm.keys("Escape")
	tm.keys("v")
	tm.screen("Saved views", "stranded-webhooks")
	tm.keys("Enter")
	tm.screen("view stranded-webhooks")
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.capture())
	}
	if after := drainCounts(t, dir); after != before {
		t.Fatalf("blobs were drained: %d → %d", before, after)
	}
}
