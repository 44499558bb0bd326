package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

// tableColumns are the table's columns, as data (internal/present): what each shows, how much room it wants and
// gives up, how it sorts. The dashboard keeps the subscription and the verdicts before the reason on a narrow
// terminal, and gives spare width to the name.
var tableColumns = present.DashboardColumns

// markWidth is the row marker: cursor, selection, and H (handled) or A (acknowledged).
const markWidth = 3

// table is one pane's list of blobs: the pane's items in sort order, the rows that pass the filter (indexes into
// the snapshot), a cursor and an offset. Only the rows on screen are ever rendered. Its keys act on what it shows:
// the selection, else the row under the cursor.
type table struct {
	pane     rules.Pane
	order    []int // every item of the pane, sorted
	pending  []int // items that arrived since the last flush, not yet sorted in
	rows     []int // the ones that pass the filter, in order
	cursor   int
	offset   int
	height   int
	width    int
	widths   []int
	sortBy   string    // a column ID
	match    rowFilter // the filter its rows pass (nil: none)
	desc     bool
	selected map[string]bool
	// keep is the blob the cursor was on when the snapshot's positions last changed (a sweep): order and rows
	// still hold the old positions until the next reset, which puts the cursor back on it. pinned holds the
	// cursor's blob through a sort, even at the top.
	keep, pinned string
	// lines is the height SetSize gave: the header and height rows, or only the header in one line.
	lines int

	// filtered is the filter the root applies to every pane ("" when none) and filterErr why it does not parse
	// (what the table says when it shows nothing): set by filterSetMsg.
	filtered, filterErr string

	e    *env
	snap *rules.Snapshot // the root's, which its rows index; the table only reads it
	cfg  rules.Config
	st   *Styles
	head struct{ key, line string } // the painted column header, kept until the widths or the sort change
	keys *scope
}

// rowFilter is the filter a table shows rows through (nil: every row).
type rowFilter func(item int) bool

func newTable(p rules.Pane, e *env) *table {
	// Oldest first: the blob closest to being lost is the one to look at.
	t := &table{pane: p, selected: map[string]bool{}, sortBy: "age", desc: true, e: e, snap: e.snap, cfg: e.cfg, st: e.st}
	t.keys = t.scope()
	t.SetSize(minW, minH)
	return t
}

// Scope implements component.
func (t *table) Scope() *scope { return t.keys }

// Messages the root sends every table (a table changes its own state; the root never writes it).
type (
	// filterSetMsg applies a filter: its words, why they do not parse ("" when they do) and the rows it keeps.
	filterSetMsg struct {
		text, err string
		match     rowFilter
	}
	// sweepMsg says the snapshot's positions are about to change (a sweep): the table holds on to the blob its
	// cursor is on until its next reset (hold false: the reset did not come, let go).
	sweepMsg struct{ hold bool }
)

// Update implements component: a table takes no replies of its own, only what the root tells every pane.
func (t *table) Update(msg tea.Msg) (component, tea.Cmd) {
	switch msg := msg.(type) {
	case filterSetMsg:
		t.filtered, t.filterErr = msg.text, msg.err
		t.refilter(msg.match, t.cursorName())
	case sortSetMsg:
		t.setSort(msg.col, msg.desc)
	case themeMsg:
		t.head.key = "" // painted again in the new theme's colours
	case sweepMsg:
		t.keep = ""
		if msg.hold {
			t.keep = t.cursorName()
		}
	}
	return t, nil
}

// arrive takes item i of the snapshot, new in this table's pane: sorted in at the next flush.
func (t *table) arrive(i int) { t.pending = append(t.pending, i) }

