package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// Messages of the listing. Each carries the sequence number of the listing it belongs to.
type (
	listPageMsg struct {
		seq   int
		items []rules.Item
		now   time.Time
	}
	listDoneMsg struct {
		seq int
		err error
	}
	pollMsg     struct{ seq int }
	witnessMsg  struct{ rep rules.WitnessReport }
	tickMsg     struct{}
	hydratedMsg struct{ results []rules.Hydrated }
)

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

// flushEvery is how often rows that arrived during a listing are sorted into the tables: often enough to see the
// container fill in, seldom enough that a million rows never hold a key back.
const flushEvery = 250 * time.Millisecond

// refresh starts a listing, page by page, into the current snapshot: rows appear from the first page on, and
// the listing's end removes what is gone.
func (m *Model) refresh() tea.Cmd {
	if m.list.running {
		return nil
	}
	m.list.running, m.list.seen = true, 0
	m.list.seq++
	seq, l, ctx := m.list.seq, m.opt.Session.Loader(), m.ctx
	ch := make(chan tea.Msg, 4)
	m.list.ch = ch
	m.snap.Begin()
	go func() {
		err := l.Stream(ctx, func(items []rules.Item, now time.Time) error {
			select {
			case ch <- listPageMsg{seq: seq, items: items, now: now}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		select {
		case ch <- listDoneMsg{seq: seq, err: err}:
		case <-ctx.Done():
		}
	}()
	return tea.Batch(waitFor(ch), m.readWitness())
}

// readWitness reads Event Grid's witness in a command of its own, once per refresh: the listing never waits on
// it, and a reading still under way is not doubled.
func (m *Model) readWitness() tea.Cmd {
	s := m.opt.Session
	if s.Witness() == nil || m.witnessing {
		return nil
	}
	m.witnessing = true
	ctx, now := m.ctx, m.now()
	return func() tea.Msg { return witnessMsg{rep: s.ReadWitness(ctx, now)} }
}

func waitFor(ch chan tea.Msg) tea.Cmd { return func() tea.Msg { return <-ch } }

func (m *Model) poll(d time.Duration) tea.Cmd { return m.opt.After(d, pollMsg{seq: m.list.seq}) }

// tick redraws the retry countdown every second while a refresh is failing.
// There is at most one: a listing that fails again while the countdown runs does not start a second.
func (m *Model) tick() tea.Cmd {
	if m.list.ticking {
		return nil
	}
	m.list.ticking = true
	return m.opt.After(time.Second, tickMsg{})
}

func (m *Model) updateListing(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case listPageMsg:
		if msg.seq != m.list.seq {
			return nil
		}
		m.takePage(msg)
		return tea.Batch(waitFor(m.list.ch), m.hydrate())
	case listDoneMsg:
		if msg.seq != m.list.seq {
			return nil
		}
		m.list.running = false
		if msg.err != nil {
			m.list.err, m.list.errAt = msg.err, m.now()
			m.list.retryAt = m.now().Add(m.opt.Interval)
			m.flush(true)
			return tea.Batch(m.poll(m.opt.Interval), m.tick())
		}
		m.list.err, m.list.loaded, m.list.goodAt = nil, true, m.snap.Now
		for _, t := range m.tables {
			t.Update(sweepMsg{hold: true}) // before the sweep moves the positions the tables hold
		}
		removed := m.snap.Sweep()
		m.rebuild(removed)
		for _, t := range m.tables {
			t.Update(sweepMsg{hold: false})
		}
		m.recheck(true)
		return tea.Batch(m.poll(m.opt.Interval), m.hydrate(), m.follow(), m.judgeEvents())
	case pollMsg:
		switch {
		case msg.seq != m.list.seq:
			return nil // a newer listing has its own poll
		case m.running() != nil:
			return m.poll(m.opt.Interval) // no listing under a running action; try again later
		}
		return m.refresh()
	case tickMsg:
		m.list.ticking = false
		if m.list.err != nil {
			return m.tick() // the retry countdown
		}
	}
	return nil
}

// follow tells every open screen — the stack, and the last results even while closed — that the container was
// listed again, so none shows what it copied when it opened.
func (m *Model) follow() tea.Cmd {
	var cmds []tea.Cmd
	seen := map[component]bool{}
	for i, c := range append(append([]component{}, m.stack...), m.resultsComponent()...) {
		if seen[c] {
			continue
		}
		seen[c] = true
		next, cmd := c.Update(followMsg{})
		if i < len(m.stack) && next != c {
			m.stack[i] = next
			m.size(next)
		}
		cmds = append(cmds, cmd)
	}
	return tea.Batch(cmds...)
}

// resultsComponent is the last results, when there are any.
func (m *Model) resultsComponent() []component {
	if m.results == nil {
		return nil
	}
	return []component{m.results}
}

// takePage merges one page into the snapshot. New blobs wait in their table's pending list until the next flush;
// a blob that moved pane (it aged past the TTL, a drain dated it) makes the tables rebuild when the listing ends.
func (m *Model) takePage(msg listPageMsg) {
	m.list.seen += len(msg.items)
	moved := false
	for i := range msg.items {
		if j, ok := m.snap.Lookup(msg.items[i].Name); ok && m.snap.Items[j].Pane != msg.items[i].Pane {
			moved = true
		}
	}
	if msg.now.After(m.snap.Now) {
		m.list.nowAt = m.now() // the local time the service's clock was read at: Snapshot.Since counts from it
	}
	for _, i := range m.snap.Merge(msg.items, msg.now) {
		it := m.snap.Items[i]
		m.counts[it.Pane]++
		if it.Unread() {
			m.unread++
		}
		m.tableOf(it.Pane).arrive(i)
	}
	if moved {
		m.rebuild(true)
		return
	}
	m.flush(m.empty())
	m.recheck(false)
}

// empty reports whether no table shows anything yet: the first page is shown at once, not after a flush period.
func (m *Model) empty() bool {
	for _, t := range m.tables {
		if len(t.order) > 0 {
			return false
		}
	}
	return true
}

// flush sorts pending rows into the tables, now or when the flush period is up.
func (m *Model) flush(now bool) {
	if !now && m.now().Sub(m.list.lastFlush) < flushEvery {
		return
	}
	m.list.lastFlush = m.now()
	match := m.rowFilter()
	for _, t := range m.tables {
		t.takePending(match)
	}
}

// rebuild recomputes counts and every table from the snapshot (after blobs left it or changed pane).
func (m *Model) rebuild(all bool) {
	if !all {
		m.flush(true)
		return
	}
	m.counts = map[rules.Pane]int{}
	m.unread = 0
	byPane := map[rules.Pane][]int{}
	for i := range m.snap.Items {
		it := m.snap.Items[i]
		m.counts[it.Pane]++
		if it.Unread() {
			m.unread++
		}
		byPane[it.Pane] = append(byPane[it.Pane], i)
	}
	m.filter.matcher.reset(m.snap) // positions changed: no search key is kept for a position another blob took
	match := m.rowFilter()
	for _, t := range m.tables {
		t.reset(byPane[t.pane], match)
	}
	m.list.lastFlush = m.now()
}

func (m *Model) tableOf(p rules.Pane) *table {
	for _, t := range m.tables {
		if t.pane == p {
			return t
		}
	}
	return m.tables[0]
}

// recheck recomputes the findings behind the badges and the overview's picture, at most as often as it is cheap
// to: over a million blobs they cost milliseconds, so it waits ten times what the last one cost.
func (m *Model) recheck(force bool) {
	now := m.now()
	if !force && now.Sub(m.reportAt) < max(250*time.Millisecond, 10*m.reportCost) {
		return
	}
	start := time.Now()
	o := m.opt.Check
	o.Names = false
	m.report = m.cfg.Check(m.snap, o)
	m.report.AddWitness(m.witness)
	m.ready = m.cfg.Readiness(m.snap.Items, m.snap.Now)
	m.overview.setPicture(m.cfg.Picture(m.snap, rules.PictureOptions{}), m.ready)
	m.reportCost, m.reportAt = time.Since(start), now
}

// hydrate reads the next batch of unread payloads: the rows on screen first, then every blob in turn.
func (m *Model) hydrate() tea.Cmd {
	if m.hydrating || m.unread == 0 {
		return nil
	}
	var batch []store.BlobInfo
	seen := map[int]bool{}
	add := func(i int) {
		it := m.snap.Items[i]
		if it.Unread() && !seen[i] && len(batch) < hydrateBatch {
			seen[i] = true
			batch = append(batch, it.Info)
		}
	}
	if t := m.table(); t != nil {
		for _, i := range t.visible() {
			add(i)
		}
	}
	n := len(m.snap.Items)
	for k := 0; k < n && len(batch) < hydrateBatch; k++ {
		add((m.scanPos + k) % n)
		if len(batch) == hydrateBatch {
			m.scanPos = (m.scanPos + k + 1) % n
		}
	}
	if len(batch) == 0 {
		m.unread = 0
		return nil
	}
	m.hydrating = true
	l, ctx := m.opt.Session.Loader(), m.ctx
	return func() tea.Msg { return hydratedMsg{results: l.Hydrate(ctx, batch)} }
}

func (m *Model) hydrated(msg hydratedMsg) tea.Cmd {
	m.hydrating = false
	for _, h := range msg.results {
		i, ok := m.snap.Lookup(h.Name)
		if !ok || m.snap.Items[i].ETag != h.ETag {
			continue
		}
		it := m.snap.Items[i]
		if it.Unread() && (h.Summary != nil || h.ReadErr != "") {
			m.unread--
		}
		it.Summary, it.ReadErr, it.ReadFailed = h.Summary, h.ReadErr, h.Failed
	}
	m.recheck(m.unread == 0)
	return tea.Batch(m.hydrate(), m.judgeEvents())
}
