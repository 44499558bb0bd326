package tui

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
)

// eventTable is a blob's events, one line each (present.EventColumns, fitted like the blob table), with a cursor:
// the detail's first section.
type eventTable struct {
	d      *replay.Detail
	rows   []present.EventRow
	cursor int
	offset int
	width  int
	height int // rows on screen, below the column header
	widths []int
	cols   []present.Column[present.EventRow] // the event columns, each no wider than its widest cell
	st     *Styles
	// now says, per event, where it is now when it has moved on from this blob (present.EventsNow): a NOW column.
	now map[int]string
}

// setNow shows where the events that moved on are now (a NOW column, when any did).
func (t *eventTable) setNow(now map[int]string) {
	t.now = now
	d := t.d
	t.set(d)
}

// set shows a blob's events (nil: none), keeping the cursor where it can.
func (t *eventTable) set(d *replay.Detail) {
	t.d, t.rows = d, t.rows[:0]
	if d != nil && d.Payload != nil {
		for i := range d.Payload.Events {
			if i == maxDetailEvents {
				break
			}
			t.rows = append(t.rows, present.EventRow{D: d, I: i})
		}
	}
	cols := present.EventColumns
	if len(t.now) > 0 {
		now := t.now
		cols = append(slices.Clone(cols), present.EvNowColumn(func(i int) string { return now[i] }))
	}
	t.cols = present.FitColumns(cols, t.rows)
	t.SetSize(t.width, t.height+1)
}

func (t *eventTable) SetSize(w, h int) {
	t.width, t.height = w, max(1, h-1)
	if t.cols == nil {
		t.cols = present.EventColumns
	}
	t.widths = present.Layout(t.cols, w-2)
	t.clamp()
}

func (t *eventTable) clamp() { t.cursor, t.offset = window(t.cursor, t.offset, t.height, len(t.rows)) }

func (t *eventTable) move(n int) {
	t.cursor += n
	t.clamp()
}

// click puts the cursor on the row at line y of the table (its header is line 0).
func (t *eventTable) click(y int) {
	if r := t.offset + y - 1; y >= 1 && y <= t.height && r < len(t.rows) {
		t.cursor = r
		t.clamp()
	}
}

// position says which events are on screen.
func (t *eventTable) position() string {
	if len(t.rows) == 0 {
		return ""
	}
	// Numbered as the # column and the JSON's index number them: from 0.
	s := fmt.Sprintf("event #%d (%d events: #0–#%d)", t.rows[t.cursor].I, len(t.rows), len(t.rows)-1)
	if t.d != nil && len(t.d.Payload.Events) > len(t.rows) {
		s += fmt.Sprintf(" (the first %d of %d: show --json has them all)", len(t.rows), len(t.d.Payload.Events))
	}
	return s
}

// View draws the column header and the rows on screen: exactly width × height+1.
func (t *eventTable) View() string {
	st := t.st
	var head []string
	for i, c := range t.cols {
		if t.widths[i] > 0 {
			head = append(head, c.Fit(c.Title, t.widths[i]))
		}
	}
	var b strings.Builder
	b.WriteString(st.Header.Render(fit("  "+strings.Join(head, " "), t.width, 1)))
	if len(t.rows) == 0 {
		b.WriteString("\n" + st.Dim.Render("  no events"))
		return fit(b.String(), t.width, t.height+1)
	}
	end := min(len(t.rows), t.offset+t.height)
	cells := make([]string, 0, len(t.cols))
	for r := t.offset; r < end; r++ {
		row := t.rows[r]
		cells = cells[:0]
		for i, c := range t.cols {
			if t.widths[i] > 0 {
				cells = append(cells, c.Fit(c.Cell(row), t.widths[i]))
			}
		}
		mark := "  "
		if r == t.cursor {
			mark = "▸ "
		}
		line := fit(mark+strings.Join(cells, " "), t.width, 1)
		vs, _ := row.D.EventVerdicts(row.I)
		switch {
		case r == t.cursor:
			line = st.Cursor.Render(line)
		case vs.Has(rules.VerdictReplay) && !vs.Has(rules.VerdictCap):
			line = st.OK.Render(line)
		case vs != 0:
			line = st.Warn.Render(line)
		}
		b.WriteString("\n" + line)
	}
	return fit(b.String(), t.width, t.height+1)
}

