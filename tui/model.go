// Package tui is deadletter's dashboard: Bubble Tea models over the replay package. Every rule it shows or runs
// comes from replay; this package only lays it out. Update never does I/O: reads, refreshes and actions run in
// tea.Cmds and come back as messages tagged with a sequence number, so a stale reply is dropped.
package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
	"github.com/mattn/go-runewidth"
)

// Options wire the dashboard to a container.
type Options struct {
	Loader   *replay.Loader
	Check    replay.CheckOptions
	ReadOnly bool
	// Interval is the polling period (and the retry delay after a failed refresh).
	Interval time.Duration
	Renderer *lipgloss.Renderer
	// Clock is the local clock for countdowns (tests pin it); nil means time.Now.
	Clock func() time.Time
	// Concurrency bounds a drain's parallel blobs (default 16).
	Concurrency int
}

// Minimum size the dashboard lays itself out for.
const minW, minH = 80, 24

// hydrateBatch is how many payloads one hydration command reads.
const hydrateBatch = 128

// Model is the root: header, pane tabs, the focused pane's table, and the detail, help and dialog overlays.
type Model struct {
	opt  Options
	cfg  replay.Config
	st   Styles
	keys KeyMap
	ctx  context.Context
	stop context.CancelFunc

	w, h   int
	snap   *replay.Snapshot
	report replay.Report
	tables []*table
	active int

	detail *detail
	dialog *dialog
	help   bool

	filter     textinput.Model
	filterSeq  int
	filterText string
	match      matcher

	refreshSeq int
	refreshing bool
	lastErr    error
	retryAt    time.Time
	hydrating  bool
	unread     int // blobs whose payload is neither read nor unreadable
	scanPos    int // where the next background hydration scan starts
	lastReport time.Time
	detailSeq  int
	status     string
	quitting   bool
}

