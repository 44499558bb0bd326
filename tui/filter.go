package tui

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
)

// The filter: words are ANDed; a plain word matches what the row shows (the blob's name — subscription, hour,
// GUID — its dominant reason and outcome, and the badges it carries); field:value terms match the field named.
const filterSyntax = "words are ANDed and match what a row shows: its name, reason, outcome and badges (malformed, crash, untriggerable, handled, expiring, stalled, acked) · " +
	"sub:NAME reason:TEXT outcome:TEXT (sub:=NAME, reason:=TEXT: the whole value) · hour:12-01 04h (as the HOUR column prints it), hour:12-01T04 or hour:2026-12-01T04 · " +
	"verdict:cap|replay|notIdempotent|unroutable|unknown|malformed|crash|handled (blobs that show it) · is:malformed is:crash is:untriggerable is:expiring is:stalled is:handled is:acked is:unread is:unreadable is:root · " +
	`-TERM leaves out what TERM matches · "quoted text" keeps spaces · a filter that does not parse shows nothing`

// filterState is what the root keeps of the filter: the query applied to every pane, the one being typed, and the
// per-blob search keys.
type filterState struct {
	bar     *filterBar
	text    string // the applied query
	typed   string // the query as typed (applied once the debounce fires, or enter)
	seq     int
	err     string
	matcher matcher
}

type (
	// debounceMsg applies what was typed, when no key came since (seq).
	debounceMsg struct{ seq int }
	// filterTypedMsg: the bar's text changed; filterDoneMsg: enter or esc closed it with the text to keep.
	filterTypedMsg struct{ text string }
	filterDoneMsg  struct{ text string }
)

// filterBar is the filter's text field, on the status line while it has the focus.
type filterBar struct {
	e     *env
	input textinput.Model
	st    *Styles
	w     int
	keys  *scope
}

func newFilterBar(e *env) *filterBar {
	in := newInput()
	in.Prompt = "/"
	in.Placeholder = "words, sub:, reason:, outcome:, hour:, verdict:, is:  (? for the syntax)"
	in.CharLimit = 200
	f := &filterBar{e: e, input: in, st: e.st}
	f.keys = &scope{name: "filter", modal: true, typing: true, bindings: []binding{
		bind([]string{"enter"}, "enter", "apply", func() tea.Cmd { f.input.Blur(); return f.e.send(filterDoneMsg{f.input.Value()}) }).footer(),
		bind([]string{"esc"}, "esc", "clear the filter", func() tea.Cmd { f.input.Blur(); return f.e.send(filterDoneMsg{""}) }).footer(),
		bind([]string{"?"}, "?", "the filter's syntax (help; esc comes back here)", func() tea.Cmd { return f.e.send(helpMsg{}) }).footer(),
		bind([]string{"ctrl+c"}, "ctrl+c", "quit", func() tea.Cmd { return f.e.send(quitMsg{}) }),
	}}
	return f
}

// newInput is a text field whose cursor does not blink: a blink is a redraw twice a second, and at a million
// rows every redraw counts.
func newInput() textinput.Model {
	in := textinput.New()
	in.Cursor.SetMode(cursor.CursorStatic)
	return in
}

// edit opens the bar on the applied query.
func (f *filterBar) edit(q string) {
	f.input.SetValue(q)
	f.input.CursorEnd()
	f.input.Focus()
}

// SetSize implements component: the bar is one line of the screen's width.
func (f *filterBar) SetSize(w, _ int) { f.w, f.input.Width = w, max(10, w-4) }

// Scope implements component.
func (f *filterBar) Scope() *scope { return f.keys }

// Update implements component: keys type into the field, and every change is said to the root, which filters
// once the typing pauses.
func (f *filterBar) Update(msg tea.Msg) (component, tea.Cmd) {
	if !f.input.Focused() {
		return f, nil
	}
	before := f.input.Value()
	var cmd tea.Cmd
	f.input, cmd = f.input.Update(msg)
	if f.input.Value() != before {
		cmd = tea.Batch(cmd, f.e.send(filterTypedMsg{f.input.Value()}))
	}
	return f, cmd
}

