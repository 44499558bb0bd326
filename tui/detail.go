package tui

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// Limits that keep opening a hostile blob instant: the rest is summarized, never rendered.
const (
	maxDetailEvents = 5000
	maxRawBytes     = 1 << 20
)

// The detail's sections, below its head: the events as a table, the full prediction, the raw JSON.
const (
	secEvents = iota
	secPrediction
	secRaw
)

var (
	sectionNames      = [...]string{"events", "what the estate will do", "raw JSON"}
	shortSectionNames = [...]string{"events", "prediction", "JSON"}
)

// maxHead is how many lines the head (properties, state, advice, the prediction in one line) takes at most: the
// events below get the rest — 25 of a 50-event blob at 120×40.
const maxHead = 7

// detail is the blob view: a head (what the blob is, what makes it urgent, what to do, what the estate will do),
// then a section — its events as a table (enter opens an event's JSON), the whole prediction, or the raw JSON,
// searchable. After an action it reads the blob again, and a blob that left says where it went.
type detail struct {
	e      *env
	name   string
	listed store.BlobInfo // as listed when it was opened: where it went is looked for from it
	d      *replay.Detail
	err    error
	gone   *replay.Whereabouts
	ready  func(sub string) *rules.Readiness
	seq    int

	head    []string // source wrapped to the width
	source  []string // the head's lines, unwrapped
	section int
	// nowUnread counts the blobs the NOW column's trace left out, not read yet: it is traced again as they are.
	nowUnread int
	events    eventTable
	pred      pager
	raw       pager
	search    bool // the search field has the focus
	w, h      int
}

type (
	detailLoadedMsg struct {
		seq  int
		name string
		d    *replay.Detail
		err  error
	}
	detailGoneMsg struct {
		seq   int
		name  string
		where replay.Whereabouts
		err   error
	}
)

func newDetail(name string, e *env, ready func(string) *rules.Readiness) *detail {
	v := &detail{e: e, name: name, ready: ready, pred: newPager(e.st), raw: newPager(e.st)}
	if i, ok := e.snap.Lookup(name); ok {
		v.listed = e.snap.Items[i].Info
	} else {
		v.listed = store.BlobInfo{Name: name}
	}
	v.events.st = e.st
	v.build()
	return v
}

// load reads the blob (again), in a command: what an action did shows without a refresh by hand.
func (v *detail) load() tea.Cmd {
	v.seq++
	seq, name, l, ctx := v.seq, v.name, v.e.loader, v.e.ctx
	listed := v.listed
	if v.d != nil {
		listed = v.d.Info
	}
	return func() tea.Msg {
		d, err := l.Inspect(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			where, werr := replay.WhereIs(ctx, l.Container, listed, listed.LastModified)
			return detailGoneMsg{seq: seq, name: name, where: where, err: werr}
		}
		return detailLoadedMsg{seq: seq, name: name, d: d, err: err}
	}
}

// eventsNowMsg is where the events of the blob on screen are now (their journeys, read in a command).
type eventsNowMsg struct {
	seq    int
	name   string
	js     []rules.Journey
	unread int
}

// traceEvents follows the blob's events across the container, so its event table says where each one that moved
// on is now: the blobs that may hold them picked here (the snapshot's index), read in the command.
func (v *detail) traceEvents() tea.Cmd {
	if v.d == nil || len(v.d.Judgements) == 0 || v.e.loader == nil {
		return nil
	}
	var originals []string
	for _, j := range v.d.Judgements {
		originals = append(originals, j.Original)
	}
	plan := v.e.loader.PlanTraceIndexed(v.e.snap, originals)
	ctx, seq, name, unread := v.e.ctx, v.seq, v.name, plan.Unread
	return func() tea.Msg {
		js, _, err := plan.Run(ctx, nil)
		if err != nil {
			return nil // (the table says nothing more: each event's own view traces it again)
		}
		return eventsNowMsg{seq: seq, name: name, js: js, unread: unread}
	}
}

