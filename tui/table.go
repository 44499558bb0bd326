package tui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/mattn/go-runewidth"
)

// sortKey is a column the table can be sorted by.
type sortKey int

const (
	sortAge sortKey = iota
	sortExpiry
	sortEvents
	sortSubscription
	sortAttempt
	sortCount
)

var sortNames = [...]string{"age", "deletion", "events", "subscription", "attempt"}

// sortColumn is the column each sort key orders by.
var sortColumn = [...]int{sortAge: 3, sortExpiry: 8, sortEvents: 4, sortSubscription: 1, sortAttempt: 6}

// table is one pane's list of blobs: the pane's items in sort order, the rows that pass the filter (indexes into
// the snapshot), a cursor and an offset. Only the rows on screen are ever rendered.
type table struct {
	pane     replay.Pane
	order    []int // every item of the pane, sorted
	rows     []int // the ones that pass the filter, in order
	total    int
	cursor   int
	offset   int
	height   int
	width    int
	sort     sortKey
	desc     bool
	selected map[string]bool
}

func newTable(p replay.Pane) *table {
	// Oldest first: the blob closest to being lost is the one to look at.
	return &table{pane: p, selected: map[string]bool{}, desc: true}
}

// SetSize implements the component contract: the number of rows the table may draw and its width.
func (t *table) SetSize(w, h int) {
	t.width, t.height = w, max(1, h)
	t.clamp()
}

// SetItems takes the pane's items of a new snapshot: they are sorted once, then filtered. The cursor stays on
// the same blob when it is still there; selections of blobs that are gone are dropped.
func (t *table) SetItems(s *replay.Snapshot, items []int, match func(int) bool) {
	keep := t.cursorName(s)
	t.order, t.total = items, len(items)
	for n := range t.selected {
		if i, ok := s.Lookup(n); !ok || s.Items[i].Pane != t.pane {
			delete(t.selected, n)
		}
	}
	t.sortOrder(s)
	t.Filter(s, match, keep)
}

// cursorName is the blob under the cursor, if any.
func (t *table) cursorName(s *replay.Snapshot) string {
	if s != nil && t.cursor < len(t.rows) && t.rows[t.cursor] < len(s.Items) {
		return s.Items[t.rows[t.cursor]].Name
	}
	return ""
}

// Filter keeps the rows match accepts (nil: all), in sort order, and puts the cursor back on keep when it passes.
func (t *table) Filter(s *replay.Snapshot, match func(int) bool, keep string) {
	t.rows = t.rows[:0]
	for _, i := range t.order {
		if match == nil || match(i) {
			t.rows = append(t.rows, i)
		}
	}
	t.cursor = 0
	for i, r := range t.rows {
		if keep != "" && s.Items[r].Name == keep {
			t.cursor = i
			break
		}
	}
	t.clamp()
}

// matcher filters a snapshot case-insensitively on blob names, reasons and outcomes. Each item's lower-cased
// search key is built once (again when its payload summary arrives), so a filter pass is one substring search
// per item.
type matcher struct {
	snap    *replay.Snapshot
	keys    []string
	summary []*replay.Summary // the summary each key was built with
}

func (mt *matcher) reset(s *replay.Snapshot) { *mt = matcher{snap: s} }

// fn returns the filter for f, nil for no filter.
func (mt *matcher) fn(f string) func(int) bool {
	if f == "" || mt.snap == nil {
		return nil
	}
	if mt.keys == nil {
		mt.keys = make([]string, len(mt.snap.Items))
		mt.summary = make([]*replay.Summary, len(mt.snap.Items))
	}
	f = strings.ToLower(f)
	return func(i int) bool {
		it := &mt.snap.Items[i]
		if mt.keys[i] == "" || mt.summary[i] != it.Summary {
			mt.keys[i], mt.summary[i] = searchKey(it), it.Summary
		}
		return strings.Contains(mt.keys[i], f)
	}
}