// eventView is one event's JSON, pretty-printed and searchable, over the detail: enter on an event opens it.
type eventView struct {
	e      *env
	d      *replay.Detail
	i      int
	text   pager
	search bool
	// moved says the blob changed or left since this event was read (the detail below says where it went).
	moved bool
	// journey is the event's passes across blobs (trace's, read in a command: tracing says so until it comes);
	// pass is the one [ and ] select, enter opens.
	journey *rules.Journey
	tracing bool
	jerr    string
	pass    int
	unread  int
	seq     int
	w, h    int
}

// journeyMsg is an event's journey, read.
type journeyMsg struct {
	seq    int
	j      *rules.Journey
	err    error
	unread int // blobs not read yet, left out (PlanTraceIndexed)
}

var eventViewSeq atomic.Int64

func newEventView(e *env, d *replay.Detail, i int) *eventView {
	v := &eventView{e: e, d: d, i: i, text: newPager(e.st), seq: int(eventViewSeq.Add(1)), tracing: true}
	v.build()
	return v
}

// trace follows the event across blobs: the blobs that may hold it are picked now (from the snapshot), read in
// the command, with the record's actions on them.
func (v *eventView) trace() tea.Cmd {
	if v.i >= len(v.d.Judgements) {
		v.tracing = false
		return nil
	}
	plan := v.e.loader.PlanTraceIndexed(v.e.snap, []string{v.d.Judgements[v.i].Original})
	s, ctx, seq := v.e.sess, v.e.ctx, v.seq
	unread := plan.Unread
	return func() tea.Msg {
		var touches []rules.Touch
		if s != nil {
			if h, err := s.History(ctx); err == nil {
				touches = record.Touches(h.Records)
			}
		}
		js, _, err := plan.Run(ctx, touches)
		if err != nil || len(js) == 0 {
			return journeyMsg{seq: seq, err: err}
		}
		return journeyMsg{seq: seq, j: &js[0], unread: unread}
	}
}

// build lays out the event: its header, its journey (one line a pass, the selected one marked), its JSON.
func (v *eventView) build() {
	d, i, e := v.d, v.i, v.e
	ev := d.Payload.Events[i]
	var lines []string
	vs := present.EventVerdictShort(d, i)
	lines = append(lines, e.st.Title.Render(fmt.Sprintf("event #%d of %s", ev.Index, textfmt.Printable(d.Name))),
		fmt.Sprintf("verdict %s · attempt %s · published %s · last try %s", vs, present.EvAttempt.Cell(present.EventRow{D: d, I: i}),
			textfmt.TimeText(ev.PublishTime), textfmt.TimeText(ev.LastDeliveryAttemptTime)), "")
	switch {
	case v.tracing:
		lines = append(lines, e.st.Dim.Render("journey: following it across the container…"))
	case v.jerr != "":
		lines = append(lines, e.st.Warn.Render("journey: could not follow it: "+textfmt.Printable(v.jerr)))
	case v.journey != nil && len(v.journey.Passes) > 0:
		lines = append(lines, "journey: "+present.JourneyHeadline(*v.journey, e.cfg, e.serviceNow()))
		for n, p := range v.journey.Passes {
			mark := "  "
			if n == v.pass {
				mark = "▸ "
			}
			lines = append(lines, mark+present.PassLine(n+1, p, e.cfg.Separator))
		}
		if v.unread > 0 {
			lines = append(lines, e.st.Dim.Render(fmt.Sprintf("(%d blob(s) not read yet: a pass in one of them is not told; deadletter trace reads them all)", v.unread)))
		}
	}
	lines = append(lines, "")
	for _, l := range strings.Split(present.PrettyJSON(ev.Raw), "\n") {
		lines = append(lines, textfmt.Printable(l))
	}
	v.text.setLines(lines)
}

func (v *eventView) SetSize(w, h int) { v.w, v.h = w, h; v.text.SetSize(w, h-1) }

func (v *eventView) Update(msg tea.Msg) (component, tea.Cmd) {
	if _, ok := msg.(followMsg); ok {
		i, found := v.e.snap.Lookup(v.d.Name)
		v.moved = !found || v.e.snap.Items[i].ETag != v.d.ETag
		return v, nil
	}
	if m, ok := msg.(journeyMsg); ok && m.seq == v.seq {
		v.tracing, v.journey, v.unread = false, m.j, m.unread
		if m.err != nil {
			v.jerr = m.err.Error()
		}
		if v.journey != nil {
			v.pass = len(v.journey.Passes) - 1 // (where it stands now)
		}
		v.build()
		return v, nil
	}
	if k, ok := msg.(tea.KeyPressMsg); ok && v.search {
		var cmd tea.Cmd
		v.text.search, cmd = v.text.search.Update(k)
		return v, cmd
	}
	return v, nil
}