// Update implements component: its reads come back here, and the search field takes what is typed.
func (v *detail) Update(msg tea.Msg) (component, tea.Cmd) {
	switch msg := msg.(type) {
	case detailLoadedMsg:
		if msg.seq == v.seq && msg.name == v.name {
			v.d, v.err, v.gone = msg.d, msg.err, nil
			if v.d != nil {
				v.listed = v.d.Info
			}
			v.build()
			return v, v.traceEvents()
		}
	case eventsNowMsg:
		if msg.seq == v.seq && msg.name == v.name && v.d != nil {
			v.events.setNow(present.EventsNow(v.d, msg.js))
			v.nowUnread = msg.unread
		}
	case detailGoneMsg:
		if msg.seq == v.seq && msg.name == v.name {
			v.err = msg.err
			if msg.err == nil {
				w := msg.where
				v.gone = &w
			}
			v.build()
		}
	case followMsg:
		if v.nowUnread > 0 { // (the index grew as the hydration read more: where the events are now, again)
			return v, tea.Batch(v.follow(), v.traceEvents())
		}
		return v, v.follow()
	case tea.KeyPressMsg:
		if v.search {
			p := v.pager()
			var cmd tea.Cmd
			p.search, cmd = p.search.Update(msg)
			return v, cmd
		}
	}
	return v, nil
}

// follow keeps the open blob true to the latest listing: the same blob (same ETag) is worked out again at the new
// service time — its age, pane and countdown tick — and one that changed or left is read again (a blob that left
// says where it went, and when).
func (v *detail) follow() tea.Cmd {
	if v.d == nil || v.gone != nil {
		return nil
	}
	i, ok := v.e.snap.Lookup(v.name)
	if !ok || v.e.snap.Items[i].ETag != v.d.ETag {
		return v.load()
	}
	if now := v.e.snap.Now; now.After(v.d.Now) {
		v.d = v.d.At(v.e.cfg, now)
		v.build()
	}
	return nil
}

// enterBinding opens the event under the cursor — or, for a blob that left, the blob where it went.
func (v *detail) enterBinding() binding {
	if g := v.gone; g != nil && g.Name != "" {
		name := g.Name
		return bind([]string{"enter"}, "enter", "open it where it is now", func() tea.Cmd {
			return tea.Batch(v.e.send(closeMsg{}), v.e.send(openBlobMsg{name}))
		}).footer()
	}
	return bind([]string{"enter"}, "enter", "open the event's JSON", v.openEvent).footer().when(v.eventsOff)
}

// pager is the text section on view (the raw JSON for the events section, which / searches).
func (v *detail) pager() *pager {
	if v.section == secPrediction {
		return &v.pred
	}
	return &v.raw
}

// SetSize implements component: the bar, the head, the section.
func (v *detail) SetSize(w, h int) {
	v.w, v.h = w, h
	v.layout()
}

func (v *detail) layout() {
	v.head = v.wrapHead()
	rest := max(3, v.h-1-len(v.head)) // below the bar and the head
	v.events.SetSize(v.w, rest)
	v.pred.SetSize(v.w, rest)
	v.raw.SetSize(v.w, rest)
}

// build works the blob out into the head and the sections.
func (v *detail) build() {
	st, p := v.e.st, textfmt.Printable
	head := []string{st.Title.Render(p(v.name))}
	var pred, raw []string
	switch {
	case v.gone != nil:
		head = append(head, present.Advice(present.BlobState{Gone: v.gone})...)
		v.events.set(nil)
	case v.err != nil:
		head = append(head, st.Error.Render("could not read the blob: "+p(v.err.Error())))
		v.events.set(nil)
	case v.d == nil:
		head = append(head, st.Dim.Render("reading…"))
	default:
		head, pred, raw = v.sections(head)
	}
	v.source = head
	v.pred.setLines(pred)
	v.raw.setLines(raw)
	v.layout()
}

