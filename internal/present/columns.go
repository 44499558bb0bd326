package present

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

// Row is one blob as a list shows it: the item, the alerts answered for it, and the service time.
type Row struct {
	Item   *rules.Item
	Alerts rules.Alerts
	Now    time.Time
	// MaxReplays is the cap: a quarantine copy's capped events are at least that far on (their ids carry no count).
	MaxReplays int
}

// RowOf builds the row of one item.
func RowOf(cfg rules.Config, it *rules.Item, now time.Time) Row {
	return Row{Item: it, Alerts: cfg.AlertsOf(it, now), Now: now, MaxReplays: cfg.MaxReplays}
}

// Column is one column of a list, as data: its title, how much width it wants, how important it is when the
// terminal is narrow, how to draw a cell of a row R and (for blobs) how to sort by it. ls and the dashboard's
// table share the blob columns (Column[Row]); show and the detail view share the event columns.
type Column[R any] struct {
	ID    string
	Title string
	// Min is the width the column needs; Max the most it uses (0: it takes whatever is spare).
	Min, Max int
	// Grow takes what is left once every column has its Max (a long reason on a very wide terminal).
	Grow bool
	// Priority decides who keeps their place on a narrow terminal: higher stays, lower goes first.
	Priority int
	// GrowPriority decides who gets spare width first, up to Max (Priority when 0): the column whose text is cut
	// most often, not the most important one.
	GrowPriority int
	// Right aligns numbers.
	Right bool
	// Cell is the (printable) text of one row; it may be longer than the width, the layout cuts it.
	Cell func(r R) string
	// Shorten cuts a cell to w columns; nil cuts the end with "…".
	Shorten func(s string, w int) string
	// Short is the title where Title does not fit (what a Shorten keeps: "OUTCOME"); "" cuts the title.
	Short string
	// Less orders two blobs by this column (nil: not sortable; blob columns only).
	Less func(a, b *rules.Item) bool
}

// BlobColumn is a column of a blob list.
type BlobColumn = Column[Row]

// Head is the column's title at width w, with mark (the sort arrow, or "") after it: the short title where the
// whole one does not fit, and a title cut without "…" so the mark always shows ("AT↓", never "A…↓").
func (c Column[R]) Head(w int, mark string) string {
	room := w - textfmt.Width(mark)
	t := c.Title
	if textfmt.Width(t) > room && c.Short != "" {
		t = c.Short
	}
	if textfmt.Width(t) > room {
		t = textfmt.Truncate(t, max(room, 0), "")
	}
	return textfmt.Cell(t+mark, w)
}

// Fit renders one cell at width w.
func (c Column[R]) Fit(s string, w int) string {
	if textfmt.Width(s) > w && c.Shorten != nil {
		s = c.Shorten(s, w)
	}
	if c.Right && textfmt.Width(s) < w {
		return strings.Repeat(" ", w-textfmt.Width(s)) + s
	}
	return textfmt.Cell(s, w)
}

// Layout gives each column its width for a total width (columns separated by one space): columns are admitted
// by priority while their minimum fits, then spare width goes to the columns that can grow, by priority. A
// column that did not fit gets width 0. The order of cols is kept.
func Layout[R any](cols []Column[R], total int) []int {
	w := make([]int, len(cols))
	order := make([]int, len(cols))
	for i := range order {
		order[i] = i
	}
	byPriority(order, cols, func(c Column[R]) int { return c.Priority })
	used := 0
	for _, i := range order {
		need := cols[i].Min
		if used > 0 {
			need++ // the separator
		}
		if used+need <= total {
			w[i], used = cols[i].Min, used+need
		}
	}
	byPriority(order, cols, func(c Column[R]) int {
		if c.GrowPriority != 0 {
			return c.GrowPriority
		}
		return c.Priority
	})
	for _, i := range order {
		if w[i] == 0 {
			continue
		}
		room := total - used
		if room <= 0 {
			break
		}
		grow := room
		if cols[i].Max > 0 {
			grow = min(room, cols[i].Max-w[i])
		}
		if grow > 0 {
			w[i] += grow
			used += grow
		}
	}
	for _, i := range order {
		if room := total - used; room > 0 && w[i] > 0 && cols[i].Grow {
			w[i] += room
			used += room
		}
	}
	return w
}

