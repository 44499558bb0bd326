package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
)

// tableColumns are the table's columns, as data (internal/present): what each shows, how much room it wants and
// gives up, how it sorts. The dashboard keeps the subscription and the verdicts before the reason on a narrow
// terminal, and gives spare width to the name.
var tableColumns = []present.BlobColumn{
	with(present.ColSubscription, func(c *present.BlobColumn) { c.Priority, c.Max = 90, 22 }), // a wide terminal does not give it 58 columns
	with(present.ColHour, func(c *present.BlobColumn) { c.Priority = 40 }),
	with(present.ColFile, func(c *present.BlobColumn) { c.Priority, c.Max, c.Min = 60, 42, 12 }), // the name takes spare width first
	with(present.ColAge, func(c *present.BlobColumn) { c.Priority = 85 }),
	with(present.ColEvents, func(c *present.BlobColumn) { c.Priority = 70 }),
	with(present.ColReason, func(c *present.BlobColumn) { c.Priority, c.Grow = 55, true }), // then the reason, as long as it is
	with(present.ColAttempt, func(c *present.BlobColumn) { c.Priority = 50 }),
	with(present.ColVerdicts, func(c *present.BlobColumn) { c.Priority = 75 }),
	with(present.ColState, func(c *present.BlobColumn) { c.Priority = 35 }),
	with(present.ColDeletesIn, func(c *present.BlobColumn) { c.Priority = 80 }),
}

// with is a shared column as this table sets it out.
func with(c present.BlobColumn, set func(*present.BlobColumn)) present.BlobColumn { set(&c); return c }

// markWidth is the row marker: cursor, selection, and H (handled) or A (acknowledged).
const markWidth = 3

// table is one pane's list of blobs: the pane's items in sort order, the rows that pass the filter (indexes into
// the snapshot), a cursor and an offset. Only the rows on screen are ever rendered.
type table struct {
	pane     replay.Pane
	order    []int // every item of the pane, sorted
	pending  []int // items that arrived since the last flush, not yet sorted in
	rows     []int // the ones that pass the filter, in order
	cursor   int
	offset   int
	height   int
	width    int
	widths   []int
	sortBy   string // a column ID
	desc     bool
	selected map[string]bool
	// keep is the blob the cursor was on when the snapshot's positions last changed (a sweep): order and rows
	// still hold the old positions until the next reset, which puts the cursor back on it.
	keep string

	snap *replay.Snapshot // the root's, which its rows index; the table only reads it
	cfg  replay.Config
	st   *Styles
	head struct{ key, line string } // the painted column header, kept until the widths or the sort change
}

// rowFilter is the filter a table shows rows through (nil: every row).
type rowFilter func(item int) bool

func newTable(p replay.Pane, snap *replay.Snapshot, cfg replay.Config, st *Styles) *table {
	// Oldest first: the blob closest to being lost is the one to look at.
	t := &table{pane: p, selected: map[string]bool{}, sortBy: "age", desc: true, snap: snap, cfg: cfg, st: st}
	t.SetSize(minW, minH)
	return t
}

// SetSize implements the component contract: the rows the table may draw (below its header line) and its width.
func (t *table) SetSize(w, h int) {
	t.width, t.height = w, max(1, h-1)
	t.widths = present.Layout(tableColumns, w-markWidth-1)
	t.clamp()
}

func (t *table) column(id string) (present.BlobColumn, int) {
	for i, c := range tableColumns {
		if c.ID == id {
			return c, i
		}
	}
	return tableColumns[0], 0
}

// less orders two snapshot items by the current sort; equal keys by name, always ascending.
func (t *table) less() func(a, b int) int {
	c, _ := t.column(t.sortBy)
	items := t.snap.Items
	return func(a, b int) int {
		x, y := &items[a], &items[b]
		switch {
		case c.Less(x, y):
			if t.desc {
				return 1
			}
			return -1
		case c.Less(y, x):
			if t.desc {
				return -1
			}
			return 1
		}
		return strings.Compare(x.Name, y.Name)
	}
}