// New builds the dashboard.
func New(o Options) *Model {
	if o.Interval <= 0 {
		o.Interval = 15 * time.Second
	}
	if o.Renderer == nil {
		o.Renderer = lipgloss.DefaultRenderer()
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	ctx, stop := context.WithCancel(context.Background())
	m := &Model{opt: o, cfg: o.Loader.Config, st: NewStyles(o.Renderer), keys: DefaultKeyMap(), ctx: ctx, stop: stop, w: minW, h: minH}
	for _, p := range replay.Panes {
		m.tables = append(m.tables, newTable(p))
	}
	m.filter = textinput.New()
	m.filter.Prompt = "/"
	m.filter.Placeholder = "name, reason or outcome"
	m.filter.CharLimit = 200
	m.layout()
	m.updateKeys()
	return m
}

// Messages. Each reply carries the sequence number of its request.
type (
	refreshMsg struct {
		seq  int
		snap *replay.Snapshot
		err  error
	}
	pollMsg     struct{ seq int }
	secondMsg   struct{}
	hydratedMsg struct{ results []replay.Hydrated }
	detailMsg   struct {
		seq  int
		name string
		d    *replay.Detail
		err  error
	}
	filterMsg struct{ seq int }
)

// Init starts the first refresh.
func (m *Model) Init() tea.Cmd { return m.refresh() }

func (m *Model) refresh() tea.Cmd {
	if m.refreshing {
		return nil
	}
	m.refreshing = true
	m.refreshSeq++
	seq, l, ctx := m.refreshSeq, m.opt.Loader, m.ctx
	return func() tea.Msg {
		s, err := l.List(ctx)
		return refreshMsg{seq: seq, snap: s, err: err}
	}
}

func (m *Model) poll(d time.Duration) tea.Cmd {
	seq := m.refreshSeq
	return tea.Tick(d, func(time.Time) tea.Msg { return pollMsg{seq: seq} })
}

// hydrate reads the next batch of unread payloads: the rows on screen first, then every pane in order.
func (m *Model) hydrate() tea.Cmd {
	if m.hydrating || m.snap == nil || m.unread == 0 {
		return nil
	}
	var batch []store.BlobInfo
	seen := map[int]bool{}
	add := func(i int) {
		it := &m.snap.Items[i]
		if it.Summary == nil && it.ReadErr == "" && !seen[i] && len(batch) < hydrateBatch {
			seen[i] = true
			batch = append(batch, it.BlobInfo)
		}
	}
	for _, i := range m.tables[m.active].Visible() {
		add(i)
	}
	for n := 0; n < len(m.snap.Items) && len(batch) < hydrateBatch; n++ {
		add((m.scanPos + n) % len(m.snap.Items))
		if len(batch) == hydrateBatch {
			m.scanPos = (m.scanPos + n + 1) % len(m.snap.Items)
		}
	}
	if len(batch) == 0 {
		m.unread = 0
		return nil
	}
	m.hydrating = true
	l, ctx := m.opt.Loader, m.ctx
	return func() tea.Msg { return hydratedMsg{results: l.Hydrate(ctx, batch)} }
}

func (m *Model) openDetail(name string) tea.Cmd {
	m.detail = newDetail(name)
	m.layout()
	m.detail.Load(nil, nil, m.cfg, m.st)
	m.detailSeq++
	seq, l, ctx := m.detailSeq, m.opt.Loader, m.ctx
	m.updateKeys()
	return func() tea.Msg {
		d, err := l.Inspect(ctx, name)
		return detailMsg{seq: seq, name: name, d: d, err: err}
	}
}

// Update routes messages: replies to their owner, keys to the focused component only.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.layout()
		return m, nil
	case refreshMsg:
		if msg.seq != m.refreshSeq {
			return m, nil
		}
		m.refreshing = false
		if msg.err != nil {
			m.lastErr = msg.err
			m.retryAt = m.opt.Clock().Add(m.opt.Interval)
			return m, tea.Batch(m.poll(m.opt.Interval), tickSecond())
		}
		m.lastErr = nil
		m.setSnapshot(msg.snap)
		return m, tea.Batch(m.poll(m.opt.Interval), m.hydrate())
	case pollMsg:
		switch {
		case msg.seq != m.refreshSeq:
			return m, nil // a newer refresh has its own poll
		case m.dialog != nil && m.dialog.kind == dlgRunning:
			return m, m.poll(m.opt.Interval) // no refresh under a running action; try again later
		}
		return m, m.refresh()
	case secondMsg:
		if m.lastErr != nil {
			return m, tickSecond()
		}
		return m, nil
	case hydratedMsg:
		m.hydrating = false
		if m.snap != nil {
			m.snap.Apply(msg.results...)
			m.countUnread()
			if now := m.opt.Clock(); now.Sub(m.lastReport) > 250*time.Millisecond || m.unread == 0 {
				m.report = m.cfg.Check(m.snap, m.opt.Check)
				m.lastReport = now
			}
		}
		return m, m.hydrate()
	case detailMsg:
		if m.detail != nil && msg.seq == m.detailSeq {
			m.detail.Load(msg.d, msg.err, m.cfg, m.st)
		}
		return m, nil
	case filterMsg:
		if msg.seq == m.filterSeq {
			m.applyFilter()
		}
		return m, nil
	case restorePlansMsg, progressMsg, actionDoneMsg:
		return m, m.updateDialog(msg)
	case tea.KeyMsg:
		return m, m.handleKey(msg)
	}
	if m.filter.Focused() {
		var cmd tea.Cmd
		m.filter, cmd = m.filter.Update(msg)
		return m, cmd
	}
	if m.dialog != nil {
		return m, m.updateDialog(msg)
	}
	return m, nil
}

func tickSecond() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return secondMsg{} })
}

func (m *Model) countUnread() {
	m.unread = 0
	for i := range m.snap.Items {
		if m.snap.Items[i].Summary == nil && m.snap.Items[i].ReadErr == "" {
			m.unread++
		}
	}
}

