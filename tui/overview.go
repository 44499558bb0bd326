package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
)

// overview is the incident picture (replay.Picture): a timeline of dead-lettered events per hour stacked by
// subscription, the burst's start, what the lifecycle rule deletes soon, and a grid of subscriptions × reasons
// and what the replay will do with their events. Its cursor sits on an hour or a cell; enter opens the table
// filtered to it. It is drawn from a picture computed with the badges, never per frame.
type overview struct {
	w, h    int
	section int  // 0: the timeline, 1: the grid
	hour    int  // index into the hours drawn
	placed  bool // the operator moved hour: layout keeps it rather than following the latest dead letters
	row     int  // grid row (subscription)
	col     int  // grid column
	pic     replay.Picture
	cols    []gridCol // the grid's columns at this width
	hours   int       // hours drawn at this width
	colW    int       // columns per hour
	fills   []string  // the fills, styled

	st      *Styles
	r       *lipgloss.Renderer
	painted memo
}

func newOverview(st *Styles, r *lipgloss.Renderer, painted memo) *overview {
	return &overview{hour: -1, st: st, r: r, painted: painted}
}

func (o *overview) paint(style *lipgloss.Style, text string) string {
	return o.painted.paint(style, text)
}

// SetSize implements the component contract.
func (o *overview) SetSize(w, h int) {
	o.w, o.h = w, h
	o.layout()
}

// fills tell subscriptions apart without colour (NO_COLOR) as well as with it.
var fills = []string{"█", "▓", "▒", "░", "#", "=", "+", "x", "o", "*"}

var palette = []lipgloss.AdaptiveColor{{Light: "#5A3FC0", Dark: "#B9A6FF"}, {Light: "#B45309", Dark: "#FBBF24"}, {Light: "#15803D", Dark: "#4ADE80"},
	{Light: "#1D4ED8", Dark: "#93C5FD"}, {Light: "#C62828", Dark: "#F87171"}, {Light: "#6B7280", Dark: "#D1D5DB"}}

// maxSubs is how many subscriptions get their own fill; the rest share the last.
const maxSubs = 8

// fill is subscription s's painted fill character, rendered once per dashboard (lipgloss per cell per frame
// was most of the overview's drawing time).
func (o *overview) fill(s int) string {
	i := min(s, maxSubs-1)
	if o.fills == nil {
		for j := 0; j < maxSubs; j++ {
			o.fills = append(o.fills, o.r.NewStyle().Foreground(palette[j%len(palette)]).Render(fills[j]))
		}
	}
	return o.fills[i]
}

// gridCol is one column of the grid: a reason, or a fate.
type gridCol struct {
	title  string
	reason int // index into pic.Reasons, or -1
	fate   replay.Fate
	w      int
}

func (o *overview) setPicture(p replay.Picture) {
	o.pic = p
	o.row = min(o.row, max(0, len(p.Subscriptions)-1))
	o.layout()
}

// layout works out the hours and grid columns that fit the width — when the size or the picture changes, never
// while drawing, so what a key does never depends on the last frame drawn.
func (o *overview) layout() {
	w := o.w
	const axis = 7
	o.colW = 1
	if (w-axis)/2 >= len(o.pic.Hours) {
		o.colW = 2
	}
	o.hours = min(len(o.pic.Hours), (w-axis)/o.colW)
	if !o.placed || o.hour < 0 || o.hour >= o.hours {
		o.hour = o.hours - 1 // the latest hour that has dead letters
		for c := o.hours - 1; c >= 0; c-- {
			if o.pic.HourTotal(len(o.pic.Hours)-o.hours+c) > 0 {
				o.hour = c
				break
			}
		}
	}
	// Grid: SUBSCRIPTION, EVENTS, reasons as room allows, then the fates.
	fateW := 6
	var fates []replay.Fate
	for _, f := range replay.AllFates {
		for s := range o.pic.Fates {
			if o.pic.Fates[s][f] > 0 {
				fates = append(fates, f)
				break
			}
		}
	}
	used := 14 + 1 + 7 + len(fates)*(fateW+1)
	reasonW := 12
	if w >= 140 {
		reasonW = 24 // wide: room for the top outcome
	}
	o.cols = o.cols[:0]
	for ri := range o.pic.Reasons {
		if used+reasonW+1 > w {
			break
		}
		o.cols = append(o.cols, gridCol{title: o.pic.Reasons[ri], reason: ri, w: reasonW})
		used += reasonW + 1
	}
	for _, f := range fates {
		o.cols = append(o.cols, gridCol{title: fateTitles[f], reason: -1, fate: f, w: fateW})
	}
	o.col = max(0, min(o.col, len(o.cols)-1))
}