// wrapHead wraps the head's lines to the width — advice is never cut mid-sentence — within a budget of lines
// (a third of the height, 4 to maxHead); what does not fit is one tab away, and the last line says so.
func (v *detail) wrapHead() []string {
	budget := max(4, min(maxHead, v.h/3))
	// A blob of few events lends the head the lines its table does not need.
	if need := len(v.events.rows) + 1; v.section == secEvents && need < v.h-1-budget {
		budget = max(budget, v.h-1-max(need, 3))
	}
	var out []string
	for _, l := range v.source {
		// (advice wraps under its text, not under the arrow; a state line under its text, not its label)
		out = append(out, textfmt.Hang(l, max(1, v.w), hangOf(ansi.Strip(l)), " /")...)
	}
	if len(out) > budget {
		out = append(out[:budget-1], v.e.st.Dim.Render(fmt.Sprintf("… %d more line(s): tab to %q", len(out)-budget+1, sectionNames[secPrediction])))
	}
	return out
}

// sections are the head's lines for a read blob, the whole prediction, and the raw JSON.
func (v *detail) sections(head []string) (_, pred, raw []string) {
	d, cfg, st, p := v.d, v.e.cfg, v.e.st, textfmt.Printable
	al := cfg.AlertsOf(&d.Item, d.Now)
	drained := rules.MarksOf(d.Metadata).DrainCount
	props := fmt.Sprintf("%s · %s old · the lifecycle rule deletes it in %s · %s", d.Pane, textfmt.Duration(d.Age),
		textfmt.Duration(al.DeletesIn), textfmt.Bytes(d.Size))
	if drained != "" {
		props += " · drained " + p(drained) + "×"
	}
	head = append(head, props)
	props += " · modified " + textfmt.Time(d.LastModified) // the prediction's facts say when, too
	state := present.StateOf(d, cfg)
	state.Readiness = v.ready(d.Parsed.Subscription)
	if w := v.e.witness; w != nil {
		state.SetStarts(cfg, &d.Item, w.App)
		state.SetHandler(*w, d.Parsed.Subscription)
	}
	for _, l := range present.StateLines(al) {
		head = append(head, st.Warn.Render(l))
	}
	for _, l := range present.Advice(state) {
		head = append(head, st.Bold.Render("→ ")+p(l))
	}
	if s := present.PredictionLine(d); s != "" {
		head = append(head, st.Dim.Render(s))
	}
	// The whole prediction, its facts and its verdicts' legend.
	pred = append(pred, st.Header.Render("properties"), props, fmt.Sprintf("etag %s · content type %s", p(d.ETag), p(d.ContentType)))
	if len(d.Metadata) > 0 {
		keys := make([]string, 0, len(d.Metadata))
		for k := range d.Metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var kv []string
		for _, k := range keys {
			kv = append(kv, p(k)+"="+p(d.Metadata[k]))
		}
		pred = append(pred, "metadata "+strings.Join(kv, " · "))
	}
	pred = append(pred, "", st.Header.Render("what makes it urgent, and what to do"))
	pred = append(pred, present.StateLines(al)...)
	for _, l := range present.Advice(state) {
		pred = append(pred, "→ "+p(l))
	}
	pred = append(pred, "", st.Header.Render("what the estate will do"))
	if d.ReadErr != "" {
		pred = append(pred, st.Error.Render("NOT READ: "+p(d.ReadErr)))
	} else {
		if d.Payload.Malformed() {
			pred = append(pred, st.Error.Render("MALFORMED: "+p(d.Payload.Err.Error())), st.Dim.Render(present.BestEffortNote))
		}
		for _, l := range present.Explain(d, cfg) {
			pred = append(pred, p(l))
		}
	}
	pred = append(pred, "", st.Header.Render("legend"), present.LegendDerived,
		"verdicts in the estate's order: cap (attempt ≥ --max-replays) · unroutable (no handler) · notIdempotent · unknown (needs --handlers) · replay",
		"reasons: "+present.ReasonLegend(nil))
	v.events.set(d)
	body := d.Body
	if len(body) > maxRawBytes {
		raw = append(raw, st.Dim.Render(fmt.Sprintf("(the first %s of %s)", textfmt.Bytes(maxRawBytes), textfmt.Bytes(int64(len(d.Body))))))
		body = body[:maxRawBytes]
	}
	for _, l := range strings.Split(present.PrettyJSON(body), "\n") {
		raw = append(raw, p(l))
	}
	return head, pred, raw
}

