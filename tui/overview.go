package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

// overview is the incident picture (replay.Picture): a timeline of dead-lettered events per hour stacked by
// subscription, the burst's start, what the lifecycle rule deletes soon, and a grid of subscriptions × reasons,
// what the replay will do with their events and whether their handlers still fail. Its cursor sits on an hour or
// a cell; enter opens the table filtered to it. It is drawn from a picture computed with the badges, never per
// frame.
type overview struct {
	w, h    int
	section int  // 0: the timeline, 1: the grid
	hour    int  // index into the hours drawn
	placed  bool // the operator moved hour: layout keeps it rather than following the latest dead letters
	row     int  // grid row (subscription)
	col     int  // grid column
	pic     rules.Picture
	ready   []rules.Readiness
	cols    []gridCol // the grid's columns at this width
	hidden  int       // reasons that did not fit
	subW    int       // the subscription column
	hours   int       // hours drawn at this width
	colW    int       // columns per hour
	fills   []string  // the fills, styled

	// The frame last drawn, and what it was drawn from: the overview changes only with its picture, its size and
	// its cursor, so a frame after any other message (a tick, a key elsewhere) is the last one again.
	version int
	drawn   viewKey
	frame   string

	e       *env
	st      *Styles
	painted memo
	keys    *scope
}

func newOverview(e *env) *overview {
	o := &overview{hour: -1, e: e, st: e.st, painted: e.painted}
	o.keys = o.scope()
	return o
}

// Scope implements component.
func (o *overview) Scope() *scope { return o.keys }

// Update implements component: the overview takes no replies of its own.
// Update implements component: a new theme repaints what it keeps painted.
func (o *overview) Update(msg tea.Msg) (component, tea.Cmd) {
	if _, ok := msg.(themeMsg); ok {
		o.fills, o.frame = nil, ""
	}
	return o, nil
}

// scope is the overview's keys, each one of its methods.
func (o *overview) scope() *scope {
	return &scope{name: "overview", bindings: []binding{
		bind([]string{"left", "h"}, "←", "earlier hour / previous column", o.left).footer(),
		bind([]string{"right", "l"}, "→", "later hour / next column", o.right).footer(),
		bind([]string{"down", "j"}, "↓", "grid: down to the subscriptions, then the next one", o.down).footer(),
		bind([]string{"up", "k"}, "↑", "previous subscription / to the timeline", o.up),
		bind([]string{"enter"}, "enter", "open the table filtered to it", o.open).footer(),
	}}
}

func (o *overview) left() tea.Cmd {
	if o.section == 0 {
		o.hour, o.placed = max(0, o.hour-1), true
	} else {
		o.col = max(0, o.col-1)
	}
	return nil
}

func (o *overview) right() tea.Cmd {
	if o.section == 0 {
		o.hour, o.placed = min(o.hours-1, o.hour+1), true
	} else {
		o.col = min(len(o.cols)-1, o.col+1)
	}
	return nil
}

func (o *overview) down() tea.Cmd {
	if o.section == 0 {
		o.section = 1
	} else {
		o.row = min(len(o.pic.Subscriptions)-1, o.row+1)
	}
	return nil
}

func (o *overview) up() tea.Cmd {
	if o.section == 1 && o.row == 0 {
		o.section = 0
	} else if o.section == 1 {
		o.row--
	}
	return nil
}

