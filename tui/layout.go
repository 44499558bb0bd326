package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
)

// The screen: two header lines, the body (the tabs and the pane view, or what is on the focus stack), the status
// line and the key line. This file is the one place where sizes are worked out.
const (
	headerLines = 2
	footerLines = 2
)

// bodyHeight is the lines between the header and the footer.
func (m *Model) bodyHeight() int { return max(1, max(m.h, minH)-headerLines-footerLines) }

func (m *Model) layout() {
	w, bh := max(m.w, minW), m.bodyHeight()
	for _, t := range m.tables {
		t.SetSize(w, bh-1) // below the tabs
	}
	m.overview.SetSize(w, bh-1)
	for _, c := range m.stack {
		m.size(c)
	}
}

// size gives a component on the stack its region: the body, whether it replaces it or sits over it as a box.
func (m *Model) size(c component) {
	c.SetSize(max(m.w, minW), m.bodyHeight())
}

// View renders exactly the window's size.
func (m *Model) View() string {
	if m.quitting {
		return ""
	}
	if m.w < minW || m.h < minH {
		msg := fmt.Sprintf("deadletter needs at least %d×%d; this window is %d×%d. Enlarge it — until then every key but q is dropped, not kept.", minW, minH, m.w, m.h)
		if m.ignored != "" {
			msg += fmt.Sprintf(" (%q was dropped)", m.ignored)
		}
		return fit(ansi.Wrap(msg, max(m.w, 1), " "), m.w, m.h)
	}
	body := m.body()
	return fit(m.header(), m.w, headerLines) + "\n" + m.fitBody(body) + "\n" + m.footer()
}

// body is the pane view (or the last component that replaces it) with the boxes above it drawn over.
func (m *Model) body() string {
	var screen string
	under := -1 // the topmost component that is not a box: it is the screen the boxes sit over
	for i := len(m.stack) - 1; i >= 0; i-- {
		if _, ok := m.stack[i].(overlay); !ok {
			under = i
			break
		}
	}
	if under >= 0 {
		screen = m.stack[under].View()
	} else {
		screen = m.tabs() + "\n" + m.paneView()
	}
	for _, c := range m.stack[under+1:] {
		if box := c.View(); box != "" { // (the filter bar draws on the status line)
			screen = placeOver(screen, box, m.w, m.bodyHeight())
		}
	}
	return screen
}

// paneView is the overview or the pane's table — or, before any listing succeeded, why there is nothing.
func (m *Model) paneView() string {
	bh := m.bodyHeight() - 1
	if !m.list.loaded && len(m.snap.Items) == 0 {
		if m.list.err != nil {
			lines := []string{m.paint(&m.st.Error, "Could not read the container, so nothing below is known — not even that it is empty."), "",
				textfmt.Printable(m.list.err.Error()), "", fmt.Sprintf("Retrying in %s (R to retry now).", m.retryIn())}
			return fit(ansi.Wrap(strings.Join(lines, "\n"), m.w, " "), m.w, bh)
		}
		return fit(m.paint(&m.st.Dim, "reading the container…"), m.w, bh)
	}
	if m.view == 0 {
		return m.overview.View()
	}
	return m.table().View()
}

// footer is the status line and the key line of the focused component (and the root's keys that reach it).
func (m *Model) footer() string {
	var status string
	bar, filtering := m.top().(*filterBar)
	switch {
	case filtering && m.filter.err != "" && m.status == "":
		status = m.paint(&m.st.Error, m.filter.err)
	case filtering && m.status == "":
		status = bar.input.View()
	case m.status != "":
		status = m.status
	case m.list.err != nil && (m.list.loaded || len(m.snap.Items) > 0):
		// Both ends of the error matter (what failed, and the hint at its end): a long one is cut in the middle.
		const prefix = "! listing failed: "
		status = m.st.Error.Render(prefix + textfmt.CellMiddle(textfmt.Printable(m.list.err.Error()), m.w-len(prefix)))
	case m.filter.err != "":
		status = m.paint(&m.st.Error, "filter: "+m.filter.err)
	case m.filter.text != "" && len(m.stack) == 0:
		status = m.paint(&m.st.Info, "filter: "+textfmt.Printable(m.filter.text)+"  (/ to change, esc clears it)")
	}
	top := m.top()
	if _, ok := top.(overlay); ok {
		return fit(status, m.w, 1) + "\n" + fit("", m.w, 1) // a box lists its own keys, where the eye is
	}
	return fit(status, m.w, 1) + "\n" + fit(keyLine(&m.st, m.painted, top.Scope().hints(), m.rootScopeFor(top).hints(), m.w), m.w, 1)
}