// Scope implements component: the search field's keys while it is open, else the detail's.
func (v *detail) Scope() *scope {
	if v.search {
		return &scope{name: "search", modal: true, typing: true, bindings: []binding{
			bind([]string{"enter"}, "enter", "find", v.find).footer(),
			bind([]string{"esc"}, "esc", "cancel", func() tea.Cmd { v.search = false; v.pager().search.Blur(); return nil }).footer(),
			bind([]string{"ctrl+c"}, "ctrl+c", "quit", func() tea.Cmd { return v.e.send(quitMsg{}) }),
		}}
	}
	return &scope{name: "blob", bindings: append([]binding{
		bind([]string{"d"}, "d", "drain this blob", func() tea.Cmd { return v.act(actDrain) }).footer().when(v.drainOff),
		bind([]string{"r"}, "r", "restore this blob", func() tea.Cmd { return v.act(actRestore) }).footer().when(v.restoreOff),
		bind([]string{"a"}, "a", "ack this blob (or clear its ack)", func() tea.Cmd { return v.act(actAck) }).footer().when(v.ackOff),
		bind([]string{"esc"}, "esc", "back", func() tea.Cmd { return v.e.send(closeMsg{}) }).footer(),
		bind([]string{"tab"}, "tab", "next section: events, the prediction, the raw JSON", func() tea.Cmd { v.section = (v.section + 1) % 3; return nil }).footer(),
		bind([]string{"shift+tab"}, "shift+tab", "previous section", func() tea.Cmd { v.section = (v.section + 2) % 3; return nil }),
		v.enterBinding(),
		bind([]string{"J"}, "J", "the raw JSON", func() tea.Cmd { v.section = secRaw; return nil }),
		bind([]string{"/"}, "/", "search the text (in the events: the raw JSON)", v.startSearch).footer(),
		bind([]string{"n"}, "n", "next match", func() tea.Cmd { v.pager().next(1); return nil }).when(v.noMatches),
		bind([]string{"N"}, "N", "previous match", func() tea.Cmd { v.pager().next(-1); return nil }).when(v.noMatches),
		bind([]string{"up", "k"}, "↑/k", "up", func() tea.Cmd { v.move(-1); return nil }),
		bind([]string{"down", "j"}, "↓/j", "down", func() tea.Cmd { v.move(1); return nil }),
		bind([]string{"pgup", "ctrl+u"}, "pgup", "page up", func() tea.Cmd { v.move(-v.page()); return nil }),
		bind([]string{"pgdown", "ctrl+d", "space"}, "pgdn", "page down", func() tea.Cmd { v.move(v.page()); return nil }),
		bind([]string{"home", "g"}, "g", "top", func() tea.Cmd { v.move(-1 << 30); return nil }),
		bind([]string{"end", "G"}, "G", "bottom", func() tea.Cmd { v.move(1 << 30); return nil }),
		bind([]string{"y"}, "y", "copy the name", func() tea.Cmd { return v.e.send(copyMsg{what: "name", text: v.name}) }),
		bind([]string{"Y"}, "Y", "copy the raw JSON", func() tea.Cmd { return v.e.send(copyBlobMsg{v.name}) }),
	}, payloadKeys(v.e, v.name, v.editOff)...)}
}

func (v *detail) page() int {
	if v.section == secEvents {
		return v.events.height
	}
	return v.pager().h
}

// move moves the events' cursor, or scrolls the text.
func (v *detail) move(n int) {
	if v.section == secEvents {
		v.events.move(n)
		return
	}
	v.pager().scroll(n)
}

func (v *detail) startSearch() tea.Cmd {
	if v.section == secEvents {
		v.section = secRaw
	}
	p := v.pager()
	p.search.SetValue(p.query)
	p.search.CursorEnd()
	v.search = true
	return p.search.Focus()
}

func (v *detail) find() tea.Cmd {
	p := v.pager()
	p.search.Blur()
	v.search = false
	p.setQuery(p.search.Value())
	return nil
}

func (v *detail) noMatches() string {
	if v.section == secEvents || len(v.pager().matches) == 0 {
		return "no search, or nothing found (press / to search)"
	}
	return ""
}

