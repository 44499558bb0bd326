package tui

import (
	"encoding/json"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The raw JSON view wraps a member at its spaces, under its own indent: at every width, each wrapped line fits,
// and a word (a GUID, PUSH-NOTIFICATIONS, a URL) is split only where it is wider than the room the member has —
// there it must be, since nothing in the pager is cut.
func TestTheRawJSONWrapsAtSpacesUnderItsIndent(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(7))
	words := []string{"the", "handler", "PUSH-NOTIFICATIONS", "5ef721b0-d646-e936-5156-c6bc72cc46e9", "timed", "out", "after",
		"https://estate.example/api/push?id=42", "a", "retry", "-is:handled", "ë", "日本語"}
	for round := 0; round < 40; round++ {
		data := map[string]any{}
		for k := 0; k < 6; k++ {
			var s []string
			for n := rng.Intn(30); n >= 0; n-- {
				s = append(s, words[rng.Intn(len(words))])
			}
			data["field"+string(rune('a'+k))] = strings.Join(s, " ")
		}
		b, _ := json.MarshalIndent([]any{map[string]any{"id": "x", "data": data}}, "", "  ")
		src := strings.Split(string(b), "\n")
		for _, w := range []int{24, 37, 80, 120} {
			st := NewStyles(Theme{})
			p := newPager(&st)
			p.SetSize(w, 20)
			p.setLines(src)
			for i, l := range src {
				var pieces []string
				for j, s := range p.srcOf {
					if s == i {
						pieces = append(pieces, p.lines[j])
					}
				}
				indent := len(l) - len(strings.TrimLeft(l, " "))
				room := w
				if indent <= w/2 {
					room = w - indent
				}
				var got []string
				for k, piece := range pieces {
					if ansi.StringWidth(piece) > w {
						t.Fatalf("width %d: %q is wider than the line", w, piece)
					}
					if k > 0 && indent <= w/2 && !strings.HasPrefix(piece, strings.Repeat(" ", indent)) {
						t.Errorf("width %d: %q continues %q outside its indent", w, piece, l)
					}
					got = append(got, strings.Fields(piece)...)
				}
				want := strings.Fields(l)
				if strings.Join(got, " ") == strings.Join(want, " ") {
					continue
				}
				// Only a word wider than the room may be split.
				for _, word := range want {
					if ansi.StringWidth(word) <= room && !slices.Contains(got, word) {
						t.Fatalf("width %d: %q was split though it fits in %d cells:\n%s", w, word, room, strings.Join(pieces, "\n"))
					}
				}
			}
		}
	}
}

// Whatever a component draws, a line wider than the terminal is cut with an ellipsis, never silently (the
// overview's loss line lost its last letter at 80 columns).
func TestFitCutsWithAnEllipsis(t *testing.T) {
	t.Parallel()
	got := fit("lifecycle deletes if nobody acts: 24h 12 blobs/15 events · 72h 14 blobs/17 events\nshort", 40, 3)
	lines := strings.Split(got, "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[0], "…") || ansi.StringWidth(lines[0]) != 40 || strings.TrimSpace(lines[1]) != "short" {
		t.Fatalf("fit: %q", got)
	}
}
