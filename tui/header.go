package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
)

// header is the top two lines: what is open and how fresh it is, then what needs a human. The badges that
// change what the operator may trust or do — READ-ONLY, no handler register, stale data — come before the
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

// badgeLabels are the findings' names on the badge line, short enough for 80 columns.
var badgeLabels = map[replay.FindingKind]string{replay.FindingExpiring: "EXPIRING", replay.FindingStranded: "STRANDED",
	replay.FindingReplayStalled: "STALLED", replay.FindingCrash: "CRASH", replay.FindingUntriggerable: "UNTRIGGERABLE", replay.FindingQuarantine: "QUARANTINE", replay.FindingMalformed: "MALFORMED"}

// shortBadgeLabels fit every finding into 80 columns.
var shortBadgeLabels = map[replay.FindingKind]string{replay.FindingExpiring: "EXPIRE", replay.FindingStranded: "STRAND",
	replay.FindingReplayStalled: "STALL", replay.FindingCrash: "CRASH", replay.FindingUntriggerable: "UNTRIG", replay.FindingQuarantine: "QUAR", replay.FindingMalformed: "MALF"}

// alertLine is the second line: a badge per finding (or healthy), what is still being read, and acks.
func (m *Model) alertLine() string {
	var parts []string
	labels := badgeLabels
	long := 0
	for _, f := range m.report.Findings {
		long += len(badgeLabels[f.Kind]) + len(thousands(f.Count)) + 3
	}
	if long > m.w {
		labels = shortBadgeLabels
	}
	for _, f := range m.report.Findings {
		parts = append(parts, m.paint(&m.st.Alert, fmt.Sprintf("▲%s %s", labels[f.Kind], thousands(f.Count))))
	}
	if n := m.report.Unreadable; n > 0 {
		// Blobs whose contents are unknown: never a healthy screen (the filter is:unreadable shows them).
		label := "UNREADABLE"
		if long > m.w {
			label = "UNREAD"
		}
		parts = append(parts, m.paint(&m.st.Alert, fmt.Sprintf("▲%s %s", label, thousands(n))))
	}
	switch {
	case len(parts) > 0:
	case m.list.loaded && m.unread == 0:
		parts = append(parts, m.paint(&m.st.OK, "✓ healthy: nothing stranded, quarantined, expiring, stalled or malformed"))
	case m.list.loaded:
		parts = append(parts, m.paint(&m.st.OK, "✓ nothing so far"))
	}
	line := strings.Join(parts, " ")
	var info []string
	if m.list.running {
		info = append(info, fmt.Sprintf("listing… %s so far", thousands(m.list.seen)))
	}
	if m.unread > 0 {
		info = append(info, fmt.Sprintf("reading payloads… %s left", thousands(m.unread)))
	}
	if n := m.report.Acked; n > 0 {
		info = append(info, fmt.Sprintf("%d acked", n))
	}
	if n := m.report.Handled; n > 0 {
		info = append(info, fmt.Sprintf("%d handled", n))
	}
	// What does not fit whole is left out, last first (the counts before the progress), never cut mid-word.
	for len(info) > 0 && textfmt.Width(line)+2+textfmt.Width(strings.Join(info, " · ")) > m.w {
		info = info[:len(info)-1]
	}
	if len(info) > 0 {
		line += "  " + m.paint(&m.st.Dim, strings.Join(info, " · "))
	}
	return line
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
func (m *Model) tabs() string {
	if !m.list.loaded && len(m.snap.Items) == 0 {
		return fit(m.paint(&m.st.Dim, "no counts yet: the container has not been read"), m.w, 1) // not zeros that look healthy
	}
	var out []string
	label := func(i int, s string) string {
		if i == m.view {
			return m.paint(&m.st.TabActive, "["+s+"]")
		}
		return m.paint(&m.st.Tab, " "+s+" ")
	}
	out = append(out, label(0, "o Overview"))
	for i, t := range m.tables {
		p := t.pane.String()
		name := strings.ToUpper(p[:1]) + p[1:]
		s := fmt.Sprintf("%d %s %s", i+1, name, thousands(m.counts[t.pane]))
		if m.filter.text != "" {
			s = fmt.Sprintf("%d %s %s/%s", i+1, name, thousands(len(t.rows)), thousands(len(t.order)))
		}
		out = append(out, label(i+1, s))
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