// header is the top two lines: what is open and how fresh it is, then what needs a human. The badges that change
// what the operator may trust or do — READ-ONLY, no handler register, stale data, a rehearsal — come before the
// container's name, which gives up its middle first on a narrow terminal.
func (m *Model) header() string {
	w := m.w
	title := m.paint(&m.st.Title, "deadletter")
	left := strings.Join(append([]string{title}, m.badges(false)...), " ")
	if textfmt.Width(left) > w-12 {
		left = strings.Join(append([]string{title}, m.badges(true)...), " ")
	}
	clock := ""
	if m.list.loaded || len(m.snap.Items) > 0 {
		clock = "service time " + m.snap.Now.UTC().Format("2006-01-02 15:04:05Z")
	}
	room := w - textfmt.Width(left) - 2
	if clock != "" && room-len(clock)-2 < 12 {
		clock = m.snap.Now.UTC().Format("15:04:05Z")
	}
	if clock != "" {
		room -= len(clock) + 2
	}
	name := textfmt.ShortenMiddle(textfmt.Printable(m.snap.Container), max(room, 0))
	line1 := left
	if name != "" {
		line1 += "  " + name
	}
	if clock != "" {
		line1 += "  " + clock
	}
	return fit(line1, w, 1) + "\n" + fit(m.alertLine(), w, 1)
}

// badges are what changes what the operator may trust or do, in full or short for a narrow terminal.
func (m *Model) badges(short bool) []string {
	var out []string
	if m.opt.Context != "" {
		out = append(out, m.paint(&m.st.Badge, "ctx:"+textfmt.Printable(m.opt.Context)))
	}
	if m.opt.Banner != nil {
		if b := m.opt.Banner(); b != "" {
			out = append(out, m.paint(&m.st.Badge, b))
		}
	}
	if m.opt.ReadOnly {
		out = append(out, m.paint(&m.st.Badge, "READ-ONLY"))
	}
	if m.cfg.Handlers == nil {
		label := "NO --handlers: verdicts partial"
		if short {
			label = "NO --handlers"
		}
		out = append(out, m.paint(&m.st.Badge, label))
	}
	switch {
	case m.list.err != nil && m.list.loaded:
		out = append(out, m.paint(&m.st.Stale, fmt.Sprintf("STALE since %s · retry in %s", m.list.goodAt.UTC().Format("15:04:05Z"), m.retryIn())))
	case m.list.err != nil && len(m.snap.Items) > 0:
		out = append(out, m.paint(&m.st.Stale, fmt.Sprintf("PARTIAL: listing failed after %s · retry in %s", thousands(len(m.snap.Items)), m.retryIn())))
	}
	return out
}

func (m *Model) retryIn() string {
	d := m.list.retryAt.Sub(m.now()).Round(time.Second)
	return textfmt.Duration(max(d, 0))
}

// badgeLabels are the findings' names on the badge line; shortBadgeLabels fit every finding into 80 columns.
var (
	badgeLabels = map[replay.FindingKind]string{replay.FindingExpiring: "EXPIRING", replay.FindingStranded: "STRANDED",
		replay.FindingReplayStalled: "STALLED", replay.FindingCrash: "CRASH", replay.FindingUntriggerable: "UNTRIGGERABLE",
		replay.FindingQuarantine: "QUARANTINE", replay.FindingMalformed: "MALFORMED", replay.FindingHandlerFailing: "HANDLER FAILING",
		replay.FindingReplayDropping: "REPLAY DROPPING"}
	shortBadgeLabels = map[replay.FindingKind]string{replay.FindingExpiring: "EXPIRE", replay.FindingStranded: "STRAND",
		replay.FindingReplayStalled: "STALL", replay.FindingCrash: "CRASH", replay.FindingUntriggerable: "UNTRIG",
		replay.FindingQuarantine: "QUAR", replay.FindingMalformed: "MALF", replay.FindingHandlerFailing: "EGFAIL",
		replay.FindingReplayDropping: "DROP"}
)

// alertLine is the second line: a badge per finding (or healthy), then the counts that keep blobs out of the
// badges (handled, acked) — always, shortened before they go — then what is still being read.
func (m *Model) alertLine() string {
	type part struct{ full, short string }
	var badges []part
	for _, f := range m.report.Findings {
		badges = append(badges, part{fmt.Sprintf("▲%s %s", badgeLabels[f.Kind], thousands(f.Count)), fmt.Sprintf("▲%s %s", shortBadgeLabels[f.Kind], thousands(f.Count))})
	}
	if n := m.report.Unreadable; n > 0 { // contents unknown: never a healthy screen (is:unreadable shows them)
		badges = append(badges, part{fmt.Sprintf("▲UNREADABLE %s", thousands(n)), fmt.Sprintf("▲UNREAD %s", thousands(n))})
	}
	var counts []part
	if n := m.report.Acked; n > 0 {
		counts = append(counts, part{fmt.Sprintf("%d acked", n), fmt.Sprintf("%dA", n)})
	}
	if n := m.report.Handled; n > 0 {
		counts = append(counts, part{fmt.Sprintf("%d handled", n), fmt.Sprintf("%dH", n)})
	}
	if n := m.report.SuspiciousCount; n > 0 {
		counts = append(counts, part{fmt.Sprintf("%d forged ack(s)", n), fmt.Sprintf("%d?ack", n)})
	}
	var info []string
	if m.list.running {
		info = append(info, fmt.Sprintf("listing… %s so far", thousands(m.list.seen)))
	}
	if m.unread > 0 {
		info = append(info, fmt.Sprintf("reading payloads… %s left", thousands(m.unread)))
	}
	join := func(ps []part, short bool, style *lipgloss.Style) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			s := p.full
			if short {
				s = p.short
			}
			out[i] = m.paint(style, s)
		}
		return out
	}
	// Widest first; the badges and counts give up their long names before the progress gives up its place.
	for _, short := range []bool{false, true} {
		parts := join(badges, short, &m.st.Alert)
		if len(badges) == 0 {
			switch {
			case m.list.loaded && m.unread == 0:
				parts = []string{m.paint(&m.st.OK, "✓ healthy: nothing stranded, quarantined, expiring, stalled or malformed")}
			case m.list.loaded:
				parts = []string{m.paint(&m.st.OK, "✓ nothing so far")}
			}
		}
		line := strings.Join(parts, " ")
		if c := join(counts, short, &m.st.Dim); len(c) > 0 {
			line += "  " + strings.Join(c, " · ")
		}
		if textfmt.Width(line) > m.w && !short {
			continue
		}
		for i := len(info); i > 0; i-- { // what does not fit whole is left out, last first, never cut mid-word
			if rest := strings.Join(info[:i], " · "); textfmt.Width(line)+2+textfmt.Width(rest) <= m.w {
				return line + "  " + m.paint(&m.st.Dim, rest)
			}
		}
		return line
	}
	return ""
}