func searchKey(it *replay.Item) string {
	var b strings.Builder
	b.WriteString(it.Name)
	if s := it.Summary; s != nil {
		for _, cs := range []replay.Counts{s.Reasons, s.Outcomes} {
			for _, c := range cs {
				b.WriteByte(0)
				b.WriteString(c.Value)
			}
		}
	}
	return strings.ToLower(b.String())
}

// Sort re-sorts by the current key, keeping the filter and the cursor's blob.
func (t *table) Sort(s *replay.Snapshot, match func(int) bool) {
	keep := t.cursorName(s)
	t.sortOrder(s)
	t.Filter(s, match, keep)
}

func (t *table) sortOrder(s *replay.Snapshot) {
	less := func(a, b *replay.Item) bool {
		switch t.sort {
		case sortExpiry:
			return a.ExpiresAt.After(b.ExpiresAt)
		case sortEvents:
			return events(a) < events(b)
		case sortSubscription:
			return a.Parsed.Subscription > b.Parsed.Subscription
		case sortAttempt:
			return attempt(a) < attempt(b)
		}
		return a.Age < b.Age
	}
	sort.SliceStable(t.order, func(i, j int) bool {
		a, b := &s.Items[t.order[i]], &s.Items[t.order[j]]
		if less(a, b) == less(b, a) { // equal keys: by name, always ascending
			return a.Name < b.Name
		}
		return less(a, b) != t.desc
	})
}

func events(it *replay.Item) int {
	if it.Summary == nil {
		return -1
	}
	return it.Summary.Events
}

func attempt(it *replay.Item) replay.Attempt {
	if it.Summary == nil {
		return -1
	}
	return it.Summary.MaxReplayAttempt
}

func (t *table) clamp() {
	if t.cursor >= len(t.rows) {
		t.cursor = len(t.rows) - 1
	}
	if t.cursor < 0 {
		t.cursor = 0
	}
	if t.cursor < t.offset {
		t.offset = t.cursor
	}
	if t.cursor >= t.offset+t.height {
		t.offset = t.cursor - t.height + 1
	}
	if t.offset > max(0, len(t.rows)-t.height) {
		t.offset = max(0, len(t.rows)-t.height)
	}
	if t.offset < 0 {
		t.offset = 0
	}
}

// Move moves the cursor by n rows.
func (t *table) Move(n int) {
	t.cursor += n
	t.clamp()
}

// Current is the item under the cursor.
func (t *table) Current(s *replay.Snapshot) (*replay.Item, bool) {
	if s == nil || t.cursor >= len(t.rows) {
		return nil, false
	}
	return &s.Items[t.rows[t.cursor]], true
}

// Toggle selects or unselects the row under the cursor.
func (t *table) Toggle(s *replay.Snapshot) {
	if it, ok := t.Current(s); ok {
		if t.selected[it.Name] {
			delete(t.selected, it.Name)
		} else {
			t.selected[it.Name] = true
		}
	}
}

// SelectAll selects every row shown.
func (t *table) SelectAll(s *replay.Snapshot) {
	for _, r := range t.rows {
		t.selected[s.Items[r].Name] = true
	}
}

// Selection returns the selected items in row order.
func (t *table) Selection(s *replay.Snapshot) []replay.Item {
	var out []replay.Item
	for _, r := range t.rows {
		if t.selected[s.Items[r].Name] {
			out = append(out, s.Items[r])
		}
	}
	return out
}

// Visible returns the snapshot indexes of the rows on screen.
func (t *table) Visible() []int {
	end := min(len(t.rows), t.offset+t.height)
	return t.rows[t.offset:end]
}

type column struct {
	title string
	width int
}

func (t *table) columns() []column {
	fixed := []column{{"", 2}, {"SUBSCRIPTION", 0}, {"HOUR", 9}, {"AGE", 7}, {"EVS", 4}, {"REASON / OUTCOME", 0}, {"ATT", 3}, {"VERDICTS", 11}, {"DELETE IN", 9}}
	used := len(fixed) - 1
	for _, c := range fixed {
		used += c.width
	}
	free := max(t.width-used, 10)
	fixed[1].width = max(8, free*2/5)
	fixed[5].width = max(2, free-fixed[1].width)
	return fixed
}

