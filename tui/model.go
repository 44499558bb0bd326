package tui

import (
	"context"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
)

// Options wire the dashboard to an estate.
type Options struct {
	// Session is the estate opened (internal/session): its container and rules, Event Grid's witness, the
	// record, and every action the dashboard runs — the same calls the command line makes.
	Session *session.Session
	Check   rules.CheckOptions
	// Views are the saved views the context sees (v lists them).
	Views []session.View
	// Interval is the polling period (and the retry delay after a failed refresh).
	Interval time.Duration
	// Theme is the terminal's colour profile and background (the command line detects the profile; Bubble Tea
	// reports both as the program starts). Its zero value draws plain text.
	Theme Theme
	// Clock is the local clock for countdowns and throttles (tests pin it); nil means time.Now.
	Clock func() time.Time
	// Concurrency bounds an action's parallel blobs (replay.DefaultConcurrency when ≤ 0).
	Concurrency int
	// Clipboard receives OSC 52 sequences for y/Y (tests capture it). Nil: Bubble Tea's clipboard command, which
	// writes the sequence to the terminal between frames.
	Clipboard io.Writer
	// By is who acknowledges with a (the command line gives user@host; "?" when empty).
	By string
	// After delivers msg after d (tea.Tick by default): polling, the retry countdown and the filter's debounce.
	// Tests replace it with a clock they advance, so no test waits on a timer.
	After func(d time.Duration, msg tea.Msg) tea.Cmd
	// Banner, when set, is said in the header before the container's name (a rehearsal, its clock), in at most
	// room columns: it gives way (shortens) so the container's name and the service time always show.
	Banner func(room int) string
	// Pause, when set, is the p key: it pauses a rehearsal's clock or runs it again, and says which.
	Pause func() string
	// Paused says whether the rehearsal's clock stands still now (the key line then offers p to run it).
	Paused func() bool
	// Rehearsal, when set, is a running twin's controls: t opens its screen (the script, the account, the clock).
	Rehearsal Rehearsal
	// StillTwin, when set, is why t and p do nothing: the dashboard is on a twin's directory it does not run.
	StillTwin string
	// Context is the config file's context the dashboard shows (in the header), when it runs in one.
	Context string
	// Switch, when set, is the : key: the dashboard closes to the summary of every context.
	Switch func()
}

// Minimum size the dashboard lays itself out for.
const minW, minH = 80, 24

// hydrateBatch is how many payloads one hydration command reads.
const hydrateBatch = 128

// Model is the root component: it owns the snapshot and the focus stack, routes messages, and lays the screen out.
type Model struct {
	opt  Options
	cfg  rules.Config
	st   Styles
	ctx  context.Context
	stop context.CancelFunc

	w, h int

	// The container as last seen, and what the listing in flight has added to it.
	snap   *rules.Snapshot
	counts map[rules.Pane]int
	report rules.Report
	ready  []rules.Readiness
	list   listing
	// witness is what Event Grid's witness last read (empty until it answers, or without one); witnessing says a
	// reading is under way, so a refresh never starts a second.
	witness    rules.WitnessReport
	witnessing bool

	tables   []*table
	overview *overview
	// The frame: the header, the alert line, the tabs and the footer (bars.go).
	headerBar *headerBar
	alertBar  *alertBar
	tabsBar   *tabsBar
	footerBar *footerBar
	view      int // 0: the overview, 1…: the panes in replay.Panes order

	// stack is the focus: what sits on top of the pane view, the top taking the keys — the detail, an event, a
	// dialog, help, the filter bar, the quit question.
	stack []component
	// results is the last finished action's view, reopenable with L.
	results *runView

	filter filterState

	hydrating  bool
	unread     int
	scanPos    int
	reportAt   time.Time
	reportCost time.Duration
	status     string
	ignored    string // the last key the too-small screen swallowed
	quitting   bool
	painted    memo
	runs       int // actions started, for their messages' tags
	// mail is what components posted (env.send) during this Update, taken before it returns.
	mail []tea.Msg
	// fitted is the body as last fitted to the screen (fitBody).
	fitted struct {
		in, out string
		w, h    int
	}
}