// View implements component: the bar is drawn over the status line, so the screen it sits on shows through.
func (f *filterBar) View() string { return "" }

// overlay: the filter bar does not replace the screen.
func (f *filterBar) overlay() {}

// term is one word of a query: not leaves out what it matches; exact matches a whole value (sub:=NAME).
type term struct {
	field, value string
	not, exact   bool
}

// words splits a query at spaces, keeping "quoted text" (a reason with spaces) together.
func words(q string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range q {
		switch {
		case r == '"':
			quoted = !quoted
		case (r == ' ' || r == '\t') && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// hourWord is the hour half of the HOUR column's form (12-01 04h), which a space parts from its date.
var hourWord = regexp.MustCompile(`^\d{1,2}h$`)

func parseQuery(q string) ([]term, error) {
	var out []term
	ws := words(q)
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		not := len(w) > 1 && w[0] == '-'
		if not {
			w = w[1:]
		}
		f, v, ok := strings.Cut(w, ":")
		if !ok {
			out = append(out, term{value: strings.ToLower(w), not: not})
			continue
		}
		exact := false
		if f != "hour" && strings.HasPrefix(v, "=") {
			exact, v = true, v[1:]
		}
		if v == "" {
			return nil, fmt.Errorf("%s needs a value after the colon (sub:PUSH, is:expiring)", w)
		}
		switch f = strings.ToLower(f); f {
		case "sub", "subscription":
			f = "sub"
		case "hour":
			if i+1 < len(ws) && hourWord.MatchString(ws[i+1]) { // hour:12-01 04h, as the column prints it
				v += " " + ws[i+1]
				i++
			}
			h, err := hourPrefix(v)
			if err != nil {
				return nil, err
			}
			v = h
		case "reason", "outcome", "name":
		case "verdict":
			if !replay.IsVerdictFilter(v) { // the words ls --verdict takes
				return nil, fmt.Errorf("verdict:%s — want %s", v, replay.VerdictFilterWords)
			}
		case "is":
			if !slices.Contains(replay.IsWords, strings.ToLower(v)) {
				return nil, fmt.Errorf("is:%s — want %s", v, strings.Join(replay.IsWords, ", "))
			}
		default:
			return nil, fmt.Errorf("%s: is not a filter field (sub, reason, outcome, hour, verdict, is)", f)
		}
		out = append(out, term{field: f, value: strings.ToLower(v), not: not, exact: exact})
	}
	return out, nil
}

// hourForms are what hour: takes, each with how much of "01-02T15" it fixes.
var hourForms = []struct {
	layout string
	year   bool
}{{"01-02 15h", false}, {"01-02T15", false}, {"2006-01-02T15", true}, {"2006-01-02 15h", true}, {"01-02", false}, {"2006-01-02", true}}

// hourPrefix reads what hour: was given into the key rows are matched by: "2026-12-01T04", or without the year
// "12-01T04", or a date only.
func hourPrefix(v string) (string, error) {
	for _, f := range hourForms {
		t, err := time.Parse(f.layout, v)
		if err != nil {
			continue
		}
		key := t.Format("01-02T15")
		if !strings.Contains(f.layout, "15") {
			key = t.Format("01-02")
		}
		if f.year {
			key = t.Format("2006-") + key
		}
		return key, nil
	}
	return "", fmt.Errorf("hour:%s — want a date and hour as the HOUR column prints it (12-01 04h), 12-01T04 or 2026-12-01T04", v)
}

// match returns the filter for the applied query (nil: no filter). A query that does not parse matches nothing:
// a typo must never widen what the screen shows, and what an action takes, to everything.
func (f *filterState) match(snap *replay.Snapshot, cfg replay.Config) rowFilter {
	terms, err := parseQuery(f.text)
	f.err = ""
	if err != nil {
		f.err = textfmt.Printable(err.Error()) // it quotes what was typed (or pasted)
		return func(int) bool { return false }
	}
	if len(terms) == 0 {
		return nil
	}
	mt := &f.matcher
	if mt.snap != snap || len(mt.keys) != len(snap.Items) {
		mt.reset(snap)
	}
	return func(i int) bool {
		it := &snap.Items[i]
		for _, t := range terms {
			if termMatches(cfg, snap.Now, mt, i, it, t) == t.not {
				return false
			}
		}
		return true
	}
}

func termMatches(cfg replay.Config, now time.Time, mt *matcher, i int, it *replay.Item, t term) bool {
	s := it.Summary
	switch t.field {
	case "":
		if strings.Contains(mt.key(i), t.value) {
			return true
		}
		match, known := cfg.Is(it, now, t.value) // a badge the row carries: malformed, crash, acked…
		return known && match
	case "name":
		return t.has(it.Name)
	case "sub":
		return t.has(it.Parsed.Subscription)
	case "hour":
		if it.Parsed.Hour.IsZero() {
			return false
		}
		key := strings.ToLower(it.Parsed.Hour.Format("01-02T15"))
		if len(t.value) > 4 && t.value[4] == '-' { // with the year
			key = strings.ToLower(it.Parsed.Hour.Format("2006-01-02T15"))
		}
		return strings.HasPrefix(key, t.value)
	case "reason", "outcome":
		if s == nil {
			return false
		}
		cs := s.Reasons
		if t.field == "outcome" {
			cs = s.Outcomes
		}
		for _, c := range cs {
			if t.has(c.Value) {
				return true
			}
		}
		return false
	}
	match, _ := cfg.Is(it, now, t.value) // verdict: and is: (parseQuery let only known words through)
	return match
}

// has reports whether a field's value matches the term: contains it, or is it (exact), in any case.
func (t term) has(v string) bool {
	if t.exact {
		return strings.EqualFold(v, t.value)
	}
	return strings.Contains(strings.ToLower(v), t.value)
}

// matcher holds each blob's lower-cased search key — what its row shows — built once, again when its summary
// arrives, so a filter pass over a million blobs is one substring search each.
type matcher struct {
	snap    *replay.Snapshot
	keys    []string
	summary []*replay.Summary
}

func (mt *matcher) reset(s *replay.Snapshot) {
	*mt = matcher{snap: s, keys: make([]string, len(s.Items)), summary: make([]*replay.Summary, len(s.Items))}
}

func (mt *matcher) key(i int) string {
	it := &mt.snap.Items[i]
	if mt.keys[i] == "" || mt.summary[i] != it.Summary {
		var b strings.Builder
		b.WriteString(it.Name)
		if s := it.Summary; s != nil {
			b.WriteByte(0)
			b.WriteString(s.Reasons.Top())
			b.WriteByte(0)
			b.WriteString(s.Outcomes.Top())
		}
		mt.keys[i], mt.summary[i] = strings.ToLower(b.String()), it.Summary
	}
	return mt.keys[i]
}

// rowFilter is the applied query over the snapshot (nil: no filter).
func (m *Model) rowFilter() rowFilter { return m.filter.match(m.snap, m.cfg) }

// applyFilter applies the typed query to every table. Once it is set (settled: enter, esc, a click of the
// overview), selections it hides are dropped — an action never takes a blob the operator cannot see — and the
// status line says how many.
func (m *Model) applyFilter(settled bool) {
	m.filter.text = m.filter.typed
	match := m.rowFilter()
	for _, t := range m.tables {
		t.filtered, t.filterErr = m.filter.text, m.filter.err
		t.refilter(match, t.cursorName())
	}
	if !settled {
		return
	}
	dropped := 0
	for _, t := range m.tables {
		dropped += t.dropHidden()
	}
	if dropped > 0 {
		m.status = fmt.Sprintf("%d selected blob(s) hidden by the filter were unselected", dropped)
	}
}