// FitColumns narrows each column to what its rows hold: no wider than its widest cell (or its title), so the
// width a column would waste goes to the ones that are cut. For lists short enough to measure whole — a blob's
// events, not a 100,000-row pane.
func FitColumns[R any](cols []Column[R], rows []R) []Column[R] {
	out := make([]Column[R], len(cols))
	for i, c := range cols {
		widest := textfmt.Width(c.Title)
		for _, r := range rows {
			widest = max(widest, textfmt.Width(c.Cell(r)))
		}
		if c.Max == 0 || widest < c.Max {
			c.Max = widest
		}
		c.Min = min(c.Min, c.Max)
		out[i] = c
	}
	return out
}

func byPriority[R any](order []int, cols []Column[R], prio func(Column[R]) int) {
	for a := 1; a < len(order); a++ { // insertion sort: a handful of columns, stable
		for b := a; b > 0 && prio(cols[order[b]]) > prio(cols[order[b-1]]); b-- {
			order[b], order[b-1] = order[b-1], order[b]
		}
	}
}

func reasonCell(word func(string) string) func(Row) string {
	return func(r Row) string {
		return summaryOr(r, func(s *rules.Summary) string {
			out := word(s.Reasons.Top())
			if o := s.Outcomes.Top(); o != "" {
				out += "/" + o
			}
			return textfmt.Printable(out)
		})
	}
}

// outcomeFirst cuts "reason/outcome" to w columns keeping what tells blobs apart: the outcome (NotFound, Busy),
// since most dead letters share a reason (MaxAttempts); the reason alone when there is no outcome. Under the full
// title (REASON / OUTCOME) the cut says so — "…/InternalServerError" — as every cut does; narrower, the title
// reads OUTCOME and the outcome stands alone.
func outcomeFirst(s string, w int) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 && i+1 < len(s) {
		out := s[i+1:]
		if w >= textfmt.Width(reasonTitle) && textfmt.Width(out)+2 <= w {
			return "…/" + out
		}
		s = out
	}
	return textfmt.Truncate(s, w, "…")
}

const reasonTitle = "REASON / OUTCOME"

