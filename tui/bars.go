package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

// The screen's frame — the header, the alert line, the tabs and the footer — are components like the rest
// (SetSize, Update, View, Scope): each draws one region from what the root tells it in a frameMsg, and keeps it
// as its own state. None takes a key (their scopes are empty); the filter bar, which does, draws itself on the
// footer's status line.

// frame is what the root tells its bars before they draw: the state of the screen they say, computed by the root
// (which owns it) and sent, never written into them.
type frame struct {
	// The header's badges.
	context            string
	banner             func(room int) string
	readOnly, noRegist bool
	// The listing: whether one succeeded or runs, how far it got, its last error and when it was last good.
	loaded, running bool
	seen, items     int
	listErr         error
	goodAt          time.Time
	retryIn         string
	now             time.Time
	container       string
	// What needs a human, and what is still being read.
	report rules.Report
	unread int
	// The tabs: each view's words (the overview first), the one shown, the selection of the table shown.
	tabs     []string
	view     int
	selected int
	// The footer: the status line's words, the filter (applied, and why it does not parse), the filter bar's
	// own line when it has the focus, and the keys of the focused component and of the root that reach it.
	status                string
	filterText, filterErr string
	// filterPending is how many blobs the filter's event terms have not judged yet.
	filterPending      int
	filterLine         string
	filtering, stacked bool
	boxed              bool
	keys, rootKeys     []hint
}

// frameMsg is the frame the root sends every bar before it draws.
type frameMsg struct{ f frame }

// bar is what the four frame bars share: their size and the last frame.
type bar struct {
	e    *env
	w, h int
	f    frame
	keys *scope
}

func newBar(e *env, name string) bar { return bar{e: e, w: minW, h: 1, keys: &scope{name: name}} }

func (b *bar) SetSize(w, h int) { b.w, b.h = w, h }
func (b *bar) Scope() *scope    { return b.keys }
func (b *bar) take(msg tea.Msg) {
	if f, ok := msg.(frameMsg); ok {
		b.f = f.f
	}
}
func (b *bar) paint(style *lipgloss.Style, text string) string { return b.e.paint(style, text) }

// headerBar is the top line: what is open and how fresh it is. The badges that change what the operator may trust
// or do — READ-ONLY, no handler register, stale data, a rehearsal — come before the container's name, which gives
// up its middle first on a narrow terminal.
type headerBar struct{ bar }

func newHeaderBar(e *env) *headerBar { return &headerBar{newBar(e, "header")} }

func (h *headerBar) Update(msg tea.Msg) (component, tea.Cmd) { h.take(msg); return h, nil }

func (h *headerBar) View() string {
	w, st, f := h.w, h.e.st, &h.f
	title := h.paint(&st.Title, "deadletter")
	others := h.badges(false)
	if textfmt.Width(strings.Join(append([]string{title}, others...), " ")) > w-12 {
		others = h.badges(true)
	}
	fixed := textfmt.Width(strings.Join(append([]string{title}, others...), " "))
	name := textfmt.Printable(f.container)
	nameW := min(textfmt.Width(name), minNameW)
	clocks := []string{""}
	if f.loaded || f.items > 0 {
		clocks = []string{"service time " + f.now.UTC().Format("2006-01-02 15:04:05Z"), f.now.UTC().Format("15:04:05Z")}
	}
	// The banner (a rehearsal, its clock, what fails) gives way before the container's name and the service time:
	// whole with the long clock if it fits, else in the room the short clock leaves.
	var banner, clock string
	whole := ""
	if f.banner != nil {
		whole = f.banner(1 << 16)
	}
	for i, c := range clocks {
		clock = c
		room := w - fixed - 1 - 2 - nameW
		if c != "" {
			room -= len(c) + 2
		}
		if textfmt.Width(whole) <= room {
			banner = whole
			break
		}
		if i == len(clocks)-1 && f.banner != nil {
			banner = textfmt.Truncate(f.banner(max(room, 0)), max(room, 0), "…")
		}
	}
	parts := append([]string{title}, others...)
	if banner != "" {
		at := 1 // after the context's badge, when there is one
		if f.context != "" {
			at = 2
		}
		parts = append(parts[:at], append([]string{h.paint(&st.Badge, banner)}, parts[at:]...)...)
	}
	left := strings.Join(parts, " ")
	room := w - textfmt.Width(left) - 2
	if clock != "" && room-len(clock)-2 < 12 && len(clocks) > 1 {
		clock = clocks[1]
	}
	if clock != "" {
		room -= len(clock) + 2
	}
	name = textfmt.ShortenMiddle(name, max(room, 0))
	line := left
	if name != "" {
		line += "  " + name
	}
	if clock != "" {
		line += "  " + clock
	}
	return fit(line, w, h.h)
}

