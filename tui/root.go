package tui

import (
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

// request takes what components ask of the root; ok is false for messages that are not requests.
func (m *Model) request(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case statusMsg:
		m.status = msg.text
		if msg.warn {
			m.status = m.paint(&m.st.Warn, msg.text)
		}
	case closeMsg:
		m.pop()
		m.layout()
		return m.hydrate(), true
	case openBlobMsg:
		d := newDetail(msg.name, m.env(), m.readinessOf)
		m.push(d)
		return d.load(), true
	case askMsg:
		return m.ask(msg), true
	case runMsg:
		m.runs++
		r := newRunView(m.env(), msg.run, m.runs)
		m.replaceTop(r)
		return r.start(), true
	case actionDoneMsg:
		return m.finished(msg), true
	case viewMsg:
		for len(m.stack) > 0 { // from a blob's view: back to the panes, then the one asked for
			m.pop()
		}
		m.setView(int(msg))
		m.layout()
		return m.hydrate(), true
	case filterToMsg, editFilterMsg, filterTypedMsg, filterDoneMsg, clearFilterMsg, openViewMsg:
		return m.filterRequest(msg), true
	case copyMsg, copyBlobMsg, copiedBlobMsg, copiedMsg:
		return m.clipRequest(msg), true
	case pageBlobMsg, pagerReadyMsg, pagerDoneMsg, saveBlobMsg, editBlobMsg, editReadyMsg, editDoneMsg, repairPlannedMsg, repairDoneMsg:
		return m.repairRequest(msg), true
	case helpMsg:
		m.push(newHelp(m.env(), m.top().Scope(), m.rootScopeFor(m.top())))
	case refreshMsg:
		return m.refresh(), true
	case quitMsg:
		return m.askQuit(), true
	case forceQuitMsg:
		return m.quit(), true
	case pushMsg:
		m.push(msg.c)
	default:
		return nil, false
	}
	return nil, true
}

// clipRequest takes what y and Y ask of the clipboard, and what it answers.
func (m *Model) clipRequest(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case copyMsg:
		return m.copyText(msg.what, msg.text)
	case copyBlobMsg:
		return m.copyBlob(msg.name)
	case copiedBlobMsg:
		return m.clip(msg.text, msg.said)
	case copiedMsg:
		m.status = msg.text
	}
	return nil
}

// filterRequest takes what the filter bar, the tables and the overview ask of the filter.
func (m *Model) filterRequest(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case filterToMsg:
		return m.filterTo(msg.query)
	case editFilterMsg:
		m.filter.bar.edit(m.filter.text)
		m.push(m.filter.bar)
		return nil
	case filterTypedMsg:
		m.filter.seq++
		m.filter.typed = msg.text
		return m.opt.After(80*time.Millisecond, debounceMsg{seq: m.filter.seq})
	case filterDoneMsg:
		m.pop()
		m.filter.typed = msg.text
	case clearFilterMsg:
		m.filter.typed = ""
		m.status = "filter cleared"
	case openViewMsg:
		m.pop()
		v := msg.view
		m.filter.typed = v.Filter
		m.status = "view " + textfmt.Printable(v.Name)
		if v.Sort != "" {
			col, desc := sortOf(v.Sort)
			for _, t := range m.tables {
				t.Update(sortSetMsg{col: col, desc: desc})
			}
			m.status += " (sorted by " + col + ")"
		}
	}
	m.applyFilter(true)
	return tea.Batch(m.hydrate(), m.judgeEvents())
}

// readinessOf is the readiness of a subscription, as of the last check.
func (m *Model) readinessOf(sub string) *rules.Readiness {
	for i := range m.ready {
		if m.ready[i].Subscription == sub {
			r := m.ready[i]
			return &r
		}
	}
	return nil
}

