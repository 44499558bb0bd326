package tui

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	"github.com/charmbracelet/x/ansi"
	"github.com/deadletter/deadletter/internal/textfmt"
)

// pager is text that scrolls (bubbles/viewport) and can be searched: the detail's prediction and raw JSON, an
// event's JSON, help, a dialog's body. Lines are wrapped to the width, never cut; a new width re-wraps them and
// keeps the view on what it showed — the same top line and the current match.
type pager struct {
	vp      viewport.Model
	source  []string // the lines before wrapping (printable, styled)
	lines   []string // wrapped to the width
	srcOf   []int    // the source line each wrapped line comes from
	plain   []string // lines without styles, lower-cased, for the search
	w, h    int
	query   string
	matches []int // line indexes holding the query
	match   int   // the current one
	search  textinput.Model
	st      *Styles
}

func newPager(st *Styles) pager {
	in := newInput()
	in.Prompt = "search: "
	in.CharLimit = 200
	return pager{vp: viewport.New(), search: in, st: st}
}

// SetSize gives the pager its region, re-wrapping at a new width.
func (p *pager) SetSize(w, h int) {
	h = max(1, h)
	if p.w != w {
		top, match := p.sourceAt(p.vp.YOffset()), -1
		if len(p.matches) > 0 {
			match = p.sourceAt(p.matches[p.match])
		}
		p.w, p.h = w, h
		p.vp.SetWidth(w)
		p.vp.SetHeight(h)
		p.wrap()
		p.vp.SetYOffset(max(0, slices.Index(p.srcOf, top)))
		if i := slices.IndexFunc(p.matches, func(l int) bool { return p.srcOf[l] == match }); i >= 0 {
			p.match = i
			if l := p.matches[i]; l < p.vp.YOffset() || l >= p.vp.YOffset()+p.h {
				p.vp.SetYOffset(l)
			}
		}
		p.refresh()
		return
	}
	p.h = h
	p.vp.SetHeight(h)
	p.vp.SetYOffset(p.vp.YOffset())
}

// sourceAt is the source line of wrapped line i (-1 when there is none).
func (p *pager) sourceAt(i int) int {
	if i < 0 || i >= len(p.srcOf) {
		return -1
	}
	return p.srcOf[i]
}

// setLines replaces the text, keeping the reader where they were (a new text starts at the top: its pager is new).
func (p *pager) setLines(src []string) {
	at := p.vp.YOffset() // the text on screen follows the container: where the reader was stays where it is
	p.source = src
	p.wrap()
	p.find()
	p.vp.SetYOffset(at)
	p.refresh()
}

// wrap lays the text out at the width: nothing is cut, long lines continue below.
func (p *pager) wrap() {
	if p.w <= 0 {
		return
	}
	p.lines, p.srcOf = p.lines[:0], p.srcOf[:0]
	for i, l := range p.source {
		for _, w := range hangingWrap(l, p.w) {
			p.lines, p.srcOf = append(p.lines, w), append(p.srcOf, i)
		}
	}
	p.plain = make([]string, len(p.lines))
	for i, l := range p.lines {
		p.plain[i] = strings.ToLower(ansi.Strip(l))
	}
	p.find()
}

// hangingWrap wraps a line to w columns, its continuation lines indented as far as the line's text (a list item,
// a key's help, a JSON member, "→ advice" and "▶ a script window" stay under their start), styled or not, where
// the indent leaves room.
func hangingWrap(l string, w int) []string {
	if ansi.StringWidth(l) <= w {
		return []string{l}
	}
	plain := ansi.Strip(l)
	body := strings.TrimLeft(plain, " ")
	indent := len(plain) - len(body) + hangOf(body)
	if indent == 0 || indent > w/2 {
		return strings.Split(textfmt.Wrap(l, w, " "), "\n")
	}
	return textfmt.Hang(l, w, indent, " ")
}

// bullets are the marks a line's text may start with: its continuation lines hang under the text after them.
var bullets = []string{"→ ", "▶ ", "▸ ", "• ", "- ", "· "}

// hangOf is how far a line's continuation hangs past its indent: under the text after a bullet ("→ advice"), or
// after a one-word label ("replay: CRASH — …", "restore: refused …"); 0 for anything else.
func hangOf(body string) int {
	for _, mark := range bullets {
		if strings.HasPrefix(body, mark) {
			return textfmt.Width(mark)
		}
	}
	if i := strings.Index(body, ": "); i > 0 && i <= 14 && isLabel(body[:i]) {
		return i + 2
	}
	return 0
}

// isLabel reports whether s is one word of letters (and hyphens): a line's label, not a sentence or a JSON key.
func isLabel(s string) bool {
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r == '-') {
			return false
		}
	}
	return true
}

// refresh hands the viewport the lines, the current match shown in reverse.
func (p *pager) refresh() {
	cur := -1
	if len(p.matches) > 0 {
		cur = p.matches[p.match]
	}
	shown := p.lines
	if cur >= 0 {
		shown = slices.Clone(p.lines)
		shown[cur] = p.st.Match.Render(ansi.Strip(p.lines[cur]))
	}
	off := p.vp.YOffset()
	p.vp.SetContent(strings.Join(shown, "\n"))
	p.vp.SetYOffset(off)
}

func (p *pager) scroll(n int) { p.vp.SetYOffset(p.vp.YOffset() + n) }
func (p *pager) toTop()       { p.vp.GotoTop() }
func (p *pager) toBottom()    { p.vp.GotoBottom() }

// find recomputes the matches of the query and keeps the current one in range.
func (p *pager) find() {
	p.matches = p.matches[:0]
	if p.query == "" {
		return
	}
	q := strings.ToLower(p.query)
	for i, l := range p.plain {
		if strings.Contains(l, q) {
			p.matches = append(p.matches, i)
		}
	}
	p.match = min(p.match, max(len(p.matches)-1, 0))
}

// setQuery searches for q and shows the first match.
func (p *pager) setQuery(q string) {
	p.query, p.match = q, 0
	p.find()
	if len(p.matches) > 0 {
		p.vp.SetYOffset(p.matches[0])
	}
	p.refresh()
}

// next moves to the next (dir 1) or previous (-1) match after the top line.
func (p *pager) next(dir int) {
	if len(p.matches) == 0 {
		return
	}
	if dir > 0 {
		i := sort.SearchInts(p.matches, p.vp.YOffset()+1)
		p.match = i % len(p.matches)
	} else {
		i := sort.SearchInts(p.matches, p.vp.YOffset()) - 1
		p.match = (i + len(p.matches)) % len(p.matches)
	}
	p.vp.SetYOffset(p.matches[p.match])
	p.refresh()
}

// position says where the view is: lines shown, of how many, and the search.
func (p *pager) position() string {
	if len(p.lines) == 0 {
		return ""
	}
	first := p.vp.YOffset() + 1
	last := min(len(p.lines), p.vp.YOffset()+p.h)
	s := fmt.Sprintf("lines %d–%d of %d", first, last, len(p.lines))
	if len(p.lines) > p.h {
		s += fmt.Sprintf(" (%d%%)", 100*last/len(p.lines))
	}
	if p.query != "" {
		if len(p.matches) == 0 {
			s += fmt.Sprintf(" · %q not found", p.query)
		} else {
			s += fmt.Sprintf(" · match %d of %d for %q", p.match+1, len(p.matches), p.query)
		}
	}
	return s
}

// View is the text at the pager's size.
func (p *pager) View() string { return fit(p.vp.View(), p.w, p.h) }