// reset takes the pane's items afresh (a rebuild): sorted once, filtered, the cursor kept on its blob.
func (t *table) reset(items []int, match rowFilter) {
	keep := t.keep
	if keep == "" {
		keep = t.cursorName()
	}
	t.keep = ""
	t.order, t.pending = items, nil
	for n := range t.selected {
		if i, ok := t.snap.Lookup(n); !ok || t.snap.Items[i].Pane != t.pane {
			delete(t.selected, n)
		}
	}
	slices.SortFunc(t.order, t.less())
	t.refilter(match, keep)
}

// takePending sorts the rows that arrived since the last flush into the order (a merge: the order is not sorted
// again) and filters them.
func (t *table) takePending(match rowFilter) {
	if len(t.pending) == 0 {
		return
	}
	keep := t.cursorName()
	cmp := t.less()
	slices.SortFunc(t.pending, cmp)
	merged := make([]int, 0, len(t.order)+len(t.pending))
	a, b := t.order, t.pending
	for len(a) > 0 && len(b) > 0 {
		if cmp(b[0], a[0]) < 0 {
			merged, b = append(merged, b[0]), b[1:]
		} else {
			merged, a = append(merged, a[0]), a[1:]
		}
	}
	t.order = append(append(merged, a...), b...)
	t.pending = nil
	t.refilter(match, keep)
}

// resort orders the rows by the current sort, keeping the cursor's blob.
func (t *table) resort(match rowFilter) {
	keep := t.cursorName()
	slices.SortFunc(t.order, t.less())
	t.refilter(match, keep)
}

// refilter keeps the rows the filter accepts, in order, and puts the cursor back on keep when it passes.
func (t *table) refilter(match rowFilter, keep string) {
	t.rows = t.rows[:0]
	for _, i := range t.order {
		if match == nil || match(i) {
			t.rows = append(t.rows, i)
		}
	}
	atTop := t.cursor == 0 // the top of the list stays the top as rows arrive; a cursor moved elsewhere keeps its blob
	t.cursor = 0
	if keep != "" && !atTop {
		for r, i := range t.rows {
			if t.snap.Items[i].Name == keep {
				t.cursor = r
				break
			}
		}
	}
	t.clamp()
}

// dropHidden unselects the blobs the filter no longer shows, and says how many.
func (t *table) dropHidden() int {
	shown := make(map[string]bool, len(t.selected))
	for _, i := range t.rows {
		if n := t.snap.Items[i].Name; t.selected[n] {
			shown[n] = true
		}
	}
	dropped := len(t.selected) - len(shown)
	t.selected = shown
	return dropped
}

// cursorName is the blob under the cursor, if any.
func (t *table) cursorName() string {
	if it, ok := t.current(); ok {
		return it.Name
	}
	return ""
}

func (t *table) clamp() {
	t.cursor = min(t.cursor, len(t.rows)-1)
	t.cursor = max(t.cursor, 0)
	if t.cursor < t.offset {
		t.offset = t.cursor
	}
	if t.cursor >= t.offset+t.height {
		t.offset = t.cursor - t.height + 1
	}
	t.offset = max(0, min(t.offset, len(t.rows)-t.height))
}

// move moves the cursor by n rows.
func (t *table) move(n int) {
	t.cursor += n
	t.clamp()
}

// current is the item under the cursor.
func (t *table) current() (*replay.Item, bool) {
	if t.cursor >= len(t.rows) || t.rows[t.cursor] >= len(t.snap.Items) {
		return nil, false // (positions from before a sweep: the reset that follows it fixes them)
	}
	return &t.snap.Items[t.rows[t.cursor]], true
}

// toggle selects or unselects the row under the cursor.
func (t *table) toggle() {
	if it, ok := t.current(); ok {
		if t.selected[it.Name] {
			delete(t.selected, it.Name)
		} else {
			t.selected[it.Name] = true
		}
	}
}

// selectAll selects every row shown.
func (t *table) selectAll() {
	for _, i := range t.rows {
		t.selected[t.snap.Items[i].Name] = true
	}
}

// shown returns the rows an action takes: the selection, else every row the filter shows.
func (t *table) shown() []replay.Item {
	var sel, all []replay.Item
	for _, i := range t.rows {
		it := t.snap.Items[i]
		all = append(all, it)
		if t.selected[it.Name] {
			sel = append(sel, it)
		}
	}
	if len(sel) > 0 {
		return sel
	}
	return all
}