var fateTitles = map[replay.Fate]string{replay.FateReplay: "REPLAY", replay.FateCap: "CAP", replay.FateNotIdempotent: "NOTIDM",
	replay.FateUnroutable: "UNRTBL", replay.FateUnknown: "UNKNWN", replay.FateCrash: "CRASH", replay.FateMalformed: "MALFRM"}

// View renders exactly the overview's size.
func (o *overview) View() string {
	p := o.pic
	if p.Blobs == 0 && p.Unread == 0 {
		return fit(o.paint(&o.st.Dim, "  nothing in the container"), o.w, o.h)
	}
	gridRows := min(len(p.Subscriptions), max(2, o.h-14))
	chartH := max(3, o.h-6-(gridRows+1))
	var lines []string
	lines = append(lines, o.titleLine())
	lines = append(lines, o.chart(chartH)...)
	lines = append(lines, o.legend(), o.lossLine())
	// The grid takes every line the chart left (its header is one of them).
	lines = append(lines, o.grid(max(gridRows, o.h-len(lines)-1))...)
	return fit(strings.Join(lines, "\n"), o.w, o.h)
}

func (o *overview) titleLine() string {
	p := o.pic
	s := o.paint(&o.st.Header, fmt.Sprintf("dead-lettered events per hour, last %dh", o.hours))
	if !p.BurstStart.IsZero() {
		s += "  " + o.paint(&o.st.Warn, "▲ burst since "+p.BurstStart.Format("01-02 15h"))
	}
	if p.Unread > 0 {
		s += o.paint(&o.st.Dim, fmt.Sprintf("  · %s blob(s) not read yet: events fill in", thousands(p.Unread)))
	}
	return s
}

// chart draws the stacked bars with the y axis, then the x axis and the cursor's hour.
func (o *overview) chart(height int) []string {
	first := len(o.pic.Hours) - o.hours
	peak := 1
	for h := first; h < len(o.pic.Hours); h++ {
		peak = max(peak, o.pic.HourTotal(h))
	}
	rows := o.bars(height, first, peak)
	out := make([]string, 0, height+2)
	for r := range rows {
		label := "      │"
		switch r {
		case 0:
			label = fmt.Sprintf("%5s ┤", thousands(peak))
		case height - 1:
			label = "    0 ┤"
		}
		var b strings.Builder
		b.WriteString(o.paint(&o.st.Dim, label))
		for c, cell := range rows[r] {
			b.WriteString(o.cell(cell, c))
		}
		out = append(out, b.String())
	}
	return append(out, o.axis(first), o.cursorLine(first))
}

// bars stacks each hour's subscriptions from the bottom, each getting its share of the height in rows.
func (o *overview) bars(height, first, peak int) [][]string {
	rows := make([][]string, height)
	for r := range rows {
		rows[r] = make([]string, o.hours)
	}
	for c := 0; c < o.hours; c++ {
		cum := 0.0
		for s, e := range o.pic.Timeline[first+c] {
			if e == 0 {
				continue
			}
			seg := float64(e) * float64(height) / float64(peak)
			for r := 0; r < height; r++ {
				mid := float64(r) + 0.5
				if mid >= cum && mid < cum+seg || r == int(cum) && seg < 0.5 && rows[height-1-r][c] == "" {
					rows[height-1-r][c] = o.fill(s) // a sliver still shows as one cell
				}
			}
			cum += seg
		}
	}
	return rows
}

// cell is one chart cell at the width of an hour, reversed on the cursor's column.
func (o *overview) cell(fill string, c int) string {
	if o.section == 0 && c == o.hour {
		if fill == "" {
			return o.paint(&o.st.Match, strings.Repeat(" ", o.colW))
		}
		return o.paint(&o.st.Match, strings.Repeat(fills[0], o.colW))
	}
	if fill == "" {
		fill = " "
	}
	return strings.Repeat(fill, o.colW)
}