func (m *Model) setSnapshot(s *replay.Snapshot) {
	m.snap = s
	m.scanPos = 0
	m.countUnread()
	byPane := map[replay.Pane][]int{}
	for i := range s.Items {
		byPane[s.Items[i].Pane] = append(byPane[s.Items[i].Pane], i)
	}
	m.match.reset(s)
	f := m.match.fn(m.filterText)
	for _, t := range m.tables {
		t.SetItems(s, byPane[t.pane], f)
	}
	m.report = m.cfg.Check(s, m.opt.Check)
	m.lastReport = m.opt.Clock()
	m.updateKeys()
}

func (m *Model) applyFilter() {
	m.filterText = m.filter.Value()
	if m.snap != nil {
		f := m.match.fn(m.filterText)
		for _, t := range m.tables {
			t.Filter(m.snap, f, t.cursorName(m.snap))
		}
	}
}

func (m *Model) handleKey(k tea.KeyMsg) tea.Cmd {
	// Fast typing and terminal multiplexers deliver several runes in one message ("/WEBHOOKS"): outside a text
	// input each is a key of its own; once the filter takes focus, the rest is its text.
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 && !k.Paste && !m.filter.Focused() {
		var cmds []tea.Cmd
		for i, r := range k.Runes {
			if m.filter.Focused() {
				cmds = append(cmds, m.handleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: k.Runes[i:]}))
				break
			}
			cmds = append(cmds, m.handleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt}))
		}
		return tea.Batch(cmds...)
	}
	if m.dialog != nil {
		return m.updateDialog(k)
	}
	if m.filter.Focused() {
		switch k.String() {
		case "enter":
			m.filter.Blur()
			m.applyFilter()
			return nil
		case "esc":
			m.filter.Blur()
			m.filter.SetValue("")
			m.applyFilter()
			return nil
		case "ctrl+c":
			return m.quit()
		}
		var cmd tea.Cmd
		before := m.filter.Value()
		m.filter, cmd = m.filter.Update(k)
		if m.filter.Value() != before {
			m.filterSeq++
			seq := m.filterSeq
			// Debounced: a burst of keystrokes filters once.
			cmd = tea.Batch(cmd, tea.Tick(80*time.Millisecond, func(time.Time) tea.Msg { return filterMsg{seq: seq} }))
		}
		return cmd
	}
	if m.help {
		if key.Matches(k, m.keys.Quit) && k.String() == "ctrl+c" {
			return m.quit()
		}
		m.help = false
		return nil
	}
	keys := m.keys
	if m.detail != nil {
		switch {
		case key.Matches(k, keys.Back), k.String() == "q":
			m.detail = nil
			m.updateKeys()
			return nil
		case k.String() == "ctrl+c":
			return m.quit()
		case pressed(k, keys.Drain) && m.detail.d != nil:
			return m.confirmDrain([]replay.Item{m.detail.d.Item})
		case pressed(k, keys.Restore):
			return m.confirmRestore([]string{m.detail.name})
		case key.Matches(k, keys.Help):
			m.help = true
			return nil
		}
		return m.detail.Update(k)
	}
	t := m.tables[m.active]
	switch {
	case key.Matches(k, keys.Quit):
		return m.quit()
	case key.Matches(k, keys.Help):
		m.help = true
	case key.Matches(k, keys.Up):
		t.Move(-1)
	case key.Matches(k, keys.Down):
		t.Move(1)
	case key.Matches(k, keys.PageUp):
		t.Move(-t.height)
	case key.Matches(k, keys.PageDown):
		t.Move(t.height)
	case key.Matches(k, keys.Top):
		t.Move(-len(t.rows))
	case key.Matches(k, keys.Bottom):
		t.Move(len(t.rows))
	case key.Matches(k, keys.NextPane):
		m.setPane((m.active + 1) % len(m.tables))
	case key.Matches(k, keys.PrevPane):
		m.setPane((m.active + len(m.tables) - 1) % len(m.tables))
	case key.Matches(k, keys.Pane1), key.Matches(k, keys.Pane2), key.Matches(k, keys.Pane3), key.Matches(k, keys.Pane4):
		m.setPane(int(k.String()[0] - '1'))
	case key.Matches(k, keys.Select):
		t.Toggle(m.snap)
		t.Move(1)
		m.updateKeys()
	case key.Matches(k, keys.SelectAll):
		if m.snap != nil {
			t.SelectAll(m.snap)
		}
		m.updateKeys()
	case key.Matches(k, keys.Back):
		t.selected = map[string]bool{}
		m.updateKeys()
	case key.Matches(k, keys.Filter):
		m.filter.SetValue(m.filterText)
		m.filter.CursorEnd()
		return m.filter.Focus()
	case key.Matches(k, keys.Sort):
		t.sort = (t.sort + 1) % sortCount
		if m.snap != nil {
			t.Sort(m.snap, m.match.fn(m.filterText))
		}
	case key.Matches(k, keys.Reverse):
		t.desc = !t.desc
		if m.snap != nil {
			t.Sort(m.snap, m.match.fn(m.filterText))
		}
	case key.Matches(k, keys.Refresh):
		return m.refresh()
	case key.Matches(k, keys.Open):
		if it, ok := t.Current(m.snap); ok {
			return m.openDetail(it.Name)
		}
	case pressed(k, keys.Drain):
		items := t.Selection(m.snap)
		if len(items) == 0 && m.snap != nil {
			items = m.snap.InPane(replay.PaneStranded)
		}
		return m.confirmDrain(items)
	case pressed(k, keys.Restore):
		var names []string
		for _, it := range t.Selection(m.snap) {
			names = append(names, it.Name)
		}
		if it, ok := t.Current(m.snap); ok && len(names) == 0 {
			names = []string{it.Name}
		}
		return m.confirmRestore(names)
	}
	// Rows that scrolled into view are read first.
	return m.hydrate()
}