// minNameW is the least of the container's name the header keeps when a banner gives way.
const minNameW = 24

// badges are what changes what the operator may trust or do, in full or short for a narrow terminal.
func (h *headerBar) badges(short bool) []string {
	st, f := h.e.st, &h.f
	var out []string
	if f.context != "" {
		out = append(out, h.paint(&st.Badge, "ctx:"+textfmt.Printable(f.context)))
	}
	if f.readOnly {
		out = append(out, h.paint(&st.Badge, "READ-ONLY"))
	}
	if f.noRegist {
		label := "NO --handlers: verdicts partial"
		if short {
			label = "NO --handlers"
		}
		out = append(out, h.paint(&st.Badge, label))
	}
	switch {
	case f.listErr != nil && f.loaded:
		out = append(out, h.paint(&st.Stale, fmt.Sprintf("STALE since %s · retry in %s", f.goodAt.UTC().Format("15:04:05Z"), f.retryIn)))
	case f.listErr != nil && f.items > 0:
		out = append(out, h.paint(&st.Stale, fmt.Sprintf("PARTIAL: listing failed after %s · retry in %s", thousands(f.items), f.retryIn)))
	}
	return out
}

// alertBar is the second line: a badge per finding (or healthy), then the counts that keep blobs out of the
// badges (handled, acked) — always, shortened before they go — then what is still being read.
type alertBar struct{ bar }

func newAlertBar(e *env) *alertBar { return &alertBar{newBar(e, "alerts")} }

func (a *alertBar) Update(msg tea.Msg) (component, tea.Cmd) { a.take(msg); return a, nil }

func (a *alertBar) View() string { return fit(a.line(), a.w, a.h) }

func (a *alertBar) line() string {
	st, f := a.e.st, &a.f
	rep := &f.report
	type part struct{ full, short string }
	var badges []part
	for _, fd := range rep.Findings {
		badges = append(badges, part{fmt.Sprintf("▲%s %s", badgeLabels[fd.Kind], thousands(fd.Count)), fmt.Sprintf("▲%s %s", shortBadgeLabels[fd.Kind], thousands(fd.Count))})
	}
	if n := rep.Unreadable; n > 0 { // contents unknown: never a healthy screen (is:unreadable shows them)
		badges = append(badges, part{fmt.Sprintf("▲UNREADABLE %s", thousands(n)), fmt.Sprintf("▲UNREAD %s", thousands(n))})
	}
	var counts []part
	if n := rep.Acked; n > 0 {
		counts = append(counts, part{fmt.Sprintf("%d acked", n), fmt.Sprintf("%dA", n)})
	}
	if n := rep.Handled; n > 0 {
		counts = append(counts, part{fmt.Sprintf("%d handled", n), fmt.Sprintf("%dH", n)})
	}
	if n := rep.SuspiciousCount; n > 0 {
		counts = append(counts, part{fmt.Sprintf("%d forged ack(s)", n), fmt.Sprintf("%d?ack", n)})
	}
	var info []string
	if f.running {
		info = append(info, fmt.Sprintf("listing… %s so far", thousands(f.seen)))
	}
	if f.unread > 0 {
		info = append(info, fmt.Sprintf("reading payloads… %s left", thousands(f.unread)))
	}
	join := func(ps []part, short bool, style *lipgloss.Style) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			s := p.full
			if short {
				s = p.short
			}
			out[i] = a.paint(style, s)
		}
		return out
	}
	// Widest first; the badges and counts give up their long names before the progress gives up its place.
	for _, short := range []bool{false, true} {
		parts := join(badges, short, &st.Alert)
		if len(badges) == 0 {
			switch {
			case f.loaded && f.unread == 0:
				parts = []string{a.paint(&st.OK, "✓ healthy: nothing stranded, quarantined, expiring, stalled or malformed")}
			case f.loaded:
				parts = []string{a.paint(&st.OK, "✓ nothing so far")}
			}
		}
		line := strings.Join(parts, " ")
		if c := join(counts, short, &st.Dim); len(c) > 0 {
			line += "  " + strings.Join(c, " · ")
		}
		if textfmt.Width(line) > a.w && !short {
			continue
		}
		for i := len(info); i > 0; i-- { // what does not fit whole is left out, last first, never cut mid-word
			if rest := strings.Join(info[:i], " · "); textfmt.Width(line)+2+textfmt.Width(rest) <= a.w {
				return line + "  " + a.paint(&st.Dim, rest)
			}
		}
		return line
	}
	return ""
}

