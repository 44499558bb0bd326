package tui

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
)

// historyMsg is the record as read for L.
type historyMsg struct {
	seq     int
	records []record.Record
	skipped []*record.LineError
	err     error
}

// historyRow is one line of the history: a record's heading, or one of its blobs and what became of it.
type historyRow struct {
	header bool
	text   string
	// open is the blob enter opens: where the blob is now (its archived/ or quarantine/ copy, a restore's copy),
	// or its name when nothing of it is left to show.
	open string
	mine bool
	// record is the id of the record the row belongs to.
	record string
}

// The two steps of following a record's events (e), each off the Update path: the events' ids read from where its
// blobs are now, then their journeys.
type (
	historyEventsMsg struct {
		seq    int
		record string
		ev     record.HeldEvents
		err    error
	}
	historyJourneysMsg struct {
		seq    int
		record string
		js     map[record.Key][]rules.Journey
		err    error
	}
)

// historyView is L: the record of every action on this estate — the current incident's first, newest first,
// the operator's own marked — each blob with what became of it since, from the latest listing (the one rule of
// replay.WhereIs). Enter opens the blob where it is now.
type historyView struct {
	box
	seq     int
	loading bool
	err     string
	records []record.Record
	// skipped are the record's lines that could not be read (a newer build's, a cut or planted one): said, the
	// rest shown.
	skipped []*record.LineError
	rows    []historyRow
	cursor  int
	earlier int // the first row of the earlier incidents' records (-1: none)
	// events are the journeys of the events of the records followed (e), by record; following says which are
	// being read, or why one could not be.
	events    map[string]map[record.Key][]rules.Journey
	following map[string]string
}

var historySeq atomic.Int64

func newHistoryView(e *env) *historyView {
	return &historyView{box: newBox(e, "The record: every action on "+e.estate), seq: int(historySeq.Add(1)), loading: true, earlier: -1,
		events: map[string]map[record.Key][]rules.Journey{}, following: map[string]string{}}
}

// load reads the record (the local log and the shared audit container: a network call) in a command.
func (h *historyView) load() tea.Cmd {
	s, ctx, seq := h.e.sess, h.e.ctx, h.seq
	return func() tea.Msg {
		hist, err := s.History(ctx)
		return historyMsg{seq: seq, records: hist.Records, skipped: hist.Skipped, err: err}
	}
}

func (h *historyView) Update(msg tea.Msg) (component, tea.Cmd) {
	switch msg := msg.(type) {
	case historyMsg:
		if msg.seq != h.seq {
			return h, nil
		}
		h.loading = false
		if msg.err != nil {
			h.err = msg.err.Error()
			return h, nil
		}
		h.records, h.skipped = msg.records, msg.skipped
		h.rebuild()
	case followMsg:
		h.rebuild()
	case historyEventsMsg:
		if msg.seq != h.seq {
			return h, nil
		}
		if msg.err != nil {
			h.following[msg.record] = "could not read its blobs: " + msg.err.Error()
			h.rebuild()
			return h, nil
		}
		plan := h.e.loader.PlanTraceIndexed(h.e.snap, msg.ev.Originals) // (picked here, from the snapshot; read in the command)
		ctx, seq, id, touches := h.e.ctx, h.seq, msg.record, record.Touches(h.records)
		return h, func() tea.Msg {
			js, _, err := plan.Run(ctx, touches)
			return historyJourneysMsg{seq: seq, record: id, js: msg.ev.Journeys(js), err: err}
		}
	case historyJourneysMsg:
		if msg.seq != h.seq {
			return h, nil
		}
		delete(h.following, msg.record)
		if msg.err != nil {
			h.following[msg.record] = "could not follow its events: " + msg.err.Error()
		} else {
			h.events[msg.record] = msg.js
		}
		h.rebuild()
	}
	return h, nil
}

// followLabel says what e does on the record under the cursor: follow its events, or fold them.
func (h *historyView) followLabel() string {
	if h.cursor < len(h.rows) && h.events[h.rows[h.cursor].record] != nil {
		return "fold this action's events"
	}
	return "follow this action's events: where each is now, pass by pass"
}

// followEvents follows the events of the record under the cursor: where each is now, pass by pass since.
func (h *historyView) followEvents() tea.Cmd {
	if h.cursor >= len(h.rows) {
		return nil
	}
	id := h.rows[h.cursor].record
	i := slices.IndexFunc(h.records, func(r record.Record) bool { return r.Intent.ID == id })
	if i < 0 || h.following[id] == "reading its events…" {
		return nil
	}
	if h.events[id] != nil {
		delete(h.events, id) // (e again folds them away)
		h.rebuild()
		return nil
	}
	h.following[id] = "reading its events…"
	holds := record.Holders(h.e.ctx, h.e.snap, h.records[i:i+1])
	l, ctx, seq := h.e.loader, h.e.ctx, h.seq
	h.rebuild()
	return func() tea.Msg {
		ev, err := record.ReadEvents(ctx, l, holds)
		return historyEventsMsg{seq: seq, record: id, ev: ev, err: err}
	}
}