// pressed matches a binding whether or not it is enabled, so a disabled action can say why it is off.
func pressed(k tea.KeyMsg, b key.Binding) bool {
	for _, s := range b.Keys() {
		if k.String() == s {
			return true
		}
	}
	return false
}

func (m *Model) setPane(i int) {
	if i >= 0 && i < len(m.tables) {
		m.active = i
		m.updateKeys()
	}
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	if m.dialog != nil && m.dialog.cancel != nil {
		m.dialog.cancel()
	}
	m.stop()
	return tea.Quit
}

// updateKeys enables exactly the bindings that apply where the operator is.
func (m *Model) updateKeys() {
	pane := m.tables[m.active].pane
	if m.detail != nil && m.detail.d != nil {
		pane = m.detail.d.Pane
	}
	m.keys.Drain.SetEnabled(!m.opt.ReadOnly && pane == replay.PaneStranded)
	m.keys.Restore.SetEnabled(!m.opt.ReadOnly && pane == replay.PaneQuarantine)
	m.keys.Open.SetEnabled(m.detail == nil)
	m.keys.Select.SetEnabled(m.detail == nil)
}

// layout is the one place where sizes are worked out.
func (m *Model) layout() {
	w, h := max(m.w, minW), max(m.h, minH)
	const chrome = 2 + 1 + 1 + 2 // header, tabs, column header, footer
	for _, t := range m.tables {
		t.SetSize(w, h-chrome)
	}
	if m.detail != nil {
		m.detail.SetSize(w, h-3-2)
	}
	m.filter.Width = w - 4
	if m.dialog != nil {
		m.dialog.SetSize(w, h)
	}
}