func (o *overview) open() tea.Cmd {
	if q, ok := o.target(); ok {
		return o.e.send(filterToMsg{q})
	}
	return nil
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

var palette = []struct{ light, dark string }{{"#5A3FC0", "#B9A6FF"}, {"#B45309", "#FBBF24"}, {"#15803D", "#4ADE80"},
	{"#1D4ED8", "#93C5FD"}, {"#C62828", "#F87171"}, {"#6B7280", "#D1D5DB"}}

// maxSubs is how many subscriptions get their own fill; the rest share the last.
const maxSubs = 8

// fill is subscription s's painted fill character, rendered once per dashboard (lipgloss per cell per frame
// was most of the overview's drawing time).
func (o *overview) fill(s int) string {
	i := min(s, maxSubs-1)
	if o.fills == nil {
		for j := 0; j < maxSubs; j++ {
			p := palette[j%len(palette)]
			st := lipgloss.NewStyle()
			if c := o.st.Color(p.light, p.dark); c != nil {
				st = st.Foreground(c)
			}
			o.fills = append(o.fills, st.Render(fills[j]))
		}
	}
	return o.fills[i]
}

// gridCol is one column of the grid: a reason, or a fate.
type gridCol struct {
	title  string
	reason int // index into pic.Reasons, or -1
	fate   rules.Fate
	w      int
}

func (o *overview) setPicture(p rules.Picture, ready []rules.Readiness) {
	o.pic, o.ready = p, ready
	o.version++
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
	var fates []rules.Fate
	for _, f := range rules.AllFates {
		for s := range o.pic.Fates {
			if o.pic.Fates[s][f] > 0 {
				fates = append(fates, f)
				break
			}
		}
	}
	// The subscription column: as wide as the longest name (and the cursor's gutter), 14 to 21 columns; on a narrow
	// terminal 14, so the reasons keep their room.
	o.subW = 14
	if w >= 110 {
		for _, s := range o.pic.Subscriptions {
			o.subW = max(o.subW, min(21, 1+textfmt.Width(textfmt.Printable(s))))
		}
	}
	used := o.subW + 1 + 7 + len(fates)*(fateW+1) + o.handlerW() + 1
	reasonW := 12
	if w >= 140 {
		reasonW = 24 // wide: room for the top outcome
	}
	o.cols = o.cols[:0]
	o.hidden = 0
	for ri := range o.pic.Reasons {
		rest := 0
		if ri < len(o.pic.Reasons)-1 {
			rest = moreW + 1 // what a "+N more" needs, should the next ones not fit
		}
		if used+reasonW+1+rest > w {
			o.hidden = len(o.pic.Reasons) - ri
			break
		}
		o.cols = append(o.cols, gridCol{title: present.ShortReason(o.pic.Reasons[ri]), reason: ri, w: reasonW})
		used += reasonW + 1
	}
	for _, f := range fates {
		o.cols = append(o.cols, gridCol{title: fateTitles[f], reason: -1, fate: f, w: fateW})
	}
	o.col = max(0, min(o.col, len(o.cols)-1))
}

// moreAt is where the "+N more" column goes — after the reasons shown, before the fates — or -1 when every
// reason fits.
func (o *overview) moreAt() int {
	if o.hidden == 0 || len(o.cols) == 0 || o.cols[0].reason < 0 {
		return -1 // none shown: the legend line says how many there are
	}
	for i, c := range o.cols {
		if c.reason < 0 {
			return i
		}
	}
	return len(o.cols)
}

// moreW is the "+N more" column that stands for the reasons that do not fit.
const moreW = 8

var fateTitles = map[rules.Fate]string{rules.FateReplay: "REPLAY", rules.FateCap: "CAP", rules.FateNotIdempotent: "NOTIDM",
	rules.FateUnroutable: "UNRTBL", rules.FateUnknown: "UNKNWN", rules.FateCrash: "CRASH", rules.FateMalformed: "MALFRM"}

// View renders exactly the overview's size.
// viewKey is everything the overview's frame is drawn from.
type viewKey struct{ version, w, h, section, hour, row, col int }

func (o *overview) View() string {
	k := viewKey{o.version, o.w, o.h, o.section, o.hour, o.row, o.col}
	if o.frame != "" && k == o.drawn {
		return o.frame
	}
	o.frame, o.drawn = o.draw(), k
	return o.frame
}

// draw renders the overview at its size.
func (o *overview) draw() string {
	p := o.pic
	if p.Blobs == 0 && p.Unread == 0 {
		return fit(o.paint(&o.st.Dim, "  nothing in the container"), o.w, o.h)
	}
	reasons := o.reasonLegend()
	gridRows := min(len(p.Subscriptions), max(2, o.h-14))
	chartH := max(3, o.h-7-(gridRows+1)-(len(reasons)-1))
	var lines []string
	lines = append(lines, o.titleLine())
	lines = append(lines, o.chart(chartH)...)
	lines = append(lines, o.legend(), o.lossLine())
	lines = append(lines, reasons...)
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

// cell is one chart cell at the width of an hour. The cursor's hour keeps its bar and colours: the marker under
// the axis says which hour it is.
func (o *overview) cell(fill string, _ int) string {
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

// cursorLine marks the cursor's hour under the axis with ↑ and says, beside the mark, what it holds: its events
// and the subscriptions they came from.
func (o *overview) cursorLine(first int) string {
	if o.hour < 0 || o.hour >= o.hours {
		return ""
	}
	h := first + o.hour
	text := fmt.Sprintf("%s: %s event(s)", o.pic.Hours[h].Format("01-02 15h"), thousands(o.pic.HourTotal(h)))
	if o.pic.Hours[h].Equal(o.pic.BurstStart) {
		text += " · the burst starts here"
	}
	var subs []string
	for s, e := range o.pic.Timeline[h] {
		if e > 0 {
			subs = append(subs, fmt.Sprintf("%s %s", o.fill(s), thousands(e)))
		}
	}
	if len(subs) > 0 {
		text += " · " + strings.Join(subs, " ")
	}
	at := 7 + o.hour*o.colW // under the hour's column (after the axis label)
	mark := o.paint(&o.st.Bold, "↑")
	if o.section != 0 {
		mark = o.paint(&o.st.Dim, "↑")
	}
	if textfmt.Width(text)+2 <= o.w-at-1 {
		return strings.Repeat(" ", at) + mark + " " + text
	}
	// Near the right edge the words go to the left of the mark, ending beside it.
	pad := max(0, at-textfmt.Width(text)-1)
	return strings.Repeat(" ", pad) + textfmt.Truncate(text, at-1, "…") + " " + mark
}

// reasonLegend says what the grid's short reasons stand for.
func (o *overview) reasonLegend() []string {
	var shown []string
	for _, c := range o.cols {
		if c.reason >= 0 {
			shown = append(shown, o.pic.Reasons[c.reason])
		}
	}
	if len(shown) == 0 && o.hidden > 0 { // a narrow terminal: the reasons by name, and how to see one
		var names []string
		for _, r := range o.pic.Reasons {
			names = append(names, present.ShortReason(r))
		}
		return o.paintAll(packLines([]string{o.handlerLegend(),
			fmt.Sprintf("+%d reasons off-screen: %s", o.hidden, textfmt.Printable(strings.Join(names, ", ")))}, " · ", o.w, 2))
	}
	// The HANDLER column's lag is said once, here: it is the container's witness, an hour behind. Entries are
	// laid out whole on up to two lines (the grid gives up a row for the second); what still does not fit is cut
	// with an ellipsis.
	return o.paintAll(packLines(append([]string{o.handlerLegend()}, present.ReasonLegendParts(shown)...), " · ", o.w, 2))
}

// paintAll dims each line.
func (o *overview) paintAll(lines []string) []string {
	for i, l := range lines {
		lines[i] = o.paint(&o.st.Dim, l)
	}
	return lines
}

// packLines lays entries out in order on lines of at most w columns, sep between two on a line, an entry never
// split; past max lines the last is cut with an ellipsis.
func packLines(entries []string, sep string, w, max int) []string {
	var lines []string
	cur := ""
	for _, e := range entries {
		switch {
		case cur == "":
			cur = e
		case textfmt.Width(cur+sep+e) <= w || len(lines) == max-1:
			cur += sep + e
		default:
			lines, cur = append(lines, cur), e
		}
	}
	if cur != "" || len(lines) == 0 {
		lines = append(lines, cur)
	}
	for i := range lines {
		lines[i] = textfmt.Truncate(lines[i], w, "…")
	}
	return lines
}

// legend names each subscription's fill; names give up their end to fit the width.
func (o *overview) legend() string {
	n := min(len(o.pic.Subscriptions), maxSubs)
	if n == 0 {
		return ""
	}
	var names []string
	for s, name := range o.pic.Subscriptions {
		if s == maxSubs-1 && len(o.pic.Subscriptions) > maxSubs {
			names = append(names, "others")
			break
		}
		names = append(names, textfmt.Printable(name))
	}
	room := legendRoom(names, o.w)
	parts := make([]string, len(names))
	for s, name := range names {
		parts[s] = o.fill(s) + " " + strings.TrimRight(textfmt.Cell(name, room), " ")
	}
	return strings.Join(parts, "  ")
}

// legendRoom is the widest a legend's name may be for the whole legend to fit w columns: every name whole when
// they fit, else the same cap for the long ones (the short ones keep theirs), never under four.
func legendRoom(names []string, w int) int {
	fits := func(c int) bool {
		total := 2 * (len(names) - 1) // (the gap between entries; each name has its fill and a space before it)
		for _, n := range names {
			total += 2 + min(textfmt.Width(n), c)
		}
		return total <= w
	}
	c := 0
	for _, n := range names {
		c = max(c, textfmt.Width(n))
	}
	for c > 4 && !fits(c) {
		c--
	}
	return c
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
// gridCell is what the grid shows for subscription r in column c: its events of a reason (and, wide, their top
// outcome), or of a fate; "·" for none.
func (o *overview) gridCell(r int, c gridCol) string {
	p := o.pic
	if c.reason < 0 {
		if n := p.Fates[r][c.fate]; n > 0 {
			return thousands(n)
		}
		return "·"
	}
	cell := p.Matrix[r][c.reason]
	if cell.Events == 0 {
		return "·"
	}
	v := thousands(cell.Events)
	if c.w > 12 && cell.Outcome != "" {
		v += " " + textfmt.Printable(cell.Outcome)
	}
	return v
}

func (o *overview) grid(rows int) []string {
	p := o.pic
	head := []string{textfmt.Cell(" SUBSCRIPTION", o.subW), textfmt.Cell("EVENTS", 7), textfmt.Cell("HANDLER", o.handlerW())} // a gutter for the cursor
	more := o.moreAt()
	for i, c := range o.cols {
		if i == more {
			head = append(head, textfmt.Cell(fmt.Sprintf("+%d more", o.hidden), moreW))
		}
		t := textfmt.Cell(textfmt.Printable(c.title), c.w)
		if o.section == 1 && i == o.col {
			t = o.paint(&o.st.Bold, textfmt.Cell("▾"+textfmt.Printable(c.title), c.w))
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
		cells := []string{textfmt.Cell(" "+textfmt.Printable(p.Subscriptions[r]), o.subW), textfmt.Cell(thousands(p.Totals[r]), 7),
			textfmt.Cell(o.handler(p.Subscriptions[r]), o.handlerW())}
		for i, c := range o.cols {
			if i == more {
				cells = append(cells, strings.Repeat(" ", moreW))
			}
			v := o.gridCell(r, c)
			if o.section == 1 && r == o.row && i == o.col {
				v = "[" + v + "]"
			}
			cells = append(cells, textfmt.Cell(v, c.w))
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

// lastDLW is the width of the grid's HANDLER column with the container's witness alone; witnessW what Event
// Grid's adds (" · EG recovering").
const lastDLW, witnessW = 13, 16

// handlerW is the HANDLER column's width: wider when Event Grid's witness is configured.
func (o *overview) handlerW() int {
	if o.e != nil && o.e.witness != nil && present.HasWitness(*o.e.witness) {
		return lastDLW + witnessW
	}
	return lastDLW
}

// witness is Event Grid's witness as the root last read it.
func (o *overview) witness() rules.WitnessReport {
	if o.e == nil || o.e.witness == nil {
		return rules.WitnessReport{}
	}
	return *o.e.witness
}

// handler is the HANDLER column's words for a subscription, each witness named: when the container last got a
// dead letter of it ("DL 4h57m ago", an hour late: see present.ContainerWitness) and, when configured, what Event
// Grid's metrics say now ("EG failing"). Marked while either says the handler is failing. Never "ok" from the
// container alone: it cannot tell that.
func (o *overview) handler(sub string) string {
	w := o.witness()
	r := rules.Readiness{Subscription: sub}
	for _, rr := range o.ready {
		if rr.Subscription == sub {
			r = rr
			break
		}
	}
	cell := present.HandlerCell(r, w, o.pic.Now)
	if cell == "-" {
		return cell
	}
	h, _ := w.HandlerOf(sub)
	if r.Failing || h.Verdict == rules.HandlerFailing {
		return o.paint(&o.st.Warn, textfmt.Cell(cell, o.handlerW()))
	}
	return cell
}

// handlerLegend names the HANDLER column's witnesses once: the container's (DL, a TTL late) and, when
// configured, Event Grid's (EG, as of its latest complete minute).
func (o *overview) handlerLegend() string {
	late := "an hour late"
	if o.e != nil && o.e.cfg.TTL != time.Hour {
		late = textfmt.Duration(o.e.cfg.TTL) + " late (the TTL)"
	}
	l := "HANDLER = last dead letter, " + late
	if w := o.witness(); w.Source != "" {
		l = "HANDLER = DL last dead letter, " + late + "; EG Event Grid's metrics as of " + w.AsOf.UTC().Format("15:04")
	} else if w.None != "" {
		l += "; " + w.None
	}
	return l
}

// target is the filter that opens the table at what the cursor is on, and the pane to open it in.
func (o *overview) target() (query string, ok bool) {
	p := o.pic
	switch {
	// Each query selects exactly the blobs the number under the cursor counts (the picture leaves out handled
	// blobs — their copies count their events — and counts the replay's fates at the root only).
	case o.section == 0 && o.hour >= 0 && o.hour < o.hours:
		h := p.Hours[len(p.Hours)-o.hours+o.hour]
		return "hour:" + h.Format("2006-01-02T15") + " -is:handled", true
	case o.section == 1 && o.row < len(p.Subscriptions) && o.col < len(o.cols):
		q := "sub:=" + quoteTerm(p.Subscriptions[o.row])
		c := o.cols[o.col]
		switch {
		case c.reason >= 0:
			q += " reason:=" + quoteTerm(p.Reasons[c.reason])
		case c.fate == rules.FateCrash:
			q += " is:root is:crash"
		case c.fate == rules.FateMalformed:
			q += " is:root is:malformed"
		default:
			q += " is:root verdict:" + c.fate.String()
		}
		return q + " -is:handled", true
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