// incidentStart is when the current incident began, as the listing shows it: the oldest blob still waiting
// (stranded, quarantined, live); with none waiting, the last hour.
func incidentStart(s *rules.Snapshot) time.Time {
	start := s.Now.Add(-time.Hour)
	for i := range s.Items {
		it := s.Items[i]
		if it.Pane != rules.PaneArchived && it.LastModified.Before(start) {
			start = it.LastModified
		}
	}
	return start
}

// rebuild lays the records out as rows: the current incident's first, then the earlier ones, each newest first.
func (h *historyView) rebuild() {
	if h.e.snap == nil {
		return
	}
	start := incidentStart(h.e.snap)
	rs := slices.Clone(h.records)
	slices.SortStableFunc(rs, func(a, b record.Record) int {
		ca, cb := !a.Since().Before(start), !b.Since().Before(start)
		switch {
		case ca && !cb:
			return -1
		case cb && !ca:
			return 1
		}
		return b.Intent.Wall.Compare(a.Intent.Wall)
	})
	h.rows, h.earlier = nil, -1
	for _, r := range rs {
		if h.earlier < 0 && r.Since().Before(start) {
			h.earlier = len(h.rows)
		}
		in := r.Intent
		mine := r.Mine(h.e.sess.Who())
		who := in.Who.String()
		if mine {
			who += " (you)"
		}
		// The estate's clock (a rehearsal's: its twin's), as the blobs' times are — the box says which — and the
		// operator's own clock, marked *, only for an action that did not know it.
		when := in.Wall.Local().Format("01-02 15:04:05") + "*"
		if in.Service != nil {
			when = in.Service.UTC().Format("01-02 15:04:05")
		}
		head := fmt.Sprintf("%s  %s  %s by %s · %s · %s", when, strings.ToUpper(r.State()), in.Action, who, in.Via, r.Tally())
		first := ""
		var blobs []historyRow
		for f := range record.Follow(h.e.ctx, h.e.snap, r) {
			open := f.Name
			if f.Where.Name != "" && f.Where.Kind != replay.WhereDeleted {
				open = f.Where.Name
			}
			if first == "" {
				first = open
			}
			fate := f.Fate
			if f.Err != "" {
				fate = "could not be told: " + f.Err
			}
			outcome := f.Blob.Outcome
			if outcome == "" {
				outcome = "?"
			}
			// What became of it first, then which blob: a narrow box cuts the name, never the outcome.
			blobs = append(blobs, historyRow{text: fmt.Sprintf("%-9s → now %s · %s", outcome, fate, f.Blob.Name), open: open, mine: mine, record: in.ID})
			blobs = append(blobs, h.eventRows(in.ID, f.Blob.Name, open, mine)...)
		}
		if why := h.following[in.ID]; why != "" {
			head += " · " + why
		}
		h.rows = append(h.rows, historyRow{header: true, text: head, open: first, mine: mine, record: in.ID})
		h.rows = append(h.rows, blobs...)
	}
	h.cursor = max(0, min(h.cursor, len(h.rows)-1))
}

// eventRows are the rows of a record blob's events, once followed (e): a line an event, enter opening where it is.
func (h *historyView) eventRows(id, blob, open string, mine bool) []historyRow {
	var out []historyRow
	for _, j := range h.events[id][record.Key{Record: id, Blob: blob}] {
		where := open
		if len(j.Passes) > 0 && j.Passes[len(j.Passes)-1].Where != "" {
			where = j.Passes[len(j.Passes)-1].Where
		}
		out = append(out, historyRow{text: "  event " + textfmt.Printable(j.Original) + ": " + present.JourneySince(j, blob, h.e.cfg.Separator),
			open: where, mine: mine, record: id})
	}
	return out
}

func (h *historyView) open() tea.Cmd {
	if h.cursor >= len(h.rows) || h.rows[h.cursor].open == "" {
		return nil
	}
	return tea.Batch(h.e.send(closeMsg{}), h.e.send(openBlobMsg{h.rows[h.cursor].open}))
}

