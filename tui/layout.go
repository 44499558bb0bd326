package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/charmbracelet/x/ansi"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
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
	m.headerBar.SetSize(w, 1)
	m.alertBar.SetSize(w, 1)
	m.tabsBar.SetSize(w, 1)
	m.footerBar.SetSize(w, footerLines)
	for _, c := range m.stack {
		m.size(c)
	}
}

// size gives a component on the stack its region: the body, whether it replaces it or sits over it as a box.
func (m *Model) size(c component) {
	c.SetSize(max(m.w, minW), m.bodyHeight())
}

// View is the frame, declared: the alternate screen, the mouse's clicks and wheel, and the screen's text. A plain
// theme's frame carries no escape sequence at all (what the bubbles draw included).
func (m *Model) View() tea.View {
	content := m.Screen()
	if m.st.plain && strings.IndexByte(content, ansi.ESC) >= 0 { // (a text field's cursor, the progress bar)
		content = ansi.Strip(content)
	}
	v := tea.NewView(content)
	v.AltScreen, v.MouseMode = true, tea.MouseModeCellMotion
	return v
}

// Screen renders exactly the window's size.
func (m *Model) Screen() string {
	if m.quitting {
		return ""
	}
	if m.w < minW || m.h < minH {
		msg := fmt.Sprintf("deadletter needs at least %d×%d; this window is %d×%d. Enlarge it — until then every key but q is dropped, not kept.", minW, minH, m.w, m.h)
		if m.ignored != "" {
			msg += fmt.Sprintf(" (%q was dropped)", m.ignored)
		}
		return fit(textfmt.Wrap(msg, max(m.w, 1), " "), m.w, m.h)
	}
	f := frameMsg{m.frame()}
	for _, b := range m.bars() {
		b.Update(f)
	}
	body := m.body()
	return m.headerBar.View() + "\n" + m.alertBar.View() + "\n" + m.fitBody(body) + "\n" + m.footerBar.View()
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
		screen = m.tabsBar.View() + "\n" + m.paneView()
	}
	for _, c := range m.stack[under+1:] {
		if _, ok := c.(*filterBar); ok {
			continue // it draws on the footer's status line
		}
		if box := c.View(); box != "" {
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
			return fit(textfmt.Wrap(strings.Join(lines, "\n"), m.w, " "), m.w, bh)
		}
		return fit(m.paint(&m.st.Dim, "reading the container…"), m.w, bh)
	}
	if m.view == 0 {
		return m.overview.View()
	}
	return m.table().View()
}

// frame is the state the bars draw, as the root holds it now.
func (m *Model) frame() frame {
	f := frame{context: m.opt.Context, readOnly: m.opt.Session.ReadOnly(), noRegist: m.cfg.Handlers == nil,
		loaded: m.list.loaded, running: m.list.running, seen: m.list.seen, items: len(m.snap.Items), listErr: m.list.err,
		goodAt: m.list.goodAt, now: m.snap.Now, container: m.snap.Container, report: m.report, unread: m.unread,
		tabs: m.tabTexts(), view: m.view, status: m.status, filterText: m.filter.text, filterErr: m.filter.err,
		filterPending: m.filter.pendingEvents(),
		stacked:       len(m.stack) > 0}
	f.banner = m.opt.Banner // the header asks it for its words in the room it has
	if f.listErr != nil {
		f.retryIn = m.retryIn()
	}
	if t := m.table(); t != nil {
		f.selected = len(t.selected)
	}
	top := m.top()
	if bar, ok := top.(*filterBar); ok {
		f.filtering, f.filterLine = true, bar.View()
		if m.filter.err != "" {
			f.filterLine = m.paint(&m.st.Error, m.filter.err)
		}
	}
	if _, ok := top.(overlay); ok {
		f.boxed = true
	} else {
		f.keys, f.rootKeys = top.Scope().hints(), m.rootScopeFor(top).hints()
	}
	return f
}

// bars are the frame's components, in the order they are drawn.
func (m *Model) bars() []component {
	return []component{m.headerBar, m.alertBar, m.tabsBar, m.footerBar}
}

func (m *Model) retryIn() string {
	d := m.list.retryAt.Sub(m.now()).Round(time.Second)
	return textfmt.Duration(max(d, 0))
}

// badgeLabels are the findings' names on the badge line; shortBadgeLabels fit every finding into 80 columns.
var (
	badgeLabels = map[rules.FindingKind]string{rules.FindingExpiring: "EXPIRING", rules.FindingStranded: "STRANDED",
		rules.FindingReplayStalled: "STALLED", rules.FindingCrash: "CRASH", rules.FindingUntriggerable: "UNTRIGGERABLE",
		rules.FindingQuarantine: "QUARANTINE", rules.FindingMalformed: "MALFORMED", rules.FindingHandlerFailing: "EG HANDLER FAILING",
		rules.FindingReplayDropping: "REPLAY DROPPING", rules.FindingAppStartRepeats: "START REPEATS"}
	shortBadgeLabels = map[rules.FindingKind]string{rules.FindingExpiring: "EXPIRE", rules.FindingStranded: "STRAND",
		rules.FindingReplayStalled: "STALL", rules.FindingCrash: "CRASH", rules.FindingUntriggerable: "UNTRIG",
		rules.FindingQuarantine: "QUAR", rules.FindingMalformed: "MALF", rules.FindingHandlerFailing: "EGFAIL",
		rules.FindingReplayDropping: "DROP", rules.FindingAppStartRepeats: "REPEAT"}
)

// thousands prints a count with thousands separators: 120,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

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

// fit makes s exactly w columns by h lines: longer lines are cut with an ellipsis (a cut says so), shorter ones padded,
// missing lines added.
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
			lines[i] = textfmt.Pad(textfmt.Truncate(l, w, "…"), w)
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