// scope is the table's keys, each one of its methods. The actions come first: the key line keeps them at 80
// columns.
func (t *table) scope() *scope {
	moveBy := func(n func() int) func() tea.Cmd { return func() tea.Cmd { t.move(n()); return nil } }
	return &scope{name: t.pane.String() + " table", bindings: []binding{
		bind([]string{"d"}, "d", "drain the selection, else the row under the cursor (ctrl+a selects every row shown)", t.drain).footer().when(t.drainOff),
		bind([]string{"r"}, "r", "restore the selection, else the row under the cursor (ctrl+a selects every row shown)", t.restore).footer().when(t.restoreOff),
		bind([]string{"a"}, "a", "ack the selection, else the row under the cursor (on acknowledged blobs: clear)", t.ack).footer().when(t.ackOff),
		bind([]string{"enter"}, "enter", "open the blob", t.open).footer().when(t.emptyOff),
		bind([]string{"space"}, "space", "select, and move down", func() tea.Cmd { t.toggle(); t.move(1); return nil }).footer().when(t.emptyOff),
		bind([]string{"/"}, "/", "filter", func() tea.Cmd { return t.e.send(editFilterMsg{}) }).footer(),
		bind([]string{"s"}, "s", "sort by the next column", t.nextSort).footer(),
		bind([]string{"S"}, "S", "reverse the sort", func() tea.Cmd { t.desc = !t.desc; t.resort(t.match); return nil }),
		bind([]string{"ctrl+a"}, "ctrl+a", "select every row shown (then d, r or a acts on them all)", func() tea.Cmd { t.selectAll(); return nil }).when(t.emptyOff),
		bind([]string{"esc"}, "esc", "clear the filter, else the selection", t.escape).when(func() string {
			if t.filtered == "" && len(t.selected) == 0 {
				return "no filter and nothing selected"
			}
			return ""
		}),
		bind([]string{"up", "k"}, "↑/k", "up", moveBy(func() int { return -1 })),
		bind([]string{"down", "j"}, "↓/j", "down", moveBy(func() int { return 1 })),
		bind([]string{"pgup", "ctrl+u"}, "pgup", "page up", moveBy(func() int { return -t.height })),
		bind([]string{"pgdown", "ctrl+d"}, "pgdn", "page down", moveBy(func() int { return t.height })),
		bind([]string{"home", "g"}, "g", "top", moveBy(func() int { return -len(t.rows) })),
		bind([]string{"end", "G"}, "G", "bottom", moveBy(func() int { return len(t.rows) })),
		bind([]string{"y"}, "y", "copy the name (of every selected row, one per line)", t.copyNames).when(t.emptyOff),
		bind([]string{"Y"}, "Y", "copy the raw JSON of the row under the cursor", t.copyJSON).when(t.emptyOff),
	}}
}

func (t *table) emptyOff() string {
	if len(t.rows) == 0 {
		return "no blob here"
	}
	return ""
}

func (t *table) drainOff() string {
	switch {
	case t.e.readOnly:
		return readOnlyWhy
	case t.pane != rules.PaneStranded:
		return "drain applies to stranded blobs (press 1 for the stranded pane)"
	}
	return t.emptyOff()
}

func (t *table) restoreOff() string {
	switch {
	case t.e.readOnly:
		return readOnlyWhy
	case t.pane != rules.PaneQuarantine:
		return "restore applies to quarantined blobs (press 2 for the quarantine pane)"
	}
	return t.emptyOff()
}

func (t *table) ackOff() string {
	switch {
	case t.e.readOnly:
		return readOnlyWhy
	case t.pane == rules.PaneArchived:
		return "an ack means nothing for the replay's archived records"
	case !canAck(t.e):
		return "this container cannot keep acknowledgements"
	}
	return t.emptyOff()
}

const readOnlyWhy = "read-only mode (--read-only): drain, restore and ack are off"

// act asks for an action on the selection, else the row under the cursor, saying which.
func (t *table) act(a action) tea.Cmd {
	items, limit := t.targets()
	return t.e.send(askMsg{act: a, items: items, limit: limit})
}

func (t *table) drain() tea.Cmd   { return t.act(actDrain) }
func (t *table) restore() tea.Cmd { return t.act(actRestore) }
func (t *table) ack() tea.Cmd     { return t.act(actAck) }

func (t *table) open() tea.Cmd {
	if it, ok := t.current(); ok {
		return t.e.send(openBlobMsg{it.Name})
	}
	return nil
}

func (t *table) nextSort() tea.Cmd {
	cols := t.sortables()
	i := 0
	for j, c := range cols {
		if c == t.sortBy {
			i = (j + 1) % len(cols)
		}
	}
	t.setSort(sortOf(cols[i])) // most first for ages, counts and attempts; names and hours A→Z
	return nil
}

// escape clears the filter first (what the operator last narrowed), then the selection.
func (t *table) escape() tea.Cmd {
	if t.filtered != "" {
		return t.e.send(clearFilterMsg{})
	}
	t.unselectAll()
	return t.e.status("selection cleared")
}

func (t *table) copyNames() tea.Cmd {
	items, _ := t.targets()
	names := make([]string, len(items))
	for i := range items {
		names[i] = items[i].Name
	}
	what := "name"
	if len(names) > 1 {
		what = fmt.Sprintf("%d names", len(names))
	}
	return t.e.send(copyMsg{what: what, text: strings.Join(names, "\n")})
}

func (t *table) copyJSON() tea.Cmd {
	if it, ok := t.current(); ok {
		return t.e.send(copyBlobMsg{it.Name})
	}
	return nil
}

// targets are what an action takes: the selection (in the order shown), else the row under the cursor, and the
// words that say so.
func (t *table) targets() ([]rules.Item, string) {
	var sel []rules.Item
	for _, i := range t.rows {
		if it := t.snap.Items[i]; t.selected[it.Name] {
			sel = append(sel, *it)
		}
	}
	if len(sel) > 0 {
		limit := fmt.Sprintf("the %d selected of %d %s shown", len(sel), len(t.rows), t.pane)
		if t.filtered != "" {
			limit += fmt.Sprintf(" (filter '%s')", textfmt.Printable(t.filtered))
		}
		return sel, limit
	}
	if it, ok := t.current(); ok {
		return []rules.Item{*it}, "the row under the cursor (space selects more; ctrl+a every row shown)"
	}
	return nil, ""
}