// axis carries the hour labels (every 12 hours) and marks the burst's start with ▲.
func (o *overview) axis(first int) string {
	p := o.pic
	axis := []rune(strings.Repeat("─", o.hours*o.colW))
	burst := -1 // the marker's position: a label it would fall inside is left out, never overwritten
	for c := 0; c < o.hours; c++ {
		if p.Hours[first+c].Equal(p.BurstStart) {
			burst = c * o.colW
		}
	}
	for c := 0; c < o.hours; c++ {
		at := c*o.colW + 1
		if t := p.Hours[first+c]; t.Hour()%12 == 0 && at+9 <= len(axis) && (burst < at || burst >= at+9) {
			copy(axis[at:], []rune(t.Format("01-02 15h")))
		}
	}
	if burst >= 0 {
		axis[burst] = '▲'
	}
	return o.paint(&o.st.Dim, "      └") + string(axis)
}

// cursorLine says what the cursor's hour holds.
func (o *overview) cursorLine(first int) string {
	if o.section != 0 || o.hour < 0 || o.hour >= o.hours {
		return ""
	}
	h := first + o.hour
	cur := fmt.Sprintf("▸ %s: %s event(s)", o.pic.Hours[h].Format("01-02 15h"), thousands(o.pic.HourTotal(h)))
	if o.pic.Hours[h].Equal(o.pic.BurstStart) {
		cur += " · the burst starts here"
	}
	return "       " + o.st.Bold.Render(cur)
}

// legend names each subscription's fill; names give up their end to fit the width.
func (o *overview) legend() string {
	n := min(len(o.pic.Subscriptions), maxSubs)
	if n == 0 {
		return ""
	}
	room := max(4, o.w/n-4)
	var parts []string
	for s, name := range o.pic.Subscriptions {
		if s == maxSubs-1 && len(o.pic.Subscriptions) > maxSubs {
			parts = append(parts, o.fill(s)+" others")
			break
		}
		parts = append(parts, o.fill(s)+" "+strings.TrimRight(textfmt.Cell(textfmt.Printable(name), room), " "))
	}
	return strings.Join(parts, "  ")
}

func (o *overview) lossLine() string {
	var parts []string
	for _, l := range o.pic.Loss {
		s := fmt.Sprintf("%dh %s blobs/%s events", int(l.Within.Hours()), thousands(l.Blobs), thousands(l.Events))
		if l.Unread > 0 {
			s += fmt.Sprintf(" (+%d unread)", l.Unread)
		}
		parts = append(parts, s)
	}
	style := o.st.Dim
	if len(o.pic.Loss) > 0 && o.pic.Loss[len(o.pic.Loss)-1].Blobs > 0 {
		style = o.st.Error
	}
	return style.Render("lifecycle deletes if nobody acts: ") + strings.Join(parts, " · ")
}

// grid draws subscriptions × reasons and the replay's fates, with the cursor on a cell.
func (o *overview) grid(rows int) []string {
	p := o.pic
	head := []string{textfmt.Cell(" SUBSCRIPTION", 14), textfmt.Cell("EVENTS", 7)} // a gutter for the cursor
	for i, c := range o.cols {
		t := textfmt.Cell(textfmt.Printable(c.title), c.w)
		if c.reason >= 0 {
			t = textfmt.CellMiddle(textfmt.Printable(c.title), c.w) // reasons often share a long start
		}
		if o.section == 1 && i == o.col {
			t = o.paint(&o.st.Match, t)
		}
		head = append(head, t)
	}
	out := []string{o.paint(&o.st.Header, strings.Join(head, " "))}
	n := len(p.Subscriptions)
	show := min(n, rows) // data rows on screen; one gives way to a "more" line when they do not all fit
	if n > rows {
		show = max(1, rows-1)
	}
	top := max(0, min(o.row-show+1, n-show))
	for r := top; r < top+show; r++ {
		cells := []string{textfmt.Cell(" "+textfmt.Printable(p.Subscriptions[r]), 14), textfmt.Cell(thousands(p.Totals[r]), 7)}
		for i, c := range o.cols {
			var v string
			if c.reason >= 0 {
				cell := p.Matrix[r][c.reason]
				if cell.Events > 0 {
					v = thousands(cell.Events)
					if c.w > 12 && cell.Outcome != "" {
						v += " " + textfmt.Printable(cell.Outcome)
					}
				}
			} else if n := p.Fates[r][c.fate]; n > 0 {
				v = thousands(n)
			}
			if v == "" {
				v = "·"
			}
			v = textfmt.Cell(v, c.w)
			if o.section == 1 && r == o.row && i == o.col {
				v = o.paint(&o.st.Match, v)
			}
			cells = append(cells, v)
		}
		line := strings.Join(cells, " ")
		if o.section == 1 && r == o.row {
			line = "▸" + line[1:] // the gutter
		}
		out = append(out, line)
	}
	if above, below := top, n-top-show; above+below > 0 {
		out = append(out, o.paint(&o.st.Dim, fmt.Sprintf("  … %d more subscription(s): %d above, %d below (↑↓ to scroll)", above+below, above, below)))
	}
	return out
}