func (v *eventView) Scope() *scope {
	if v.search {
		return &scope{name: "search", modal: true, typing: true, bindings: []binding{
			bind([]string{"enter"}, "enter", "find", func() tea.Cmd {
				v.search = false
				v.text.search.Blur()
				v.text.setQuery(v.text.search.Value())
				return nil
			}).footer(),
			bind([]string{"esc"}, "esc", "cancel", func() tea.Cmd { v.search = false; v.text.search.Blur(); return nil }).footer(),
		}}
	}
	noMatch := func() string {
		if len(v.text.matches) == 0 {
			return "no search, or nothing found (press / to search)"
		}
		return ""
	}
	return &scope{name: "event", bindings: append([]binding{
		bind([]string{"esc"}, "esc", "back to the blob", func() tea.Cmd { return v.e.send(closeMsg{}) }).footer(),
		bind([]string{"y"}, "y", "copy the event's JSON", func() tea.Cmd {
			return v.e.send(copyMsg{what: "event's JSON", text: string(v.d.Payload.Events[v.i].Raw)})
		}).footer(),
		bind([]string{"/"}, "/", "search", func() tea.Cmd {
			v.search = true
			v.text.search.SetValue(v.text.query)
			return v.text.search.Focus()
		}).footer(),
		bind([]string{"]"}, "]", "the journey's next pass", func() tea.Cmd { v.movePass(1); return nil }).when(v.noPasses).footer(),
		bind([]string{"["}, "[", "the journey's previous pass", func() tea.Cmd { v.movePass(-1); return nil }).when(v.noPasses),
		bind([]string{"enter"}, "enter", "open the selected pass's blob, where it is now", v.openPass).when(v.noPasses).footer(),
		bind([]string{"n"}, "n", "next match", func() tea.Cmd { v.text.next(1); return nil }).when(noMatch),
		bind([]string{"N"}, "N", "previous match", func() tea.Cmd { v.text.next(-1); return nil }).when(noMatch),
		bind([]string{"up", "k"}, "↑/k", "scroll up", func() tea.Cmd { v.text.scroll(-1); return nil }),
		bind([]string{"down", "j"}, "↓/j", "scroll down", func() tea.Cmd { v.text.scroll(1); return nil }),
		bind([]string{"pgup"}, "pgup", "page up", func() tea.Cmd { v.text.scroll(-v.text.h); return nil }),
		bind([]string{"pgdown", "space"}, "pgdn", "page down", func() tea.Cmd { v.text.scroll(v.text.h); return nil }),
		bind([]string{"home", "g"}, "g", "top", func() tea.Cmd { v.text.toTop(); return nil }),
		bind([]string{"end", "G"}, "G", "bottom", func() tea.Cmd { v.text.toBottom(); return nil }),
	}, payloadKeys(v.e, v.d.Name, nil)...)}
}

func (v *eventView) View() string {
	bar := v.e.paint(&v.e.st.Dim, v.text.position())
	if v.moved {
		bar = v.e.paint(&v.e.st.Warn, "this blob changed or left since this event was read: esc shows where it is now") + "  " + bar
	}
	if v.search {
		bar = v.text.search.View()
	}
	return fit(fit(bar, v.w, 1)+"\n"+v.text.View(), v.w, v.h)
}

func (v *eventView) mouse(msg tea.MouseMsg, _ int) tea.Cmd {
	v.text.scroll(wheel(msg))
	return nil
}

// noPasses says why the pass keys do nothing ("" when there is a journey to move in).
func (v *eventView) noPasses() string {
	if v.journey == nil || len(v.journey.Passes) == 0 {
		return "no journey yet"
	}
	return ""
}

func (v *eventView) movePass(by int) {
	if v.journey == nil {
		return
	}
	v.pass = min(max(v.pass+by, 0), len(v.journey.Passes)-1)
	v.build()
}

// openPass opens the blob the selected pass is in now (its replay copy, its restored copy, or where it waits).
func (v *eventView) openPass() tea.Cmd {
	if v.journey == nil || v.pass >= len(v.journey.Passes) {
		return nil
	}
	p := v.journey.Passes[v.pass]
	name := p.Where
	if name == "" {
		name = p.Blob
	}
	return v.e.send(openBlobMsg{name: name})
}