// View renders exactly the window's size.
func (m *Model) View() string {
	if m.quitting {
		return ""
	}
	if m.w < minW || m.h < minH {
		return fit(fmt.Sprintf("deadletter needs at least %d×%d (this is %d×%d): enlarge the window", minW, minH, m.w, m.h), m.w, m.h)
	}
	var body string
	switch {
	case m.help:
		body = m.helpView()
	case m.detail != nil:
		body = m.detail.View()
	default:
		body = m.tableView()
	}
	top := m.header() + "\n"
	if m.detail == nil && !m.help {
		top += m.tabs() + "\n"
	} else {
		top += m.st.Dim.Render("esc back · ↑/↓ pgup/pgdn scroll · ? help") + "\n"
	}
	screen := top + body
	if m.dialog != nil {
		screen = m.dialog.Overlay(fit(screen, m.w, m.h-2), m.st, m.w, m.h-2)
	}
	return fit(screen, m.w, m.h-2) + "\n" + m.footer()
}

func (m *Model) tableView() string {
	if m.snap == nil {
		msg := "reading the container…"
		if m.lastErr != nil {
			msg = "could not read the container"
		}
		return m.st.Dim.Render(msg)
	}
	return m.tables[m.active].View(m.snap, m.st, m.snap.Now, m.cfg, m.cfg.ExpiringWithin, true)
}

func (m *Model) header() string {
	name := "…"
	if m.snap != nil {
		name = textfmt.Printable(m.snap.Container)
	} else {
		name = textfmt.Printable(m.opt.Loader.Container.Describe())
	}
	parts := []string{m.st.Title.Render("deadletter"), name}
	if m.snap != nil {
		parts = append(parts, "service time "+m.snap.Now.UTC().Format("2006-01-02 15:04:05Z"))
	}
	if m.opt.ReadOnly {
		parts = append(parts, m.st.Warn.Render("READ-ONLY"))
	}
	if m.cfg.Handlers == nil {
		parts = append(parts, m.st.Warn.Render("no --handlers: verdicts partial"))
	}
	if m.refreshing {
		parts = append(parts, m.st.Dim.Render("refreshing…"))
	}
	line1 := strings.Join(parts, "  ")
	var badges []string
	for _, f := range m.report.Findings {
		label := map[replay.FindingKind]string{replay.FindingStranded: "STRANDED", replay.FindingExpiring: "EXPIRING", replay.FindingReplayStalled: "STALLED",
			replay.FindingMalformed: "MALFORMED", replay.FindingQuarantine: "QUARANTINE"}[f.Kind]
		badges = append(badges, m.st.Alert.Render(fmt.Sprintf("▲%s %d", label, f.Count)))
	}
	line2 := strings.Join(badges, " ")
	if m.snap != nil && len(badges) == 0 {
		line2 = m.st.OK.Render("✓ healthy: nothing stranded, quarantined, expiring or stalled")
	}
	if m.unread > 0 {
		line2 += m.st.Dim.Render(fmt.Sprintf("  reading payloads… %d left", m.unread))
	}
	return line1 + "\n" + line2
}

func (m *Model) tabs() string {
	var out []string
	for i, t := range m.tables {
		label := fmt.Sprintf("%d %s %d", i+1, strings.ToUpper(string(t.pane[:1]))+string(t.pane[1:]), t.total)
		if m.filterText != "" {
			label = fmt.Sprintf("%d %s %d/%d", i+1, strings.ToUpper(string(t.pane[:1]))+string(t.pane[1:]), len(t.rows), t.total)
		}
		if i == m.active {
			out = append(out, m.st.TabActive.Render("["+label+"]"))
		} else {
			out = append(out, m.st.Tab.Render(" "+label+" "))
		}
	}
	s := strings.Join(out, " ")
	t := m.tables[m.active]
	if n := len(t.selected); n > 0 {
		s += m.st.Chose.Render(fmt.Sprintf("  %d selected", n))
	}
	s += m.st.Dim.Render(fmt.Sprintf("  sort: %s", sortNames[t.sort]))
	return s
}

