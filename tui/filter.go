package tui

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
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
	events  eventJudging
}

// eventJudging is the dashboard's judgement of the applied filter's terms on what is inside the events (type:,
// subject:, id:, data.PATH:): the blobs every other word keeps are read in batches in the background, so the
// matches show as they are found and the footer says how many blobs are not judged yet — never hidden silently.
type eventJudging struct {
	text    string // the query judged
	matches rules.EventMatches
	etags   map[string]string // the version of each blob judged: a blob rewritten since is judged again
	tried   map[string]bool   // read and not judged (gone, refused, too large): not tried again for this query
	running bool
	pending int // blobs the other words keep whose events are not judged yet, as of the last pass
}

// eventsJudgedMsg is a batch of the filter's event judgement, read in a command.
type eventsJudgedMsg struct {
	text    string
	batch   []store.BlobInfo
	matches rules.EventMatches
}

// judgeBatch is how many blobs' events one command reads for the filter.
const judgeBatch = 2000

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
	in.Placeholder = "words, sub:, reason:, hour:, verdict:, is:, type:, id:, data.PATH:  (? for the syntax)"
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
	st := in.Styles()
	st.Cursor.Blink = false
	in.SetStyles(st)
	return in
}

// edit opens the bar on the applied query.
func (f *filterBar) edit(q string) {
	f.input.SetValue(q)
	f.input.CursorEnd()
	f.input.Focus()
}

// SetSize implements component: the bar is one line of the screen's width.
func (f *filterBar) SetSize(w, _ int) {
	f.w = w
	f.input.SetWidth(max(10, w-4))
}

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
	if q.HasEventTerms() {
		if ev := &f.events; ev.text != f.text {
			*ev = eventJudging{text: f.text, matches: rules.EventMatches{}, etags: map[string]string{}, tried: map[string]bool{}}
		}
		q = q.WithEvents(f.events.matches)
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

// judgeEvents reads the next batch of blobs whose events the applied filter has to judge.
func (m *Model) judgeEvents() tea.Cmd {
	if m.opt.Session == nil {
		return nil
	}
	return m.filter.judgeNext(m.ctx, m.snap, m.cfg, m.opt.Session.Loader())
}

// eventsJudged takes a batch of the judgement, shows what it matched and reads the next.
func (m *Model) eventsJudged(msg eventsJudgedMsg) tea.Cmd {
	if !m.filter.takeJudged(msg) {
		return nil
	}
	m.applyFilter(false)
	return m.judgeEvents()
}

// judgeNext reads the next batch of blobs whose events the applied filter has to judge: those every other word
// keeps, not judged at their current version. It counts them too, for the footer.
func (f *filterState) judgeNext(ctx context.Context, snap *rules.Snapshot, cfg rules.Config, l *replay.Loader) tea.Cmd {
	ev := &f.events
	q, err := rules.ParseQuery(f.text)
	if err != nil || !q.HasEventTerms() || ev.text != f.text {
		ev.pending = 0
		return nil
	}
	rest := q.WithoutEvents()
	mt := &f.matcher
	if mt.snap != snap || len(mt.keys) != len(snap.Items) {
		mt.reset(snap)
	}
	var batch []store.BlobInfo
	ev.pending = 0
	for i, it := range snap.Items {
		if e, ok := ev.etags[it.Name]; ok && e != it.ETag {
			delete(ev.matches, it.Name)
			delete(ev.etags, it.Name)
		}
		if _, ok := ev.etags[it.Name]; ok || ev.tried[it.Name] || !rest.Matches(cfg, snap.Now, it, func() string { return mt.key(i) }) {
			continue
		}
		ev.pending++
		if len(batch) < judgeBatch {
			batch = append(batch, it.Info)
		}
	}
	if len(batch) == 0 || ev.running {
		return nil
	}
	ev.running = true
	text := ev.text
	return func() tea.Msg {
		return eventsJudgedMsg{text: text, batch: batch, matches: l.MatchEvents(ctx, batch, q)}
	}
}

// takeJudged keeps a batch of the judgement; false when it is of a query since replaced (its own is under way).
func (f *filterState) takeJudged(msg eventsJudgedMsg) bool {
	ev := &f.events
	if msg.text != ev.text {
		return false
	}
	ev.running = false
	for _, bi := range msg.batch {
		if v, ok := msg.matches[bi.Name]; ok {
			ev.matches[bi.Name], ev.etags[bi.Name] = v, bi.ETag
		} else {
			ev.tried[bi.Name] = true
		}
	}
	return true
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

// pendingEvents is how many blobs the applied filter's event terms have not judged yet (0 without such terms).
func (f *filterState) pendingEvents() int {
	if f.events.text != f.text {
		return 0
	}
	return f.events.pending
}