// rootScope is the root's own keys: help, refresh, the record's history, quit.
func (m *Model) rootScope() *scope {
	s := &scope{name: "everywhere", bindings: []binding{
		bind([]string{"?"}, "?", "help", func() tea.Cmd { return m.send(helpMsg{}) }).footer(),
		bind([]string{"q", "ctrl+c"}, "q", "quit", m.askQuit).footer(),
		bind([]string{"R", "ctrl+r"}, "R", "refresh now", m.refresh).
			when(func() string {
				if m.list.running {
					return "a listing is already under way"
				}
				return ""
			}),
		bind([]string{"L"}, "L", "the record: every action on this estate, by whom, and what became of each blob (enter opens it)", func() tea.Cmd {
			h := newHistoryView(m.env())
			m.push(h)
			return h.load()
		}),
	}}
	s.bindings = append(s.bindings, bind([]string{"v"}, "v", "saved views: open one — its filter, and its sort (deadletter view add saves them)", func() tea.Cmd {
		m.push(newViewsDialog(m.env(), m.opt.Views))
		return nil
	}).when(func() string {
		if len(m.opt.Views) == 0 {
			return "no saved views (deadletter view add NAME --filter QUERY saves one)"
		}
		return ""
	}))
	// : is always a key: without contexts to switch between it says why it does nothing.
	s.bindings = append(s.bindings, bind([]string{":"}, ":", "contexts: every context of the config file, one row each (enter opens one)", func() tea.Cmd {
		m.opt.Switch()
		return m.quit()
	}).footer().when(func() string {
		if m.opt.Switch == nil {
			return "no config file with contexts here (deadletter context --help says how to name your containers)"
		}
		return ""
	}))
	if m.opt.Pause != nil {
		desc := "pause the rehearsal's clock, or run it again"
		if m.opt.Paused != nil && m.opt.Paused() {
			desc = "run the rehearsal's clock again: it stands still now" // (the key line says what p does now)
		}
		s.bindings = append(s.bindings, bind([]string{"p"}, "p", desc, func() tea.Cmd {
			m.status = m.opt.Pause()
			return m.refresh()
		}).footer())
	}
	if m.opt.Rehearsal != nil {
		s.bindings = append(s.bindings, bind([]string{"t"}, "t", "rehearsal: its script, its account, its clock (pause, speed, jump ahead)", func() tea.Cmd {
			ts := newTwinScreen(m.env(), m.opt.Rehearsal)
			m.push(ts)
			return ts.start()
		}).footer())
	}
	// A twin's directory opened without running it (deadletter --dir D): its clock stands still here, and t and p
	// say why they do nothing instead of doing nothing silently.
	if why := m.opt.StillTwin; why != "" && m.opt.Rehearsal == nil && m.opt.Pause == nil {
		nothing := func() tea.Cmd { return nil }
		s.bindings = append(s.bindings,
			bind([]string{"t"}, "t", "rehearsal: its screen runs in the demo only", nothing).footer().when(func() string { return why }),
			bind([]string{"p"}, "p", "pause the rehearsal's clock: in the demo only", nothing).when(func() string { return why }))
	}
	return s
}

// viewScope is how the pane views are reached from either of them: tab, the numbers, o.
func (m *Model) viewScope() *scope {
	show := func(i int) func() tea.Cmd { return func() tea.Cmd { return m.send(viewMsg(i)) } }
	n := len(m.tables) + 1
	return &scope{name: "views", bindings: []binding{
		bind([]string{"tab"}, "tab", "next view", func() tea.Cmd { return show((m.view + 1) % n)() }).footer(),
		bind([]string{"shift+tab"}, "shift+tab", "previous view", func() tea.Cmd { return show((m.view + n - 1) % n)() }),
		bind([]string{"o"}, "o", "overview", show(0)),
		bind([]string{"1"}, "1", "stranded", show(1)),
		bind([]string{"2"}, "2", "quarantine", show(2)),
		bind([]string{"3"}, "3", "live", show(3)),
		bind([]string{"4"}, "4", "archived", show(4)),
	}}
}

// rootScopeFor is the keys of the root that reach a component: none through a modal one; the views from a pane
// view; help, refresh, L and quit from everything else.
func (m *Model) rootScopeFor(c component) *scope {
	s := &scope{name: "everywhere"}
	if c.Scope().modal {
		return s
	}
	switch c.(type) {
	case *detail, *eventView: // a blob's view: the numbers and o reach the panes (tab is the view's own)
		for _, b := range m.viewScope().bindings {
			if h := b.Help().Key; h != "tab" && h != "shift+tab" {
				s.bindings = append(s.bindings, b)
			}
		}
	default:
		if c == component(m.overview) || m.view > 0 && c == component(m.table()) {
			s.bindings = append(s.bindings, m.viewScope().bindings...)
		}
	}
	s.bindings = append(s.bindings, m.rootScope().bindings...)
	return s
}

// askQuit quits — after asking, while an action runs.
func (m *Model) askQuit() tea.Cmd {
	if r := m.running(); r != nil {
		m.push(newQuitAsk(m.env()))
		return nil
	}
	return m.quit()
}

// paste hands pasted text (bracketed paste: one message, never read as keys) to the text field that has the
// focus; with none, nothing is typed and the status line says where a paste goes.
func (m *Model) paste(msg tea.PasteMsg) tea.Cmd {
	top := m.top()
	if !top.Scope().typing {
		m.status = "a paste goes into a text field: / opens the filter"
		return nil
	}
	next, cmd := top.Update(msg)
	if next != top {
		m.stack[len(m.stack)-1] = next
		m.size(next)
	}
	return cmd
}

