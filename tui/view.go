package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/deadletter/deadletter/internal/textfmt"
)

// The screen: two header lines, the view line (tabs, or the detail's bar), the body, the status line and the
// key line. layout is the one place where sizes are worked out.
const (
	headerLines = 2
	footerLines = 2
)

func (m *Model) bodyHeight() int { return max(1, m.h-headerLines-1-footerLines) }

func (m *Model) layout() {
	w := max(m.w, minW)
	bh := max(1, max(m.h, minH)-headerLines-1-footerLines)
	for _, t := range m.tables {
		t.SetSize(w, bh)
	}
	m.overview.SetSize(w, bh)
	if m.detail != nil {
		m.detail.SetSize(w, bh+1) // the detail's bar takes the view line
	}
	if m.help != nil {
		m.help.SetSize(w, bh+1)
	}
	m.filter.input.Width = w - 4
	if m.dialog != nil {
		m.dialog.SetSize(m.dialogSize())
	}
}

// dialogSize is the part of the screen a dialog sits on: below the header, whose badges stay in sight while it is
// open, and above the footer.
func (m *Model) dialogSize() (w, h int) {
	return max(m.w, minW), max(m.h, minH) - headerLines - footerLines
}

// setView shows the overview (0) or a pane's table.
func (m *Model) setView(i int) {
	if i >= 0 && i <= len(m.tables) {
		m.view = i
	}
}

func (m *Model) by() string { return m.opt.By }

// View renders exactly the window's size.
func (m *Model) View() string {
	if m.quitting {
		return ""
	}
	if m.w < minW || m.h < minH {
		msg := fmt.Sprintf("deadletter needs at least %d×%d; this window is %d×%d. Enlarge it — every key but q waits until then.", minW, minH, m.w, m.h)
		if m.ignored != "" {
			msg += fmt.Sprintf(" (%q did nothing)", m.ignored)
		}
		return fit(ansi.Wrap(msg, max(m.w, 1), " "), m.w, m.h)
	}
	var body string
	switch {
	case m.help != nil:
		body = m.help.View(m.helpKeys())
	case m.detail != nil:
		body = m.detail.View()
	default:
		body = m.tabs() + "\n" + m.viewBody()
	}
	screen := fit(m.header()+"\n"+body, m.w, m.h-footerLines)
	if m.dialog != nil && m.help == nil {
		parts := strings.SplitN(screen, "\n", headerLines+1)
		screen = strings.Join(parts[:headerLines], "\n") + "\n" + m.dialog.View(parts[headerLines], m.keyHints(m.focusScope(), m.dialog.inner))
	}
	if m.quitAsk {
		screen = placeOver(screen, m.paint(&m.st.Box, m.paint(&m.st.Title, "An action is running. Quit?")+"\n\n"+
			"Blobs not yet started are left untouched; the one in flight finishes.\n\n"+m.keyHints(quitAskScope, 70)), m.w, m.h-footerLines)
	}
	return fit(screen, m.w, m.h-footerLines) + "\n" + m.footer()
}

// viewBody is the overview or the pane's table — or, before any listing succeeded, why there is nothing.
func (m *Model) viewBody() string {
	bh := m.bodyHeight()
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
	return m.table().View(m.filter.err, m.list.running)
}

func (m *Model) footer() string {
	var status string
	switch {
	case m.filter.focused():
		status = m.filter.input.View()
		if m.filter.err != "" {
			status = m.paint(&m.st.Error, m.filter.err)
		}
	case m.status != "":
		status = m.status
	case m.list.err != nil && (m.list.loaded || len(m.snap.Items) > 0):
		// Both ends of the error matter (what failed, and the hint at its end): a long one is cut in the middle.
		const prefix = "! listing failed: "
		status = m.st.Error.Render(prefix + textfmt.CellMiddle(textfmt.Printable(m.list.err.Error()), m.w-len(prefix)))
	case m.filter.err != "":
		status = m.paint(&m.st.Error, "filter: "+m.filter.err)
	case m.filter.text != "":
		status = m.paint(&m.st.Info, "filter: "+textfmt.Printable(m.filter.text)+"  (/ to change, esc in the filter clears it)")
	}
	return fit(status, m.w, 1) + "\n" + fit(m.keyHints(m.focusScope(), m.w), m.w, 1)
}

// mouse: the wheel scrolls what is on view; a click on a table row puts the cursor there.
func (m *Model) mouse(msg tea.MouseMsg) tea.Cmd {
	if m.focusScope() != tableScope && m.focusScope() != detailScope {
		return nil
	}
	wheel := 0
	switch msg.Button {
	case tea.MouseButtonWheelUp:
		wheel = -3
	case tea.MouseButtonWheelDown:
		wheel = 3
	}
	if m.detail != nil {
		m.detail.scroll(wheel)
		return nil
	}
	t := m.table()
	if t == nil {
		return nil
	}
	if wheel != 0 {
		t.move(wheel)
		return m.hydrate()
	}
	if msg.Action == tea.MouseActionPress && msg.Button == tea.MouseButtonLeft {
		if r, ok := t.rowAt(msg.Y - headerLines - 1); ok {
			t.cursor = r
			t.clamp()
		}
	}
	return nil
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
		lines[i] = textfmt.Pad(textfmt.Truncate(l, w, ""), w)
	}
	for len(lines) < h {
		lines = append(lines, strings.Repeat(" ", w))
	}
	return strings.Join(lines, "\n")
}