func (v *detail) eventsOff() string {
	switch {
	case v.section != secEvents:
		return "enter opens an event from the events (tab to them)"
	case len(v.events.rows) == 0:
		return "no event here"
	}
	return ""
}

func (v *detail) openEvent() tea.Cmd {
	i := v.events.cursor
	ev := newEventView(v.e, v.d, i)
	v.e.send(pushMsg{ev})
	return ev.trace()
}

// act asks for an action on this blob.
func (v *detail) act(a action) tea.Cmd {
	return v.e.send(askMsg{act: a, items: []rules.Item{v.d.Item}, limit: "this blob"})
}

// unavailable is why no action applies to the blob as it stands (gone, not read yet), or "".
func (v *detail) unavailable() string {
	switch {
	case v.e.readOnly:
		return readOnlyWhy
	case v.gone != nil:
		return "nothing to do here: " + present.Advice(present.BlobState{Gone: v.gone})[0]
	case v.d == nil:
		return "still reading the blob"
	}
	return ""
}

func (v *detail) drainOff() string {
	if why := v.unavailable(); why != "" {
		return why
	}
	if v.d.Pane != rules.PaneStranded {
		return "drain applies to stranded blobs; this one is " + v.d.Pane.String()
	}
	return ""
}

func (v *detail) restoreOff() string {
	if why := v.unavailable(); why != "" {
		return why
	}
	if v.d.Pane != rules.PaneQuarantine {
		return "restore applies to quarantined blobs; this one is " + v.d.Pane.String()
	}
	return ""
}

func (v *detail) ackOff() string {
	if why := v.unavailable(); why != "" {
		return why
	}
	switch {
	case v.d.Pane == rules.PaneArchived:
		return "an ack means nothing for the replay's archived records"
	case !canAck(v.e):
		return "this container cannot keep acknowledgements"
	}
	return ""
}

// bar is the detail's top line: the sections (the one on view marked) and where the view is.
func (v *detail) bar() string {
	if v.search {
		return v.pager().search.View()
	}
	pos := v.events.position()
	if v.section != secEvents {
		pos = v.pager().position()
	}
	tabs := func(names []string) string {
		var parts []string
		for i, n := range names {
			if i == secEvents && v.d != nil && v.d.Payload != nil && v.gone == nil {
				n = fmt.Sprintf("%s (%d)", n, len(v.d.Payload.Events))
			}
			if i == v.section {
				parts = append(parts, v.e.paint(&v.e.st.TabActive, "["+n+"]"))
			} else {
				parts = append(parts, v.e.paint(&v.e.st.Tab, " "+n+" "))
			}
		}
		return strings.Join(parts, "") + "  " + v.e.paint(&v.e.st.Dim, pos)
	}
	if line := tabs(sectionNames[:]); textfmt.Width(line) <= v.w {
		return line
	}
	return tabs(shortSectionNames[:]) // a narrow terminal keeps the position (and the match count) whole
}

// View implements component: exactly the detail's size.
func (v *detail) View() string {
	var b strings.Builder
	b.WriteString(fit(v.bar(), v.w, 1))
	for _, l := range v.head {
		b.WriteString("\n" + fit(l, v.w, 1))
	}
	b.WriteString("\n")
	if v.section == secEvents {
		b.WriteString(v.events.View())
	} else {
		b.WriteString(v.pager().View())
	}
	return fit(b.String(), v.w, v.h)
}

// mouse: the wheel moves the events' cursor (or scrolls the text); a click on an event puts the cursor there.
func (v *detail) mouse(msg tea.MouseMsg, y int) tea.Cmd {
	switch {
	case wheel(msg) != 0:
		v.move(wheel(msg))
	case clicked(msg) && v.section == secEvents:
		v.events.click(y - 1 - len(v.head)) // below the bar and the head: the table's header is line 0
	}
	return nil
}

// canAck reports whether the container keeps acknowledgements.
func canAck(e *env) bool {
	_, ok := e.loader.Container.(store.Tagger)
	return ok
}

// pushMsg puts a component on the focus stack (an event's JSON, over the detail).
type pushMsg struct{ c component }
