package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// One voice (issue 51), the dashboard's part: on the demo's incident, the real binary's detail of a blob advises
// what show --json advises, sentence for sentence — one blob of every distinct advice show gives, opened as an
// operator opens it (its pane's key, a filter on its name, enter).
func TestTheDashboardsDetailAdvisesAsShowDoesOnTheDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "3h")
	const width = 220
	tm := newTerm(t, width, 70, binary(t), "--dir", dir, "--interval", "1h")

	var ls struct{ Blobs []map[string]any }
	if err := json.Unmarshal([]byte(mustRun(t, "ls", "--json", "--dir", dir)), &ls); err != nil {
		t.Fatal(err)
	}
	paneKey := map[string]string{"stranded": "1", "quarantine": "2", "live": "3", "archived": "4"}
	seen := map[string]bool{}
	tm.screen("[1 Stranded")
	for _, b := range ls.Blobs {
		name := b["name"].(string)
		var show struct{ Advice []string }
		if err := json.Unmarshal([]byte(mustRun(t, "show", "--json", "--dir", dir, name)), &show); err != nil {
			t.Fatal(err)
		}
		key := b["pane"].(string) + "\x00" + strings.Join(show.Advice, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		// The name's own part (a GUID, unique in the container) finds it in its pane.
		base := strings.TrimSuffix(filepath.Base(name), ".json")
		tm.keys(paneKey[b["pane"].(string)], "/")
		tm.keys("-l", base)
		tm.keys("Enter")
		tm.screen("filter: " + base)
		tm.keys("Enter")
		got := adviceOf(tm.screen(base[:8], " old · "), width)
		if !slices.Equal(got, show.Advice) {
			t.Errorf("%s (%s): the dashboard's detail advises\n  %q\nshow --json\n  %q", name, b["pane"], got, show.Advice)
		}
		tm.keys("Escape")
		tm.keys("Escape")
		tm.screen("filter cleared")
	}
	if len(seen) < 4 {
		t.Fatalf("only %d kinds of advice on the demo's incident: the test proves little", len(seen))
	}
	t.Logf("%d kinds of advice compared", len(seen))
	tm.keys("q")
	tm.exited()
}

// adviceOf is the detail's advice: each "→ " line with the lines it wraps onto (hung under its text, after a line
// that reached the edge of a terminal w columns wide), joined.
func adviceOf(screen string, w int) []string {
	var out []string
	col, prev := -1, 0
	for _, line := range strings.Split(screen, "\n") {
		line = strings.TrimRight(line, " ")
		trimmed := strings.TrimSpace(line)
		indent := len(line) - len(strings.TrimLeft(line, " "))
		switch {
		case strings.HasPrefix(trimmed, "→ "):
			out, col = append(out, strings.TrimPrefix(trimmed, "→ ")), indent
		case col >= 0 && trimmed != "" && indent == col+2 && prev > w-30:
			out[len(out)-1] += " " + trimmed
		default:
			col = -1
		}
		prev = utf8.RuneCountInString(line)
	}
	return out
}