// thousands prints a count with thousands separators: 120,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// tabs is the view line: the overview, then a tab per pane with its count (shown/total under a filter), the
// selection and the sort.
// tabTexts are the tabs' words, the overview first: each is drawn two cells wider (its brackets or spaces).
func (m *Model) tabTexts() []string {
	out := []string{"o Overview"}
	for i, t := range m.tables {
		p := t.pane.String()
		name := strings.ToUpper(p[:1]) + p[1:]
		s := fmt.Sprintf("%d %s %s", i+1, name, thousands(m.counts[t.pane]))
		if m.filter.text != "" {
			s = fmt.Sprintf("%d %s %s/%s", i+1, name, thousands(len(t.rows)), thousands(len(t.order)))
		}
		out = append(out, s)
	}
	return out
}

// tabAt is the view whose tab is drawn at column x (-1: none).
func (m *Model) tabAt(x int) int {
	at := 0
	for i, s := range m.tabTexts() {
		w := textfmt.Width(s) + 2
		if x >= at && x < at+w {
			return i
		}
		at += w
	}
	return -1
}

func (m *Model) tabs() string {
	if !m.list.loaded && len(m.snap.Items) == 0 {
		return fit(m.paint(&m.st.Dim, "no counts yet: the container has not been read"), m.w, 1) // not zeros that look healthy
	}
	var out []string
	for i, s := range m.tabTexts() {
		if i == m.view {
			out = append(out, m.paint(&m.st.TabActive, "["+s+"]"))
		} else {
			out = append(out, m.paint(&m.st.Tab, " "+s+" "))
		}
	}
	line := strings.Join(out, "")
	if t := m.table(); t != nil {
		if n := len(t.selected); n > 0 {
			// The count is what an action will take: never cut. Where the words do not fit, the row mark says it.
			sel := fmt.Sprintf("  %d selected", n)
			if textfmt.Width(line)+textfmt.Width(sel) > m.w {
				sel = fmt.Sprintf(" *%d", n)
			}
			line += m.paint(&m.st.Chose, sel)
		}
	}
	return fit(line, m.w, 1)
}

// fit makes s exactly w columns by h lines: longer lines are cut, shorter ones padded, missing lines added.
// Every part goes through it, so no view can overflow the terminal whatever a blob holds.
func fit(s string, w, h int) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		switch lw := textfmt.Width(l); {
		case lw < w:
			lines[i] = l + strings.Repeat(" ", w-lw)
		case lw > w:
			lines[i] = textfmt.Pad(textfmt.Truncate(l, w, ""), w)
		}
	}
	for len(lines) < h {
		lines = append(lines, strings.Repeat(" ", w))
	}
	return strings.Join(lines, "\n")
}

// fitBody is fit for the body, remembering the last: a component that draws the same frame again (the overview,
// cached) costs a string comparison, not a measure of every line.
func (m *Model) fitBody(body string) string {
	h := m.bodyHeight()
	if body == m.fitted.in && m.w == m.fitted.w && h == m.fitted.h && m.fitted.out != "" {
		return m.fitted.out
	}
	m.fitted.in, m.fitted.w, m.fitted.h, m.fitted.out = body, m.w, h, fit(body, m.w, h)
	return m.fitted.out
}

// placeOver centres box on screen (w×h), replacing the lines it covers.
func placeOver(screen, box string, w, h int) string {
	lines := strings.Split(fit(screen, w, h), "\n")
	bl := strings.Split(box, "\n")
	bw := 0
	for _, l := range bl {
		bw = max(bw, textfmt.Width(l))
	}
	top := max(0, (h-len(bl))/2)
	left := max(0, (w-bw)/2)
	for i, l := range bl {
		if top+i >= len(lines) {
			break
		}
		lines[top+i] = strings.Repeat(" ", left) + l
	}
	return strings.Join(lines, "\n")
}