// key routes one key press: the focused component's binding, else the root's keys that reach it, else — in a text
// field — the component types it.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	if m.w < minW || m.h < minH {
		if k.String() == "q" || k.String() == "ctrl+c" {
			return m.quit()
		}
		m.ignored = k.String() // nothing acts unseen: the screen says the key was dropped
		return nil
	}
	top := m.top()
	sc := top.Scope()
	// Fast typing and terminal multiplexers deliver several runes in one message ("/WEBHOOKS"): outside a text
	// field each is a key of its own; once a field takes focus, the rest is its text.
	if runes := []rune(k.Text); len(runes) > 1 && !sc.typing {
		var cmds []tea.Cmd
		for i, r := range runes {
			if m.top().Scope().typing {
				cmds = append(cmds, m.key(tea.KeyPressMsg{Code: runes[i], Text: string(runes[i:])}))
				break
			}
			cmds = append(cmds, m.key(tea.KeyPressMsg{Code: r, Text: string(r), Mod: k.Mod}), m.takeMail())
		}
		return tea.Batch(cmds...)
	}
	m.status = "" // the status line answers one key; the next clears it
	if b, ok := sc.find(k); ok {
		return m.run(b)
	}
	if b, ok := m.rootScopeFor(top).find(k); ok {
		return m.run(b)
	}
	if sc.typing {
		next, cmd := top.Update(k)
		if next != top {
			m.stack[len(m.stack)-1] = next
			m.size(next)
		}
		return cmd
	}
	return nil
}

// run acts on a binding, or says why it is off.
func (m *Model) run(b binding) tea.Cmd {
	if why := b.reason(); why != "" {
		m.status = m.paint(&m.st.Warn, why)
		return nil
	}
	return b.do()
}

// mouse: the wheel scrolls what is under the pointer and a click on a row puts the cursor there — in the pane
// table and in the detail's events. A dialog or help on top takes the wheel.
func (m *Model) mouse(msg tea.MouseMsg) tea.Cmd {
	if m.w < minW || m.h < minH {
		return nil
	}
	type mouser interface {
		mouse(msg tea.MouseMsg, y int) tea.Cmd
	}
	top := m.top()
	y := msg.Mouse().Y - headerLines // the body's own lines
	if _, ok := top.(overlay); !ok && len(m.stack) == 0 {
		if y == 0 && clicked(msg) {
			if v := m.tabsBar.at(msg.Mouse().X); v >= 0 { // a click on a tab opens it
				return m.send(viewMsg(v))
			}
		}
		y-- // the pane view's tabs
	}
	if mc, ok := top.(mouser); ok {
		return mc.mouse(msg, y)
	}
	return nil
}

// setView shows the overview (0) or a pane's table.
func (m *Model) setView(i int) {
	if i >= 0 && i <= len(m.tables) {
		m.view = i
	}
}

// finished takes an action's end: selections are spent, the container is listed again and the detail read again,
// so every screen shows what the action did — or, when the operator asked to quit while it ran, it quits.
func (m *Model) finished(msg actionDoneMsg) tea.Cmd {
	r, ok := m.top().(*runView)
	if !ok || r.id != msg.id {
		for _, c := range m.stack {
			if rv, ok := c.(*runView); ok && rv.id == msg.id {
				r = rv
			}
		}
	}
	if r == nil {
		return nil
	}
	m.status = r.finish(msg)
	m.results = r
	for _, t := range m.tables {
		t.unselectAll()
	}
	if _, asked := m.top().(*quitAsk); asked {
		return m.quit() // nothing is left to abandon
	}
	cmds := []tea.Cmd{m.refresh()}
	if d := m.detail(); d != nil {
		cmds = append(cmds, d.load())
	}
	return tea.Batch(cmds...)
}

// ask opens the dialog of an action on items: what the operator sees, said back before anything is written.
func (m *Model) ask(msg askMsg) tea.Cmd {
	if len(msg.items) == 0 {
		m.status = "nothing here to " + actionVerbs[msg.act]
		return nil
	}
	e := m.env()
	switch msg.act {
	case actDrain:
		d, why := newDrainDialog(e, msg.items, msg.limit)
		if d == nil {
			m.status = why
			return nil
		}
		m.push(d)
	case actRestore:
		d := newRestoreDialog(e, msg.items, msg.limit)
		m.push(d)
		return d.read()
	case actAck:
		d, why := newAckDialog(e, msg.items, msg.limit)
		if d == nil {
			m.status = why
			return nil
		}
		m.push(d)
	}
	return nil
}

// filterTo applies a query and shows the first pane it leaves rows in (the overview's enter).
func (m *Model) filterTo(q string) tea.Cmd {
	m.filter.typed = q
	m.applyFilter(true)
	for i, t := range m.tables {
		if len(t.rows) > 0 {
			m.setView(i + 1)
			return tea.Batch(m.hydrate(), m.judgeEvents())
		}
	}
	m.setView(1)
	m.status = fmt.Sprintf("no blob matches %s", textfmt.Printable(q))
	return m.hydrate()
}