func (m *Model) footer() string {
	var status string
	switch {
	case m.filter.Focused():
		status = m.filter.View()
	case m.lastErr != nil:
		wait := m.retryAt.Sub(m.opt.Clock()).Round(time.Second)
		since := "no data yet"
		if m.snap != nil {
			since = "showing data from " + m.snap.Now.UTC().Format("15:04:05Z")
		}
		status = m.st.Error.Render(fmt.Sprintf("! refresh failed: %s — %s; retrying in %s", textfmt.Printable(m.lastErr.Error()), since, max(wait, 0)))
	case m.filterText != "":
		status = m.st.Info.Render("filter: " + textfmt.Printable(m.filterText) + "  (/ to change, esc in the filter to clear)")
	case m.status != "":
		status = m.status
	}
	return fit(status, m.w, 1) + "\n" + fit(m.shortHelp(), m.w, 1)
}

// shortHelp is the footer: the keys that matter most, disabled ones struck through.
func (m *Model) shortHelp() string {
	var parts []string
	for _, b := range m.keys.ShortHelp() {
		if !b.Enabled() {
			continue // the help screen lists it as off
		}
		h := b.Help()
		parts = append(parts, m.st.Key.Render(h.Key)+" "+m.st.Dim.Render(strings.Fields(h.Desc)[0]))
	}
	return strings.Join(parts, "  ")
}

func (m *Model) helpView() string {
	var b strings.Builder
	b.WriteString(m.st.Title.Render("keys") + m.st.Dim.Render("  (keys marked off do not apply here, or read-only mode turned them off)") + "\n\n")
	var all []key.Binding
	for _, c := range m.keys.FullHelp() {
		all = append(all, c...)
	}
	const colW = 39
	ncol := max(1, min(4, m.w/colW))
	rows := (len(all) + ncol - 1) / ncol
	for r := 0; r < rows; r++ {
		for c := 0; c < ncol; c++ {
			i := c*rows + r
			if i >= len(all) {
				continue
			}
			h := all[i].Help()
			s := fmt.Sprintf("%-10s %s", h.Key, h.Desc)
			if !all[i].Enabled() {
				s = m.st.Disabled.Render(cell(fmt.Sprintf("%-10s off · %s", h.Key, h.Desc), colW-1)) + " "
			} else {
				s = cell(s, colW)
			}
			b.WriteString(s)
		}
		b.WriteString("\n")
	}
	for _, l := range []string{
		"",
		m.st.Header.Render("verdicts") + "  R replay · C cap · N notIdempotent · U unroutable · ? unknown (needs --handlers) · ∞ an uncountable id",
		m.st.Header.Render("alerts") + "  !AGE a live blob past the grace: the replay is not consuming · !DELETE IN stranded or quarantined, about to be lost",
		m.st.Dim.Render("press any key to close"),
	} {
		b.WriteString(ansi.Wrap(l, m.w, " ") + "\n")
	}
	return b.String()
}

// width is a line's width on screen: escape sequences count for nothing, and characters are measured with
// runewidth, as the table's cells were cut. Plain ASCII, the common case, costs one pass over the bytes.
func width(s string) int {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] == 0x1b {
			ascii = false
			break
		}
	}
	if ascii {
		return len(s)
	}
	return runewidth.StringWidth(ansi.Strip(s))
}

// fit makes s exactly w columns by h lines: longer lines are cut, shorter ones padded, missing lines added.
// Every frame goes through it, so no view can overflow the terminal whatever a blob holds.
func fit(s string, w, h int) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		lw := width(l)
		switch {
		case lw > w:
			lines[i] = ansi.Truncate(l, w, "")
			if tw := width(lines[i]); tw < w {
				lines[i] += strings.Repeat(" ", w-tw)
			}
		case lw < w:
			lines[i] = l + strings.Repeat(" ", w-lw)
		}
	}
	for len(lines) < h {
		lines = append(lines, strings.Repeat(" ", w))
	}
	return strings.Join(lines, "\n")
}