// target is the filter that opens the table at what the cursor is on, and the pane to open it in.
func (o *overview) target() (query string, ok bool) {
	p := o.pic
	switch {
	case o.section == 0 && o.hour >= 0 && o.hour < o.hours:
		h := p.Hours[len(p.Hours)-o.hours+o.hour]
		return "hour:" + h.Format("01-02T15"), true
	case o.section == 1 && o.row < len(p.Subscriptions) && o.col < len(o.cols):
		q := "sub:" + quoteTerm(p.Subscriptions[o.row])
		c := o.cols[o.col]
		switch {
		case c.reason >= 0:
			q += " reason:" + quoteTerm(p.Reasons[c.reason])
		case c.fate == replay.FateCrash:
			q += " is:crash"
		case c.fate == replay.FateMalformed:
			q += " is:malformed"
		default:
			q += " verdict:" + c.fate.String()
		}
		return q, true
	}
	return "", false
}

// quoteTerm quotes a filter value that holds a space.
func quoteTerm(s string) string {
	if strings.ContainsAny(s, " \t\"") {
		return `"` + strings.ReplaceAll(s, `"`, ``) + `"`
	}
	return s
}

// openTarget applies the cursor's filter and shows the first pane that has rows for it.
func (m *Model) openTarget() tea.Cmd {
	q, ok := m.overview.target()
	if !ok {
		return nil
	}
	m.filter.input.SetValue(q)
	m.applyFilter()
	for i, t := range m.tables {
		if len(t.rows) > 0 {
			m.setView(i + 1)
			return m.hydrate()
		}
	}
	m.setView(1)
	return m.hydrate()
}

func onOverview(do func(o *overview)) func(m *Model) tea.Cmd {
	return func(m *Model) tea.Cmd { do(m.overview); return nil }
}

var overviewScope = &scope{name: "overview", bindings: []binding{
	bind([]string{"left", "h"}, "←", "earlier hour / previous column", onOverview(func(o *overview) {
		if o.section == 0 {
			o.hour, o.placed = max(0, o.hour-1), true
		} else {
			o.col = max(0, o.col-1)
		}
	})).footer(),
	bind([]string{"right", "l"}, "→", "later hour / next column", onOverview(func(o *overview) {
		if o.section == 0 {
			o.hour, o.placed = min(o.hours-1, o.hour+1), true
		} else {
			o.col = min(len(o.cols)-1, o.col+1)
		}
	})).footer(),
	bind([]string{"down", "j"}, "↓", "to the grid / next subscription", onOverview(func(o *overview) {
		if o.section == 0 {
			o.section = 1
		} else {
			o.row = min(len(o.pic.Subscriptions)-1, o.row+1)
		}
	})),
	bind([]string{"up", "k"}, "↑", "previous subscription / to the timeline", onOverview(func(o *overview) {
		if o.section == 1 && o.row == 0 {
			o.section = 0
		} else if o.section == 1 {
			o.row--
		}
	})),
	bind([]string{"enter"}, "enter", "open the table filtered to it", func(m *Model) tea.Cmd { return m.openTarget() }).footer(),
	bind([]string{"tab"}, "tab", "next view", showView(1)).footer(),
	bind([]string{"shift+tab"}, "shift+tab", "previous view", showView(4)),
	bind([]string{"1"}, "1", "stranded", showView(1)),
	bind([]string{"2"}, "2", "quarantine", showView(2)),
	bind([]string{"3"}, "3", "live", showView(3)),
	bind([]string{"4"}, "4", "archived", showView(4)),
}}