// cell pads or cuts text (already made printable) to exactly w columns.
func cell(s string, w int) string {
	if runewidth.StringWidth(s) > w {
		return runewidth.Truncate(s, w, "…")
	}
	return runewidth.FillRight(s, w)
}

// View renders exactly t.height+1 lines: the column header and the visible rows.
func (t *table) View(s *replay.Snapshot, st Styles, now time.Time, cfg replay.Config, expiring time.Duration, focused bool) string {
	cols := t.columns()
	var b strings.Builder
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = cell(c.title, c.width)
		if i == 0 {
			head[i] = cell("", c.width)
		}
	}
	sortCol := sortColumn[t.sort]
	arrow := "↑"
	if t.desc {
		arrow = "↓"
	}
	head[sortCol] = cell(strings.TrimRight(head[sortCol], " ")+arrow, cols[sortCol].width)
	b.WriteString(st.Header.Render(strings.Join(head, " ")))
	if len(t.rows) == 0 {
		msg := "  nothing here"
		if t.total > 0 {
			msg = fmt.Sprintf("  no blob matches the filter (%d hidden)", t.total)
		}
		b.WriteString("\n" + st.Dim.Render(msg))
		return b.String()
	}
	for n, idx := range t.Visible() {
		it := &s.Items[idx]
		row := t.offset + n
		mark := " "
		if row == t.cursor && focused {
			mark = "▸"
		}
		if t.selected[it.Name] {
			mark += "*"
		} else {
			mark += " "
		}
		sub := it.Parsed.Subscription
		if sub == "" {
			sub = it.Name
		}
		hour := "-"
		if !it.Parsed.Hour.IsZero() {
			hour = it.Parsed.Hour.Format("01-02 15h")
		}
		age := textfmt.Duration(it.Age)
		stalled := it.Pane == replay.PaneLive && it.Age > cfg.LiveGrace
		if stalled {
			age = "!" + age
		}
		ev, reason, att, verdicts := "…", "", "", "…"
		if sm := it.Summary; sm != nil {
			ev = strconv.Itoa(sm.Events)
			reason = sm.Reasons.Top()
			if o := sm.Outcomes.Top(); o != "" {
				reason += "/" + o
			}
			att = sm.MaxReplayAttempt.String()
			if sm.Uncountable > 0 {
				att += "∞"
			}
			verdicts = verdictSummary(sm)
		} else if it.ReadErr != "" {
			ev, verdicts = "?", "UNREADABLE"
		}
		left := it.ExpiresAt.Sub(now)
		expiry := textfmt.Duration(left)
		loud := (it.Pane == replay.PaneStranded || it.Pane == replay.PaneQuarantine) && left <= expiring
		if loud {
			expiry = "!" + expiry
		}
		cells := []string{mark, textfmt.Printable(sub), hour, age, ev, textfmt.Printable(reason), att, verdicts, expiry}
		for i := range cells {
			cells[i] = cell(cells[i], cols[i].width)
		}
		line := strings.Join(cells, " ")
		paint := st.paint.row
		switch {
		case row == t.cursor && focused:
			paint = st.paint.cursor
		case t.selected[it.Name]:
			paint = st.paint.chose
		case loud:
			paint = st.paint.alert
		case stalled || verdicts == "MALFORMED":
			paint = st.paint.warn
		}
		b.WriteString("\n")
		paint.to(&b, line)
	}
	return b.String()
}

// verdictSummary is the compact verdict column: R replay, C cap, N notIdempotent, U unroutable, ? unknown.
func verdictSummary(s *replay.Summary) string {
	if s.Malformed {
		return "MALFORMED"
	}
	var b strings.Builder
	for i, n := range s.Verdicts {
		if n > 0 {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteByte("RCNU?"[i])
			b.WriteString(strconv.Itoa(n))
		}
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}