// New builds the dashboard.
func New(o Options) *Model {
	if o.Interval <= 0 {
		o.Interval = rules.DefaultInterval
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Concurrency <= 0 {
		o.Concurrency = rules.DefaultConcurrency
	}
	if o.By == "" {
		o.By = "?" // the command line passes user@host: the dashboard looks nothing up in the environment
	}
	if o.After == nil {
		o.After = func(d time.Duration, msg tea.Msg) tea.Cmd { return tea.Tick(d, func(time.Time) tea.Msg { return msg }) }
	}
	ctx, stop := context.WithCancel(context.Background())
	m := &Model{opt: o, cfg: o.Session.Config(), st: NewStyles(o.Theme), ctx: ctx, stop: stop, w: minW, h: minH,
		snap: rules.NewSnapshot(o.Session.Where()), counts: map[rules.Pane]int{}, view: 1, painted: memo{}}
	for _, p := range rules.Panes {
		m.tables = append(m.tables, newTable(p, m.env()))
	}
	m.overview = newOverview(m.env())
	m.filter.bar = newFilterBar(m.env())
	e := m.env()
	m.headerBar, m.alertBar, m.tabsBar, m.footerBar = newHeaderBar(e), newAlertBar(e), newTabsBar(e), newFooterBar(e)
	m.layout()
	return m
}

// env is what components are given: the rules, the styles, a read-only snapshot and the services they may call
// in commands. They never see the root.
func (m *Model) env() *env {
	return &env{cfg: m.cfg, st: &m.st, painted: m.painted, snap: m.snap, sess: m.opt.Session, loader: m.opt.Session.Loader(), ctx: m.ctx, readOnly: m.opt.Session.ReadOnly(),
		estate: m.estate(),
		now:    m.now, serviceNow: m.serviceNow, by: m.opt.By, after: m.opt.After, concurrency: m.opt.Concurrency, post: m.post,
		witness: &m.witness, listing: func() bool { return m.list.running }, filter: func() string { return m.filter.text }}
}

// env is the read-only world a component works in.
type env struct {
	// estate names where actions write (every question and result says it).
	estate  string
	cfg     rules.Config
	st      *Styles
	painted memo
	snap    *rules.Snapshot
	// sess runs every action (its preview, its record); loader reads the container.
	sess        *session.Session
	loader      *replay.Loader
	ctx         context.Context
	readOnly    bool
	now         func() time.Time // the local clock
	serviceNow  func() time.Time // the service's clock, as far as the snapshot tells
	by          string
	after       func(d time.Duration, msg tea.Msg) tea.Cmd
	concurrency int
	post        func(tea.Msg)        // what env.send calls: the root's mailbox
	witness     *rules.WitnessReport // Event Grid's witness as last read (the root's)
	listing     func() bool          // whether a listing is under way (the root's)
	filter      func() string        // the filter applied to the tables (the root's): the record keeps its words
}

func (e *env) paint(style *lipgloss.Style, text string) string { return e.painted.paint(style, text) }

// Init starts the first listing, and asks the terminal for its background (the theme's light or dark palette).
func (m *Model) Init() tea.Cmd { return tea.Batch(m.refresh(), tea.RequestBackgroundColor) }

// themeMsg tells every component the theme changed: what it keeps painted is painted again.
type themeMsg struct{}

// retheme builds the styles of a theme the terminal told (its background, its colour profile) and repaints.
func (m *Model) retheme(t Theme) tea.Cmd {
	if t == m.opt.Theme {
		return nil
	}
	m.opt.Theme, m.st = t, NewStyles(t) // (every component holds &m.st)
	clear(m.painted)
	for _, tb := range m.tables {
		tb.Update(themeMsg{})
	}
	m.overview.Update(themeMsg{})
	return m.deliver(themeMsg{})
}

func (m *Model) now() time.Time { return m.opt.Clock() }

// serviceNow is the service's time now. A rehearsal's is its twin's clock as its store gives it — stopped while
// the twin is paused, running as fast as the twin runs — since the local time since the listing would run at wall
// speed; any other's is the snapshot's clock plus the local time since it was read.
func (m *Model) serviceNow() time.Time {
	if m.opt.Session.Rehearsal() {
		if t, err := m.opt.Session.Container().Now(m.ctx); err == nil {
			return t
		}
	}
	return m.snap.Since(m.list.nowAt, m.now())
}

// table is the pane table on view (nil on the overview).
func (m *Model) table() *table {
	if m.view == 0 {
		return nil
	}
	return m.tables[m.view-1]
}

// base is the pane view: the overview or the table on view.
func (m *Model) base() component {
	if t := m.table(); t != nil {
		return t
	}
	return m.overview
}

// top is the focused component.
func (m *Model) top() component {
	if len(m.stack) > 0 {
		return m.stack[len(m.stack)-1]
	}
	return m.base()
}

// push puts a component on top of the focus, sized for where it sits.
func (m *Model) push(c component) {
	m.stack = append(m.stack, c)
	m.size(c)
}

// pop closes the focused component.
func (m *Model) pop() {
	if len(m.stack) > 0 {
		m.stack = m.stack[:len(m.stack)-1]
	}
}

// replaceTop swaps the focused component for c (a dialog that becomes its run).
func (m *Model) replaceTop(c component) {
	m.pop()
	m.push(c)
}

// detail is the blob view in the focus stack, if any.
func (m *Model) detail() *detail {
	for i := len(m.stack) - 1; i >= 0; i-- {
		if d, ok := m.stack[i].(*detail); ok {
			return d
		}
	}
	return nil
}

// Update routes messages: keys to the focused scope, replies to their owner, requests to the root.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	return m, tea.Batch(cmd, m.takeMail())
}

