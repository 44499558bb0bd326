// Package tui is deadletter's dashboard: Bubble Tea components over the replay package. Every rule it shows or
// runs comes from replay and every sentence from internal/present; this package only lays them out. Update never
// does I/O: listings, reads and actions run in tea.Cmds and come back as messages tagged with a sequence number,
// so a stale reply is dropped.
//
// The root model owns the snapshot, routes messages, keeps the focus and lays the screen out; the parts —
// header, pane tabs, overview, table, detail, dialogs, help, footer — each draw exactly the size they are given,
// and keys are data per focus (keys.go, bindings.go). The components (table, overview, detail, dialog, help)
// never see the root: each holds its styles and, where it needs them, the rules and a read-only view of the
// snapshot; what only the root knows (the filter, whether a listing runs, the key line) is handed to it.
package tui

import (
	"context"
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/deadletter/deadletter/replay"
)

// Options wire the dashboard to a container.
type Options struct {
	Loader   *replay.Loader
	Check    replay.CheckOptions
	ReadOnly bool
	// Interval is the polling period (and the retry delay after a failed refresh).
	Interval time.Duration
	Renderer *lipgloss.Renderer
	// Clock is the local clock for countdowns and throttles (tests pin it); nil means time.Now.
	Clock func() time.Time
	// Concurrency bounds an action's parallel blobs (replay.DefaultConcurrency when ≤ 0).
	Concurrency int
	// Clipboard receives OSC 52 sequences for y/Y (the terminal; tests capture it). Nil: the renderer's output.
	Clipboard io.Writer
	// By is who acknowledges with a (replay.DefaultAckBy, user@host, when empty).
	By string
	// After delivers msg after d (tea.Tick by default): polling, the retry countdown and the filter's debounce.
	// Tests replace it with a clock they advance, so no test waits on a timer.
	After func(d time.Duration, msg tea.Msg) tea.Cmd
}

// Minimum size the dashboard lays itself out for.
const minW, minH = 80, 24

// hydrateBatch is how many payloads one hydration command reads.
const hydrateBatch = 128

// Model is the root component.
type Model struct {
	opt  Options
	cfg  replay.Config
	st   Styles
	ctx  context.Context
	stop context.CancelFunc

	w, h int

	// The container as last seen, and what the listing in flight has added to it.
	snap   *replay.Snapshot
	counts map[replay.Pane]int
	report replay.Report
	list   listing

	tables   []*table
	overview *overview
	view     int // 0: the overview, 1…: the panes in replay.Panes order

	detail  *detail
	dialog  *dialog
	results *dialog // the last finished action, reopenable
	help    *help
	quitAsk bool

	filter filterBar

	hydrating  bool
	unread     int
	scanPos    int
	reportAt   time.Time
	reportCost time.Duration
	detailSeq  int
	status     string
	ignored    string // the last key the too-small screen swallowed
	quitting   bool
	painted    memo
}

// listing is the state of the container listing: the one in flight, and how the last one ended.
type listing struct {
	seq       int
	running   bool
	ch        chan tea.Msg
	seen      int       // blobs the listing in flight has delivered
	lastFlush time.Time // when pending rows were last merged into the tables
	err       error     // how the last listing failed (nil once one succeeds)
	errAt     time.Time
	retryAt   time.Time
	loaded    bool      // a listing has completed at least once
	goodAt    time.Time // service time of the last complete listing
	nowAt     time.Time // the local time the snapshot's service clock was read at
	ticking   bool      // the one retry-countdown tick is scheduled
}

// New builds the dashboard.
func New(o Options) *Model {
	if o.Interval <= 0 {
		o.Interval = replay.DefaultInterval
	}
	if o.Renderer == nil {
		o.Renderer = lipgloss.DefaultRenderer()
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Concurrency <= 0 {
		o.Concurrency = replay.DefaultConcurrency
	}
	if o.Clipboard == nil {
		o.Clipboard = o.Renderer.Output()
	}
	if o.By == "" {
		o.By = replay.DefaultAckBy() // looked up once here, never from Update
	}
	if o.After == nil {
		o.After = func(d time.Duration, msg tea.Msg) tea.Cmd { return tea.Tick(d, func(time.Time) tea.Msg { return msg }) }
	}
	ctx, stop := context.WithCancel(context.Background())
	m := &Model{opt: o, cfg: o.Loader.Config, st: NewStyles(o.Renderer), ctx: ctx, stop: stop, w: minW, h: minH,
		snap: replay.NewSnapshot(o.Loader.Container.Describe()), counts: map[replay.Pane]int{}, view: 1, painted: memo{}}
	for _, p := range replay.Panes {
		m.tables = append(m.tables, newTable(p, m.snap, m.cfg, &m.st))
	}
	m.overview = newOverview(&m.st, m.opt.Renderer, m.painted)
	m.filter = newFilterBar()
	m.layout()
	return m
}

// Init starts the first listing.
func (m *Model) Init() tea.Cmd { return m.refresh() }

func (m *Model) now() time.Time { return m.opt.Clock() }

// table is the pane table on view (nil on the overview).
func (m *Model) table() *table {
	if m.view == 0 {
		return nil
	}
	return m.tables[m.view-1]
}

func (m *Model) setStatus(s string) { m.status = s }

// Update routes messages: replies to their owner, keys to the focused scope.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.layout()
		return m, nil
	case tea.KeyMsg:
		return m, m.key(msg)
	case tea.MouseMsg:
		return m, m.mouse(msg)
	case listPageMsg, listDoneMsg, pollMsg, tickMsg:
		return m, m.updateListing(msg)
	case hydratedMsg:
		return m, m.hydrated(msg)
	case detailMsg:
		if m.detail != nil && msg.seq == m.detailSeq {
			m.detail.load(msg.d, msg.err)
		}
		return m, nil
	case filterMsg:
		if msg.seq == m.filter.seq {
			m.applyFilter()
		}
		return m, m.hydrate()
	case copiedMsg:
		m.setStatus(msg.text)
		return m, nil
	case actionDoneMsg:
		return m, m.finished(msg)
	}
	if m.dialog != nil {
		return m, m.dialog.Update(msg)
	}
	return m, m.filter.passthrough(msg)
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	if m.dialog != nil && m.dialog.cancel != nil {
		m.dialog.cancel()
	}
	m.stop()
	return tea.Quit
}

// running reports whether an action is under way.
func (m *Model) running() bool { return m.dialog != nil && m.dialog.phase == phaseRunning }