func (h *historyView) Scope() *scope {
	move := func(n int) func() tea.Cmd {
		return func() tea.Cmd { h.cursor = max(0, min(len(h.rows)-1, h.cursor+n)); return nil }
	}
	return &scope{name: "history", modal: true, bindings: []binding{
		bind([]string{"enter"}, "enter", "open the blob where it is now", h.open).footer().when(func() string {
			if len(h.rows) == 0 {
				return "no record to open"
			}
			return ""
		}),
		bind([]string{"e"}, "e", h.followLabel(), h.followEvents).footer(),
		bind([]string{"esc", "L"}, "esc", "close", func() tea.Cmd { return h.e.send(closeMsg{}) }).footer(),
		bind([]string{"up", "k"}, "↑/k", "previous", move(-1)),
		bind([]string{"down", "j"}, "↓/j", "next", move(1)),
		bind(nil, "↑↓", "move", nil).footer(), // (the footer says both ways in one: either may be the only one that moves)
		bind([]string{"pgup"}, "pgup", "page up", func() tea.Cmd { return move(-h.listHeight())() }),
		bind([]string{"pgdown"}, "pgdn", "page down", func() tea.Cmd { return move(h.listHeight())() }),
		bind([]string{"home", "g"}, "g", "first", move(-len(h.rows))),
		bind([]string{"end", "G"}, "G", "last", move(len(h.rows))),
		bind([]string{"q", "ctrl+c"}, "q", "quit", func() tea.Cmd { return h.e.send(quitMsg{}) }),
	}}
}

// skippedLines say the record's lines that could not be read: how many, and the first.
func (h *historyView) skippedLines() []string {
	if len(h.skipped) == 0 {
		return nil
	}
	return []string{h.e.st.Warn.Render(fmt.Sprintf("%d line(s) of the record could not be read and are skipped (deadletter log names each): %s",
		len(h.skipped), textfmt.Printable(h.skipped[0].Error())))}
}

// listHeight is how many rows the box shows at once.
func (h *historyView) listHeight() int { return max(1, h.h-2-6-len(h.body.lines)) }

func (h *historyView) View() string {
	st := h.e.st
	switch {
	case h.loading:
		h.body.setLines([]string{st.Dim.Render("reading the record…")})
		return h.render(nil, h.Scope())
	case h.err != "":
		h.body.setLines([]string{st.Error.Render(textfmt.Printable(h.err))})
		return h.render(nil, h.Scope())
	case len(h.rows) == 0:
		h.body.setLines(append([]string{"No action is recorded on this estate yet."}, h.skippedLines()...))
		return h.render(nil, h.Scope())
	}
	clock := "the service's clock (UTC)"
	if h.e.sess != nil && h.e.sess.Rehearsal() {
		clock = "the twin's clock"
	}
	h.body.setLines(append([]string{st.Dim.Render(fmt.Sprintf("%d record(s), the current incident's first, newest first · ★ yours · times on %s (* yours)", len(h.records), clock))}, h.skippedLines()...))
	rows, w := h.listHeight(), h.inner-4
	// The row under the cursor whole, wrapped (a fate names the copy the blob became); the rest cut to a line.
	cur := h.rows[h.cursor].text
	if !h.rows[h.cursor].header {
		cur = "    " + cur
	}
	wrapped := strings.Split(textfmt.Wrap(textfmt.Printable(cur), w, "/-. "), "\n")
	rows = max(1, rows-len(wrapped)+1)
	top := max(0, min(h.cursor-rows/2, len(h.rows)-rows))
	var pinned []string
	for i := top; i < min(len(h.rows), top+rows); i++ {
		row := h.rows[i]
		if i == h.earlier {
			pinned = append(pinned, st.Dim.Render("  — earlier incidents —"))
		}
		mark := "  "
		if row.mine && row.header {
			mark = "★ "
		}
		text := textfmt.Printable(row.text)
		if !row.header {
			text = "    " + text
		}
		line := mark + textfmt.Cell(ansi.Truncate(text, w, "…"), w)
		switch {
		case i == h.cursor:
			for j, l := range wrapped {
				m := "  "
				if j == 0 {
					m = mark
				}
				pre := " "
				if j == 0 {
					pre = "▸"
				}
				pinned = append(pinned, st.Cursor.Render(pre+m+textfmt.Cell(l, w)))
			}
		case row.header:
			pinned = append(pinned, " "+st.Title.Render(line))
		default:
			pinned = append(pinned, " "+line)
		}
	}
	if len(h.rows) > rows {
		pinned = append(pinned, st.Dim.Render(fmt.Sprintf("  row %d of %d", h.cursor+1, len(h.rows))))
	}
	return h.render(pinned, h.Scope())
}

func (h *historyView) overlay() {}