// unselectAll drops the selection.
func (t *table) unselectAll() { t.selected = map[string]bool{} }

// mouse: the wheel moves the cursor three rows; a click on a row puts the cursor there (y is the line within the
// table, its column header being 0).
func (t *table) mouse(msg tea.MouseMsg, y int) tea.Cmd {
	switch {
	case wheel(msg) != 0:
		t.move(wheel(msg))
	case clicked(msg):
		if r, ok := t.rowAt(y); ok {
			t.cursor = r
			t.clamp()
		}
	}
	return nil
}

// SetSize implements the component contract: the rows the table may draw (below its header line) and its width.
func (t *table) SetSize(w, h int) {
	t.width, t.height, t.lines = w, max(1, h-1), max(1, h)
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
		x, y := items[a], items[b]
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

// resort orders the rows by the current sort, keeping the cursor on its blob wherever it lands.
func (t *table) resort(match rowFilter) {
	keep := t.cursorName()
	t.pinned = keep
	slices.SortFunc(t.order, t.less())
	t.refilter(match, keep)
	t.pinned = ""
}

// refilter keeps the rows the filter accepts, in order, and puts the cursor back on keep when it passes.
func (t *table) refilter(match rowFilter, keep string) {
	t.match = match
	t.rows = t.rows[:0]
	for _, i := range t.order {
		if match == nil || match(i) {
			t.rows = append(t.rows, i)
		}
	}
	atTop := t.cursor == 0 && t.pinned == "" // the top stays the top as rows arrive; a cursor moved or a sort keeps its blob
	was := t.cursor
	t.cursor = 0
	if keep != "" && !atTop {
		t.cursor = was // (its blob gone — restored, drained away — the row that took its place, not the top)
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

func (t *table) clamp() { t.cursor, t.offset = window(t.cursor, t.offset, t.height, len(t.rows)) }

// window keeps a cursor on one of n rows and the rows shown (height of them, from offset) around it.
func window(cursor, offset, height, n int) (int, int) {
	cursor = max(0, min(cursor, n-1))
	if cursor < offset {
		offset = cursor
	}
	if cursor >= offset+height {
		offset = cursor - height + 1
	}
	return cursor, max(0, min(offset, n-height))
}

// wheel is how many rows a wheel event moves: three, up or down (0 for any other mouse event).
func wheel(msg tea.MouseMsg) int {
	w, ok := msg.(tea.MouseWheelMsg)
	switch {
	case !ok:
	case w.Button == tea.MouseWheelUp:
		return -3
	case w.Button == tea.MouseWheelDown:
		return 3
	}
	return 0
}

// clicked reports whether a mouse event is a press of the left button.
func clicked(msg tea.MouseMsg) bool {
	c, ok := msg.(tea.MouseClickMsg)
	return ok && c.Button == tea.MouseLeft
}

// move moves the cursor by n rows.
func (t *table) move(n int) {
	t.cursor += n
	t.clamp()
}

// current is the item under the cursor.
func (t *table) current() (*rules.Item, bool) {
	if t.cursor >= len(t.rows) || t.rows[t.cursor] >= len(t.snap.Items) {
		return nil, false // (positions from before a sweep: the reset that follows it fixes them)
	}
	return t.snap.Items[t.rows[t.cursor]], true
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
	it := t.snap.Items[idx]
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
	switch {
	case row == t.cursor:
		paint = st.paint.cursor
	case t.selected[it.Name]:
		paint = st.paint.chose
	case r.Alerts.Acked || r.Alerts.Handled || it.Pane == rules.PaneArchived:
		paint = st.paint.dim
	case r.Alerts.Expiring:
		paint = st.paint.alert
	case r.Alerts.Stalled || r.Alerts.Malformed || r.Alerts.Crash || r.Alerts.Untriggerable:
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
		mark := ""
		if c.ID == t.sortBy {
			mark = arrow
		}
		head = append(head, c.Head(w, mark))
	}
	line := strings.Join(head, " ")
	if t.head.key != line {
		t.head.key, t.head.line = line, fit(t.st.Header.Render(line), t.width, 1)
	}
	return t.head.line
}

// View renders exactly the lines SetSize gave (t.height+1, or the header alone in one) of t.width: the column header and the visible rows. With no row to show
// it says why.
func (t *table) View() string {
	filterErr, listing := t.filterErr, t.e.listing != nil && t.e.listing()
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
		return fit(b.String(), t.width, t.lines)
	}
	cells := make([]string, 0, len(tableColumns)+1)
	for n, idx := range t.visible() {
		b.WriteString("\n")
		cells = t.row(&b, cells[:0], idx, t.offset+n)
	}
	return fit(b.String(), t.width, t.lines)
}