// takeMail takes what components posted, in order, before the next message.
func (m *Model) takeMail() tea.Cmd {
	var cmds []tea.Cmd
	for len(m.mail) > 0 {
		next := m.mail[0]
		m.mail = m.mail[1:]
		cmds = append(cmds, m.update(next))
	}
	return tea.Batch(cmds...)
}

func (m *Model) post(msg tea.Msg) { m.mail = append(m.mail, msg) }

// send posts a message to the root itself (as env.send does for components).
func (m *Model) send(msg tea.Msg) tea.Cmd {
	m.post(msg)
	return nil
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.layout()
		return nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		return m.paste(msg)
	case tea.BackgroundColorMsg:
		t := m.opt.Theme
		t.Light = !msg.IsDark()
		return m.retheme(t)
	case tea.ColorProfileMsg:
		t := m.opt.Theme
		t.Profile = msg.Profile
		return m.retheme(t)
	case tea.MouseMsg:
		return m.mouse(msg)
	case listPageMsg, listDoneMsg, pollMsg, tickMsg:
		return m.updateListing(msg)
	case witnessMsg:
		m.witnessing, m.witness = false, msg.rep
		m.recheck(true)
		return nil
	case hydratedMsg:
		return m.hydrated(msg)
	case debounceMsg:
		if msg.seq == m.filter.seq {
			m.applyFilter(false)
		}
		return tea.Batch(m.hydrate(), m.judgeEvents())
	case eventsJudgedMsg:
		return m.eventsJudged(msg)
	}
	if cmd, ok := m.request(msg); ok {
		return cmd
	}
	return m.deliver(msg)
}

// deliver hands a reply to the component it belongs to: every component on the stack and the pane views take
// the replies of their own commands and ignore the rest.
func (m *Model) deliver(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for i, c := range m.stack {
		next, cmd := c.Update(msg)
		if next != c {
			m.stack[i] = next
			m.size(next)
		}
		cmds = append(cmds, cmd)
	}
	for _, t := range m.tables {
		_, cmd := t.Update(msg)
		cmds = append(cmds, cmd)
	}
	_, cmd := m.overview.Update(msg)
	return tea.Batch(append(cmds, cmd)...)
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	for _, c := range m.stack {
		if r, ok := c.(*runView); ok {
			r.cancelRun()
		}
	}
	m.stop()
	return tea.Quit
}

// running is the action under way, if any.
func (m *Model) running() *runView {
	for _, c := range m.stack {
		if r, ok := c.(*runView); ok && r.phase == phaseRunning {
			return r
		}
	}
	return nil
}