// ByHour orders blobs as a person reads a run of them: by subscription, then the hour Event Grid wrote each (not
// the name's text, where /12/1/14 sorts before /12/1/7), then the name.
func ByHour(a, b *rules.Item) int {
	if c := strings.Compare(a.Parsed.Subscription, b.Parsed.Subscription); c != 0 {
		return c
	}
	if c := a.Parsed.Hour().Compare(b.Parsed.Hour()); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// With is a column changed by set: a front end's variant of a shared column.
func With(c BlobColumn, set func(*BlobColumn)) BlobColumn { set(&c); return c }

func summaryOr(r Row, read func(*rules.Summary) string) string {
	switch {
	case r.Item.Summary != nil:
		return read(r.Item.Summary)
	case r.Item.ReadErr != "":
		return "?"
	}
	return Unread
}

func events(it *rules.Item) int {
	if it.Summary == nil {
		return -1
	}
	return it.Summary.Events
}

func attempt(it *rules.Item) rules.Attempt {
	if it.Summary == nil {
		return -1
	}
	return it.Summary.MaxReplayAttempt
}

// The columns of a blob list.
var (
	ColPane = BlobColumn{ID: "pane", Title: "PANE", Min: 10, Max: 10, Priority: 60,
		Cell: func(r Row) string { return r.Item.Pane.String() },
		Less: func(a, b *rules.Item) bool { return paneRank(a.Pane) < paneRank(b.Pane) }}
	ColName = BlobColumn{ID: "name", Title: "NAME", Min: 24, Priority: 100,
		Cell:    func(r Row) string { return textfmt.Printable(r.Item.Name) },
		Shorten: textfmt.ShortenMiddle,
		Less:    func(a, b *rules.Item) bool { return a.Name < b.Name }}
	// ColNameInPane is the name without the archived/ or quarantine/ prefix a PANE column beside it already says:
	// on a terminal that width is the GUID's (-o wide and a pipe keep the whole name).
	ColNameInPane = With(ColName, func(c *BlobColumn) {
		c.Cell = func(r Row) string {
			n := r.Item.Name
			for _, p := range []string{rules.ArchivedPrefix, rules.QuarantinePrefix} {
				n = strings.TrimPrefix(n, p)
			}
			return textfmt.Printable(n)
		}
	})
	// ColFile is the last segment of the name without .json (the GUID), shortened from the middle: it tells two
	// blobs of one subscription and hour apart, and its text can be typed into show.
	ColFile = BlobColumn{ID: "file", Title: "NAME", Min: 12, Priority: 45,
		Cell:    func(r Row) string { return textfmt.Printable(strings.TrimSuffix(rules.FileOf(r.Item.Name), ".json")) },
		Shorten: textfmt.ShortenMiddle,
		Less:    func(a, b *rules.Item) bool { return rules.FileOf(a.Name) < rules.FileOf(b.Name) }}
	ColSubscription = BlobColumn{ID: "subscription", Title: "SUBSCRIPTION", Min: 12, Max: 24, Priority: 90,
		Cell: func(r Row) string {
			if r.Item.Parsed.Subscription == "" {
				return textfmt.Printable(r.Item.Name)
			}
			return textfmt.Printable(r.Item.Parsed.Subscription)
		},
		Less: func(a, b *rules.Item) bool { return a.Parsed.Subscription < b.Parsed.Subscription }}
	ColHour = BlobColumn{ID: "hour", Title: "HOUR", Min: 9, Max: 9, Priority: 40,
		Cell: func(r Row) string {
			if r.Item.Parsed.Hour().IsZero() {
				return "-"
			}
			return r.Item.Parsed.Hour().Format("01-02 15h")
		},
		Less: func(a, b *rules.Item) bool { return a.Parsed.Hour().Before(b.Parsed.Hour()) }}
	ColAge = BlobColumn{ID: "age", Title: "AGE", Min: 7, Max: 8, Priority: 85,
		Cell: func(r Row) string {
			s := textfmt.Duration(r.Item.Age)
			if r.Alerts.Stalled {
				return "!" + s
			}
			return s
		},
		Less: func(a, b *rules.Item) bool { return a.Age < b.Age }}
	ColDeletesIn = BlobColumn{ID: "deletesIn", Title: "DELETE IN", Min: 9, Max: 9, Priority: 80,
		Cell: func(r Row) string { return DeletesIn(r.Alerts) },
		Less: func(a, b *rules.Item) bool { return a.LastModified.Before(b.LastModified) }} // expiry is Last-Modified plus one retention
	ColEvents = BlobColumn{ID: "events", Title: "EVS", Min: 4, Max: 6, Priority: 70, Right: true,
		Cell: func(r Row) string {
			return summaryOr(r, func(s *rules.Summary) string { return strconv.Itoa(s.Events) })
		},
		Less: func(a, b *rules.Item) bool { return events(a) < events(b) }}
	ColSize = BlobColumn{ID: "size", Title: "SIZE", Min: 9, Max: 9, Priority: 20, Right: true,
		Cell: func(r Row) string { return textfmt.Bytes(r.Item.Size) },
		Less: func(a, b *rules.Item) bool { return a.Size < b.Size }}
	// ColReason is the top reason, short (the legend says what each stands for), and the top outcome.
	ColReason = BlobColumn{ID: "reason", Title: reasonTitle, Min: 12, Max: 44, Priority: 30, Cell: reasonCell(ShortReason),
		Shorten: outcomeFirst, Short: "OUTCOME"}
	// ColReasonLong is ColReason in Event Grid's own words, for output nothing cuts (-o wide, a pipe).
	ColReasonLong = With(ColReason, func(c *BlobColumn) { c.Max, c.Cell = 0, reasonCell(func(s string) string { return s }) })
	ColAttempt    = BlobColumn{ID: "attempt", Title: "ATT", Min: 3, Max: 6, Priority: 50,
		Cell: func(r Row) string {
			switch s := r.Item.Summary; {
			case r.Item.Pane == rules.PaneArchived:
				return "" // a record: nothing will count it again
			case r.Item.Pane == rules.PaneQuarantine && s != nil && s.Verdicts.Of(rules.VerdictCap) > 0:
				// The replay stripped the count from a quarantine copy's ids; the cap that stopped them says how
				// far they got: at least --max-replays (never "0" beside C3).
				return "≥" + strconv.Itoa(r.MaxReplays)
			case r.Item.Pane == rules.PaneQuarantine && s != nil && s.MaxReplayAttempt == 0 && !s.Malformed:
				return "?" // (refused for another reason: the copy stripped the count, nothing says how far it got)
			}
			return summaryOr(r, AttemptLabel)
		},
		Less: func(a, b *rules.Item) bool { return attempt(a) < attempt(b) }}
	ColVerdicts = BlobColumn{ID: "verdicts", Title: "VERDICTS", Min: 10, Max: 16, Priority: 75,
		Cell: func(r Row) string {
			switch {
			case r.Item.Pane == rules.PaneArchived:
				return "" // a record of what was republished: nothing judges it again
			case r.Item.ReadErr != "" && r.Item.Summary == nil:
				return Unreadable
			}
			return summaryOr(r, VerdictSummary)
		}}
	ColState = BlobColumn{ID: "state", Title: "STATE", Min: 8, Max: 22, Priority: 72, // handled and acked rows must not pass for ordinary ones
		Cell: func(r Row) string { return State(r.Alerts) },
		// Cut, "acked ops@host" keeps its word whole ("acked", never "acked …"): who acked is a detail away.
		Shorten: func(s string, w int) string {
			if word, _, ok := strings.Cut(s, " "); ok && textfmt.Width(word)+4 > w {
				return textfmt.Truncate(word, w, "…")
			}
			return textfmt.Truncate(s, w, "…")
		}}
)

// State is the word for what sets a blob apart from its pane: acknowledged (by whom), handled by the replay, or
// untriggerable.
func State(a rules.Alerts) string {
	switch {
	case a.Acked:
		return "acked " + textfmt.Printable(a.Ack.By)
	case a.Handled:
		return "handled"
	case a.Untriggerable:
		return "untriggerable"
	}
	return ""
}

// paneRank orders panes as the dashboard does: what needs a human first.
func paneRank(p rules.Pane) int {
	for i, q := range rules.Panes {
		if p == q {
			return i
		}
	}
	return len(rules.Panes)
}

// SortByUrgency orders blobs the way an operator triages them: about to be lost first (the sooner to expire, the
// older, first), then by pane (stranded, quarantine, live, archived), then oldest first, then by name. Whether a
// blob is about to be lost is worked out once a blob, not once a comparison: at a million blobs a sort compares
// twenty million times.
func SortByUrgency(cfg rules.Config, now time.Time, items []*rules.Item) {
	type keyed struct {
		it       *rules.Item
		expiring bool
	}
	ks := make([]keyed, len(items))
	for i, it := range items {
		ks[i] = keyed{it, cfg.AlertsOf(it, now).Expiring}
	}
	slices.SortFunc(ks, func(x, y keyed) int {
		a, b := x.it, y.it
		switch {
		case x.expiring != y.expiring:
			if x.expiring {
				return -1
			}
			return 1
		case x.expiring && !a.LastModified.Equal(b.LastModified): // the sooner to expire: the older
			return a.LastModified.Compare(b.LastModified)
		case a.Pane != b.Pane:
			return paneRank(a.Pane) - paneRank(b.Pane)
		case !a.LastModified.Equal(b.LastModified):
			// The oldest first, by the time itself: each page of a listing has its own clock, so two blobs of one
			// time on two pages have ages that differ by that clock's drift, and the order changed run to run.
			return a.LastModified.Compare(b.LastModified)
		}
		return strings.Compare(a.Name, b.Name)
	})
	for i := range ks {
		items[i] = ks[i].it
	}
}

// DashboardColumns are the dashboard's table columns, as data: what each shows, how much room it wants and which
// give way first. A saved view's sort names one of them (SortColumns).
var DashboardColumns = []BlobColumn{
	With(ColSubscription, func(c *BlobColumn) { c.Priority, c.Max, c.GrowPriority = 90, 18, 110 }), // PUSH-NOTIFICATIONS, not 58 columns
	With(ColHour, func(c *BlobColumn) { c.Priority = 40 }),
	// The name without .json, shortened from the middle: the GUID's ends tell two blobs of an hour apart.
	With(ColFile, func(c *BlobColumn) { c.Priority, c.Max, c.Min, c.GrowPriority = 60, 36, 13, 30 }),
	With(ColAge, func(c *BlobColumn) { c.Priority = 85 }),
	With(ColEvents, func(c *BlobColumn) { c.Priority = 70 }),
	// The reason (short forms, help has the legend) takes spare width before the name; past every column's
	// widest the rest of a wide terminal stays blank at the right.
	With(ColReason, func(c *BlobColumn) { c.Priority, c.Min, c.Max, c.GrowPriority = 65, 11, 24, 100 }),
	With(ColAttempt, func(c *BlobColumn) { c.Priority = 50 }),
	With(ColVerdicts, func(c *BlobColumn) { c.Priority, c.Max = 75, 12 }),
	With(ColState, func(c *BlobColumn) { c.Priority, c.Min, c.Max = 35, 7, 16 }),
	With(ColDeletesIn, func(c *BlobColumn) { c.Priority = 80 }),
}

// SortColumns are the columns the dashboard's panes sort by: what a saved view's sort may name.
func SortColumns() []string {
	var out []string
	for _, c := range DashboardColumns {
		if c.Less != nil {
			out = append(out, c.ID)
		}
	}
	return out
}
