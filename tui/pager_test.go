package tui

import (
	"encoding/json"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
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

// Wrapped text continues under its own text, styled or not: advice under the words after its arrow, a state
// line under the words after its label, an indented line under its indent — never at column 0 (issue 51: the
// rehearsal screen's reasons and the detail's state lines restarted there).
func TestWrappedLinesHangUnderTheirText(t *testing.T) {
	t.Parallel()
	st := NewStyles(Theme{Profile: colorprofile.TrueColor})
	for _, c := range []struct {
		line string
		hang int
	}{
		{"replay: CRASH — the replay function throws on it before it writes anything, so nothing is republished or deleted", len("replay: ")},
		{st.Bold.Render("→ ") + "Do not drain it: the replay function crashes on it every time. Fix its payload with deadletter edit", 2},
		{"  ▶ push-notifications down (503 Busy) from 03:00 until further notice: the budget guard stopped the Function App", 4},
		{st.Warn.Render("    the budget guard stopped the Function App for longer than the delivery window, and the replay missed it"), 4},
	} {
		lines := hangingWrap(c.line, 40)
		if len(lines) < 2 {
			t.Fatalf("%q did not wrap at 40", c.line)
		}
		for _, l := range lines[1:] {
			plain := ansi.Strip(l)
			if lead := len(plain) - len(strings.TrimLeft(plain, " ")); lead != c.hang || ansi.StringWidth(l) > 40 {
				t.Errorf("%q continues at column %d (want %d): %q", ansi.Strip(c.line), lead, c.hang, plain)
			}
		}
	}
}