// visible returns the snapshot indexes of the rows on screen.
func (t *table) visible() []int {
	end := min(len(t.rows), t.offset+t.height)
	return t.rows[t.offset:end]
}

// rowAt is the row index of a screen line of the table (line 0 is the column header).
func (t *table) rowAt(line int) (int, bool) {
	r := t.offset + line - 1
	return r, line >= 1 && line <= t.height && r < len(t.rows) // (below the rows on screen: the status line)
}

// sortables are the columns on screen the table can sort by, in order.
func (t *table) sortables() []string {
	var out []string
	for i, c := range tableColumns {
		if c.Less != nil && t.widths[i] > 0 {
			out = append(out, c.ID)
		}
	}
	return out
}

// row draws one blob's line into b, painted for the cursor, the selection and its alerts.
func (t *table) row(b *strings.Builder, cells []string, idx, row int) []string {
	it := &t.snap.Items[idx]
	r := present.RowOf(t.cfg, it, t.snap.Now)
	mark := []rune("   ")
	if row == t.cursor {
		mark[0] = '▸'
	}
	if t.selected[it.Name] {
		mark[1] = '*'
	}
	switch {
	case r.Alerts.Acked:
		mark[2] = 'A'
	case r.Alerts.Handled:
		mark[2] = 'H'
	}
	cells = append(cells, string(mark))
	for i, c := range tableColumns {
		if t.widths[i] > 0 {
			cells = append(cells, c.Fit(c.Cell(r), t.widths[i]))
		}
	}
	line := fit(strings.Join(cells, " "), t.width, 1)
	st := t.st
	paint := st.paint.row
	verdicts := present.ColVerdicts.Cell(r)
	switch {
	case row == t.cursor:
		paint = st.paint.cursor
	case t.selected[it.Name]:
		paint = st.paint.chose
	case r.Alerts.Acked || r.Alerts.Handled:
		paint = st.paint.dim
	case r.Alerts.Expiring:
		paint = st.paint.alert
	case r.Alerts.Stalled || verdicts == "MALFORMED" || verdicts == "CRASH":
		paint = st.paint.warn
	}
	paint.to(b, line)
	return cells
}

// header is the column header line, painted: the sort arrow always shows, however narrow its column.
func (t *table) header() string {
	arrow := "↑"
	if t.desc {
		arrow = "↓"
	}
	head := []string{strings.Repeat(" ", markWidth)}
	for i, c := range tableColumns {
		w := t.widths[i]
		if w == 0 {
			continue
		}
		title := c.Title
		if c.ID == t.sortBy {
			title = textfmt.Cell(title, w-1)
			title = strings.TrimRight(title, " ") + arrow
		}
		head = append(head, textfmt.Cell(title, w))
	}
	line := strings.Join(head, " ")
	if t.head.key != line {
		t.head.key, t.head.line = line, fit(t.st.Header.Render(line), t.width, 1)
	}
	return t.head.line
}

// View renders exactly t.height+1 lines of t.width: the column header and the visible rows. With no row to show
// it says why: filterErr is the filter's parse error, listing whether a listing is under way.
func (t *table) View(filterErr string, listing bool) string {
	st := t.st
	var b strings.Builder
	b.WriteString(t.header())
	if len(t.rows) == 0 {
		msg := "  nothing here"
		switch {
		case len(t.order) > 0 && filterErr != "":
			msg = fmt.Sprintf("  the filter does not parse, so nothing is shown (%d hidden): %s", len(t.order), filterErr)
		case len(t.order) > 0:
			msg = fmt.Sprintf("  no blob matches the filter (%d hidden)", len(t.order))
		case len(t.pending) > 0 || listing:
			msg = "  listing…"
		}
		b.WriteString("\n" + fit(st.Dim.Render(msg), t.width, 1))
		return fit(b.String(), t.width, t.height+1)
	}
	cells := make([]string, 0, len(tableColumns)+1)
	for n, idx := range t.visible() {
		b.WriteString("\n")
		cells = t.row(&b, cells[:0], idx, t.offset+n)
	}
	return fit(b.String(), t.width, t.height+1)
}
