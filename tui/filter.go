package tui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

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

// View implements component: the bar is one line, the text field, drawn on the footer's status line (so the
// screen it sits on shows through).
func (f *filterBar) View() string { return f.input.View() }

// overlay: the filter bar does not replace the screen.
func (f *filterBar) overlay() {}

// match returns the filter for the applied query (nil: no filter). A query that does not parse matches nothing:
// a typo must never widen what the screen shows, and what an action takes, to everything.
func (f *filterState) match(snap *rules.Snapshot, cfg rules.Config) rowFilter {
	q, err := rules.ParseQuery(f.text)
	f.err = ""
	if err != nil {
		f.err = textfmt.Printable(err.Error()) // it quotes what was typed (or pasted)
		return func(int) bool { return false }
	}
	if q.Empty() {
		return nil
	}
	mt := &f.matcher
	if mt.snap != snap || len(mt.keys) != len(snap.Items) {
		mt.reset(snap)
	}
	return func(i int) bool {
		return q.Matches(cfg, snap.Now, snap.Items[i], func() string { return mt.key(i) })
	}
}

// matcher holds each blob's lower-cased search key — what its row shows — built once, again when its summary
// arrives, so a filter pass over a million blobs is one substring search each.
type matcher struct {
	snap    *rules.Snapshot
	keys    []string
	summary []*rules.Summary
}

func (mt *matcher) reset(s *rules.Snapshot) {
	*mt = matcher{snap: s, keys: make([]string, len(s.Items)), summary: make([]*rules.Summary, len(s.Items))}
}

func (mt *matcher) key(i int) string {
	it := mt.snap.Items[i]
	if mt.keys[i] == "" || mt.summary[i] != it.Summary {
		mt.keys[i], mt.summary[i] = rules.SearchKey(it), it.Summary
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
		t.Update(filterSetMsg{text: m.filter.text, err: m.filter.err, match: match})
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