// tabsBar is the view line: the overview, then a tab per pane with its count (shown/total under a filter), and
// the selection.
type tabsBar struct{ bar }

func newTabsBar(e *env) *tabsBar { return &tabsBar{newBar(e, "tabs")} }

func (t *tabsBar) Update(msg tea.Msg) (component, tea.Cmd) { t.take(msg); return t, nil }

// at is the view whose tab is drawn at column x (-1: none).
func (t *tabsBar) at(x int) int {
	pos := 0
	for i, s := range t.f.tabs {
		w := textfmt.Width(s) + 2
		if x >= pos && x < pos+w {
			return i
		}
		pos += w
	}
	return -1
}

func (t *tabsBar) View() string {
	st, f := t.e.st, &t.f
	if !f.loaded && f.items == 0 {
		return fit(t.paint(&st.Dim, "no counts yet: the container has not been read"), t.w, t.h) // not zeros that look healthy
	}
	var out []string
	for i, s := range f.tabs {
		if i == f.view {
			out = append(out, t.paint(&st.TabActive, "["+s+"]"))
		} else {
			out = append(out, t.paint(&st.Tab, " "+s+" "))
		}
	}
	line := strings.Join(out, "")
	if n := f.selected; n > 0 {
		// The count is what an action will take: never cut. Where the words do not fit, the row mark says it.
		sel := fmt.Sprintf("  %d selected", n)
		if textfmt.Width(line)+textfmt.Width(sel) > t.w {
			sel = fmt.Sprintf(" *%d", n)
		}
		line += t.paint(&st.Chose, sel)
	}
	return fit(line, t.w, t.h)
}

// rowKey is the first screen's one-line key to the codes its rows show (help says every one in full).
const rowKey = "R2: 2 events replay · C cap · N notIdempotent · U unroutable · ? unknown"

// footerBar is the status line and the key line of the focused component (and the root's keys that reach it).
type footerBar struct{ bar }

func newFooterBar(e *env) *footerBar {
	b := newBar(e, "footer")
	b.h = 2
	return &footerBar{b}
}

func (b *footerBar) Update(msg tea.Msg) (component, tea.Cmd) { b.take(msg); return b, nil }

func (b *footerBar) View() string {
	st, f, w := b.e.st, &b.f, b.w
	var status string
	switch {
	case f.filtering && f.status == "":
		status = f.filterLine // the filter bar draws itself here while it has the focus
	case f.status != "":
		status = f.status
	case f.listErr != nil && (f.loaded || f.items > 0):
		// Both ends of the error matter (what failed, and the hint at its end): a long one is cut in the middle.
		const prefix = "! listing failed: "
		status = st.Error.Render(prefix + textfmt.CellMiddle(textfmt.Printable(f.listErr.Error()), w-len(prefix)))
	case f.filterErr != "":
		status = b.paint(&st.Error, "filter: "+f.filterErr)
	case f.filterText != "" && !f.stacked:
		pending := ""
		if f.filterPending > 0 {
			pending = fmt.Sprintf(" · reading events: %s blob(s) not judged yet", thousands(f.filterPending))
		}
		status = b.paint(&st.Info, "filter: "+textfmt.Printable(f.filterText)+pending+"  (/ to change, esc clears it)")
	case f.view > 0 && !f.stacked && f.items > 0:
		status = b.paint(&st.Dim, rowKey) // (the codes the rows open on, in one line; ? has them all)
	}
	keys := "" // a box lists its own keys, where the eye is
	if !f.boxed {
		keys = keyLine(st, b.e.painted, f.keys, f.rootKeys, w)
	}
	if !f.filtering && textfmt.Width(status) > w {
		status = textfmt.Truncate(status, w, "…") // (a cut status says so; the filter bar scrolls itself)
	}
	return fit(fit(status, w, 1)+"\n"+fit(keys, w, 1), w, b.h) // (at one line, the status alone)
}
