package tui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
)

// The scopes: every focus's keys, as data. Each binding says what it does and why it is off where it does not
// apply; the footer and help are generated from them.

func quitKey() binding {
	return bind([]string{"q", "ctrl+c"}, "q", "quit", func(m *Model) tea.Cmd {
		if m.running() {
			m.quitAsk = true // an action is under way: ask first
			return nil
		}
		return m.quit()
	}).footer()
}

var globalScope = &scope{name: "everywhere", bindings: []binding{
	quitKey(),
	bind([]string{"?"}, "?", "help", func(m *Model) tea.Cmd { m.openHelp(); return nil }).footer(),
	bind([]string{"R", "ctrl+r"}, "R", "refresh now", func(m *Model) tea.Cmd { return m.refresh() }).
		when(func(m *Model) string {
			if m.list.running {
				return "a listing is already under way"
			}
			return ""
		}),
	bind([]string{"L"}, "L", "last results again", func(m *Model) tea.Cmd { m.dialog = m.results; m.layout(); return nil }).
		when(func(m *Model) string {
			if m.results == nil {
				return "no action has finished yet"
			}
			return ""
		}),
}}

func readOnlyOff(m *Model) string {
	if m.opt.ReadOnly {
		return "read-only mode (--read-only): drain, restore and ack are off"
	}
	return ""
}

func drainOff(pane func(m *Model) (replay.Pane, bool)) func(m *Model) string {
	return func(m *Model) string {
		if why := readOnlyOff(m); why != "" {
			return why
		}
		if p, root := pane(m); p != replay.PaneStranded || !root {
			return "drain applies to stranded blobs (press 1 for the stranded pane)"
		}
		return ""
	}
}

func restoreOff(pane func(m *Model) (replay.Pane, bool)) func(m *Model) string {
	return func(m *Model) string {
		if why := readOnlyOff(m); why != "" {
			return why
		}
		if p, _ := pane(m); p != replay.PaneQuarantine {
			return "restore applies to quarantined blobs (press 2 for the quarantine pane)"
		}
		return ""
	}
}

func ackOff(m *Model) string {
	if why := readOnlyOff(m); why != "" {
		return why
	}
	if _, ok := m.opt.Loader.Container.(store.Tagger); !ok {
		return "this container cannot keep acknowledgements"
	}
	return ""
}

func tablePane(m *Model) (replay.Pane, bool) {
	if t := m.table(); t != nil {
		return t.pane, true
	}
	return 0, false
}

func detailPane(m *Model) (replay.Pane, bool) {
	if m.detail == nil || m.detail.d == nil {
		return 0, false
	}
	return m.detail.d.Pane, replay.IsRoot(m.detail.name)
}

func onTable(do func(m *Model, t *table) tea.Cmd) func(m *Model) tea.Cmd {
	return func(m *Model) tea.Cmd {
		if t := m.table(); t != nil {
			return do(m, t)
		}
		return nil
	}
}

func moveBy(n func(t *table) int) func(m *Model) tea.Cmd {
	return onTable(func(m *Model, t *table) tea.Cmd { t.move(n(t)); return m.hydrate() })
}

func showView(i int) func(m *Model) tea.Cmd {
	return func(m *Model) tea.Cmd { m.setView(i); return m.hydrate() }
}

var tableScope = &scope{name: "table", bindings: []binding{
	bind([]string{"up", "k"}, "↑/k", "up", moveBy(func(*table) int { return -1 })),
	bind([]string{"down", "j"}, "↓/j", "down", moveBy(func(*table) int { return 1 })),
	bind([]string{"pgup", "ctrl+u"}, "pgup", "page up", moveBy(func(t *table) int { return -t.height })),
	bind([]string{"pgdown", "ctrl+d"}, "pgdn", "page down", moveBy(func(t *table) int { return t.height })),
	bind([]string{"home", "g"}, "g", "top", moveBy(func(t *table) int { return -len(t.rows) })),
	bind([]string{"end", "G"}, "G", "bottom", moveBy(func(t *table) int { return len(t.rows) })),
	bind([]string{"tab", "right", "l"}, "tab", "next view", func(m *Model) tea.Cmd { return showView((m.view + 1) % (len(m.tables) + 1))(m) }).footer(),
	bind([]string{"shift+tab", "left", "h"}, "shift+tab", "previous view", func(m *Model) tea.Cmd { return showView((m.view + len(m.tables)) % (len(m.tables) + 1))(m) }),
	bind([]string{"o"}, "o", "overview", showView(0)),
	bind([]string{"1"}, "1", "stranded", showView(1)),
	bind([]string{"2"}, "2", "quarantine", showView(2)),
	bind([]string{"3"}, "3", "live", showView(3)),
	bind([]string{"4"}, "4", "archived", showView(4)),
	bind([]string{"enter"}, "enter", "open blob", onTable(func(m *Model, t *table) tea.Cmd {
		if it, ok := t.current(); ok {
			return m.openDetail(it.Name)
		}
		return nil
	})).footer().when(func(m *Model) string {
		if t := m.table(); t == nil || len(t.rows) == 0 {
			return "no blob here to open"
		}
		return ""
	}),
	bind([]string{" "}, "space", "select", onTable(func(m *Model, t *table) tea.Cmd { t.toggle(); t.move(1); return nil })).footer(),
	bind([]string{"ctrl+a"}, "ctrl+a", "select all shown", onTable(func(m *Model, t *table) tea.Cmd { t.selectAll(); return nil })),
	bind([]string{"esc"}, "esc", "clear selection", onTable(func(m *Model, t *table) tea.Cmd { t.selected = map[string]bool{}; return nil })).
		when(func(m *Model) string {
			if t := m.table(); t == nil || len(t.selected) == 0 {
				return "nothing is selected"
			}
			return ""
		}),
	bind([]string{"/"}, "/", "filter", func(m *Model) tea.Cmd {
		m.filter.input.SetValue(m.filter.text)
		m.filter.input.CursorEnd()
		return m.filter.input.Focus()
	}).footer(),
	bind([]string{"s"}, "s", "sort by next column", onTable(func(m *Model, t *table) tea.Cmd {
		cols := t.sortables()
		i := 0
		for j, c := range cols {
			if c == t.sortBy {
				i = (j + 1) % len(cols)
			}
		}
		t.sortBy = cols[i]
		t.resort(m.rowFilter())
		return nil
	})).footer(),
	bind([]string{"S"}, "S", "reverse sort", onTable(func(m *Model, t *table) tea.Cmd { t.desc = !t.desc; t.resort(m.rowFilter()); return nil })),
	bind([]string{"d"}, "d", "drain selection / shown", onTable(func(m *Model, t *table) tea.Cmd {
		items := t.shown()
		return m.confirmDrain(items, m.limitNote(t, len(items)))
	})).footer().when(drainOff(tablePane)),
	bind([]string{"r"}, "r", "restore selection / shown", onTable(func(m *Model, t *table) tea.Cmd {
		items := t.shown()
		names := make([]string, len(items))
		for i := range items {
			names[i] = items[i].Name
		}
		return m.confirmRestore(names, m.limitNote(t, len(items)))
	})).footer().when(restoreOff(tablePane)),
	bind([]string{"a"}, "a", "ack selection / cursor", onTable(func(m *Model, t *table) tea.Cmd {
		var items []replay.Item
		for _, it := range t.shown() {
			if t.selected[it.Name] {
				items = append(items, it)
			}
		}
		if it, ok := t.current(); ok && len(items) == 0 {
			items = []replay.Item{*it}
		}
		return m.confirmAck(items, "")
	})).footer().when(ackOff),
	bind([]string{"y"}, "y", "copy name", onTable(func(m *Model, t *table) tea.Cmd {
		if it, ok := t.current(); ok {
			return m.copyText("name", it.Name)
		}
		return nil
	})),
	bind([]string{"Y"}, "Y", "copy raw JSON", onTable(func(m *Model, t *table) tea.Cmd {
		if it, ok := t.current(); ok {
			return m.copyBlob(it.Name)
		}
		return nil
	})),
}}

func onDetail(do func(m *Model, v *detail) tea.Cmd) func(m *Model) tea.Cmd {
	return func(m *Model) tea.Cmd {
		if m.detail != nil {
			return do(m, m.detail)
		}
		return nil
	}
}

func scrollDetail(n func(v *detail) int) func(m *Model) tea.Cmd {
	return onDetail(func(m *Model, v *detail) tea.Cmd { v.scroll(n(v)); return nil })
}

var detailScope = &scope{name: "blob", bindings: []binding{
	bind([]string{"esc"}, "esc", "back", func(m *Model) tea.Cmd { m.detail = nil; m.layout(); return m.hydrate() }).footer(),
	bind([]string{"up", "k"}, "↑/k", "scroll up", scrollDetail(func(*detail) int { return -1 })),
	bind([]string{"down", "j"}, "↓/j", "scroll down", scrollDetail(func(*detail) int { return 1 })),
	bind([]string{"pgup", "ctrl+u"}, "pgup", "page up", scrollDetail(func(v *detail) int { return -v.h })),
	bind([]string{"pgdown", "ctrl+d", " "}, "pgdn", "page down", scrollDetail(func(v *detail) int { return v.h })),
	bind([]string{"home", "g"}, "g", "top", scrollDetail(func(v *detail) int { return -len(v.lines) })),
	bind([]string{"end", "G"}, "G", "bottom", scrollDetail(func(v *detail) int { return len(v.lines) })),
	bind([]string{"/"}, "/", "search", onDetail(func(m *Model, v *detail) tea.Cmd { v.search.SetValue(v.query); return v.search.Focus() })).footer(),
	bind([]string{"n"}, "n", "next match", onDetail(func(m *Model, v *detail) tea.Cmd { v.next(1); return nil })).when(noMatches),
	bind([]string{"N"}, "N", "previous match", onDetail(func(m *Model, v *detail) tea.Cmd { v.next(-1); return nil })).when(noMatches),
	bind([]string{"d"}, "d", "drain this blob", onDetail(func(m *Model, v *detail) tea.Cmd {
		return m.confirmDrain([]replay.Item{v.d.Item}, "")
	})).footer().when(drainOff(detailPane)),
	bind([]string{"r"}, "r", "restore this blob", onDetail(func(m *Model, v *detail) tea.Cmd {
		return m.confirmRestore([]string{v.name}, "")
	})).footer().when(restoreOff(detailPane)),
	bind([]string{"a"}, "a", "ack this blob", onDetail(func(m *Model, v *detail) tea.Cmd {
		return m.confirmAck([]replay.Item{v.d.Item}, "")
	})).footer().when(func(m *Model) string {
		if m.detail == nil || m.detail.d == nil {
			return "still reading the blob"
		}
		return ackOff(m)
	}),
	bind([]string{"y"}, "y", "copy name", onDetail(func(m *Model, v *detail) tea.Cmd { return m.copyText("name", v.name) })),
	bind([]string{"Y"}, "Y", "copy raw JSON", onDetail(func(m *Model, v *detail) tea.Cmd {
		if v.d == nil {
			return nil
		}
		return m.copyText("raw JSON", string(v.d.Body))
	})),
}}

func noMatches(m *Model) string {
	if m.detail == nil || len(m.detail.matches) == 0 {
		return "no search, or nothing found (press / to search)"
	}
	return ""
}

var filterScope = &scope{name: "filter", modal: true, bindings: []binding{
	bind([]string{"enter"}, "enter", "apply", func(m *Model) tea.Cmd {
		m.filter.input.Blur()
		m.applyFilter()
		return m.hydrate()
	}).footer(),
	bind([]string{"esc"}, "esc", "clear the filter", func(m *Model) tea.Cmd {
		m.filter.input.Blur()
		m.filter.input.SetValue("")
		m.applyFilter()
		return m.hydrate()
	}).footer(),
	bind([]string{"ctrl+c"}, "ctrl+c", "quit", func(m *Model) tea.Cmd { return m.quit() }),
}, other: func(m *Model, k tea.KeyMsg) tea.Cmd { return m.filter.typed(m, k) }}

var searchScope = &scope{name: "search", modal: true, bindings: []binding{
	bind([]string{"enter"}, "enter", "find", onDetail(func(m *Model, v *detail) tea.Cmd {
		v.search.Blur()
		v.query = v.search.Value()
		v.match = 0
		v.find()
		if len(v.matches) > 0 {
			v.offset = v.matches[0]
			v.clamp()
		}
		return nil
	})).footer(),
	bind([]string{"esc"}, "esc", "cancel", onDetail(func(m *Model, v *detail) tea.Cmd { v.search.Blur(); return nil })).footer(),
	bind([]string{"ctrl+c"}, "ctrl+c", "quit", func(m *Model) tea.Cmd { return m.quit() }),
}, other: func(m *Model, k tea.KeyMsg) tea.Cmd {
	var cmd tea.Cmd
	m.detail.search, cmd = m.detail.search.Update(k)
	return cmd
}}

func onDialog(do func(m *Model, d *dialog) tea.Cmd) func(m *Model) tea.Cmd {
	return func(m *Model) tea.Cmd {
		if m.dialog != nil {
			return do(m, m.dialog)
		}
		return nil
	}
}

func dialogScroll(n func(d *dialog) int) []binding {
	return []binding{
		bind([]string{"up", "k"}, "↑/k", "scroll up", onDialog(func(m *Model, d *dialog) tea.Cmd { d.scrollBy(-1); return nil })),
		bind([]string{"down", "j"}, "↓/j", "scroll down", onDialog(func(m *Model, d *dialog) tea.Cmd { d.scrollBy(1); return nil })),
		bind([]string{"pgup"}, "pgup", "page up", onDialog(func(m *Model, d *dialog) tea.Cmd { d.scrollBy(-d.room()); return nil })),
		bind([]string{"pgdown"}, "pgdn", "page down", onDialog(func(m *Model, d *dialog) tea.Cmd { d.scrollBy(d.room()); return nil })),
		bind([]string{"home", "g"}, "g", "top", onDialog(func(m *Model, d *dialog) tea.Cmd { d.scrollBy(-len(d.body)); return nil })),
		bind([]string{"end", "G"}, "G", "bottom", onDialog(func(m *Model, d *dialog) tea.Cmd { d.scrollBy(len(d.body)); return nil })),
	}
}

func closeDialog(m *Model) tea.Cmd { m.dialog = nil; return nil }

var confirmScope = &scope{name: "confirm", modal: true, bindings: append([]binding{
	bind([]string{"y", "enter"}, "y", "confirm", onDialog(func(m *Model, d *dialog) tea.Cmd { return m.start(d) })).footer().
		when(func(m *Model) string {
			switch d := m.dialog; {
			case d == nil || d.act != actRestore:
			case d.plans == nil:
				return "still reading the restore plan"
			case d.plans.Counts().Writes == 0 && d.plans.Counts().Forceable > 0 && !d.force:
				return "nothing would be restored: every blob here is refused (f forces)"
			case d.plans.Counts().Writes == 0:
				return "nothing would be restored: every blob here is refused or unreadable"
			}
			return ""
		}),
	bind([]string{"esc", "n"}, "esc", "cancel", closeDialog).footer(),
	bind([]string{"f"}, "f", "force: restore the refused blobs too, on or off (--force)", onDialog(func(m *Model, d *dialog) tea.Cmd {
		d.force = !d.force
		d.plans.SetForce(d.force)
		d.setLines(d.restoreLines())
		return nil
	})).footer().when(func(m *Model) string {
		switch d := m.dialog; {
		case d == nil || d.act != actRestore || d.plans == nil:
			return "--force applies to a restore"
		case d.plans.Counts().Forceable == 0:
			return "nothing here is refused that --force would restore"
		}
		return ""
	}),
	bind([]string{"q", "ctrl+c"}, "q", "quit", func(m *Model) tea.Cmd { return m.quit() }),
}, dialogScroll(nil)...)}

var ackScope = &scope{name: "acknowledge", modal: true, bindings: []binding{
	bind([]string{"enter"}, "enter", "confirm", onDialog(func(m *Model, d *dialog) tea.Cmd { return m.start(d) })).footer(),
	bind([]string{"esc"}, "esc", "cancel", closeDialog).footer(),
	bind([]string{"left"}, "←", "shorter", onDialog(func(m *Model, d *dialog) tea.Cmd { d.ackFor = max(0, d.ackFor-1); return nil })).footer(),
	bind([]string{"right"}, "→", "longer", onDialog(func(m *Model, d *dialog) tea.Cmd { d.ackFor = min(len(ackDurations)-1, d.ackFor+1); return nil })).footer(),
	bind([]string{"ctrl+c"}, "ctrl+c", "quit", func(m *Model) tea.Cmd { return m.quit() }),
}, other: func(m *Model, k tea.KeyMsg) tea.Cmd {
	var cmd tea.Cmd
	m.dialog.note, cmd = m.dialog.note.Update(k)
	return cmd
}}

var runningScope = &scope{name: "running", modal: true, bindings: []binding{
	bind([]string{"esc"}, "esc", "cancel: nothing after this is touched", onDialog(func(m *Model, d *dialog) tea.Cmd {
		d.cancelled = true
		d.cancel()
		return nil
	})).footer(),
	quitKey(),
}}

var resultsScope = &scope{name: "results", modal: true, bindings: append([]binding{
	bind([]string{"esc", "enter"}, "esc", "close (L shows them again)", closeDialog).footer(),
	quitKey(),
}, dialogScroll(nil)...)}

var helpScope = &scope{name: "help", modal: true, bindings: []binding{
	bind([]string{"esc", "?"}, "esc", "close help", func(m *Model) tea.Cmd { m.help = nil; m.layout(); return nil }).footer(),
	bind([]string{"up", "k"}, "↑/k", "scroll up", func(m *Model) tea.Cmd { m.help.scroll(-1); return nil }),
	bind([]string{"down", "j"}, "↓/j", "scroll down", func(m *Model) tea.Cmd { m.help.scroll(1); return nil }),
	bind([]string{"pgup"}, "pgup", "page up", func(m *Model) tea.Cmd { m.help.scroll(-m.help.h); return nil }),
	bind([]string{"pgdown", " "}, "pgdn", "page down", func(m *Model) tea.Cmd { m.help.scroll(m.help.h); return nil }),
	quitKey(),
}}

var tooSmallScope = &scope{name: "too small", modal: true, bindings: []binding{
	bind([]string{"q", "ctrl+c"}, "q", "quit", func(m *Model) tea.Cmd { return m.quit() }).footer(),
}, other: func(m *Model, k tea.KeyMsg) tea.Cmd { // every other key is swallowed — nothing acts unseen — and says so
	m.ignored = k.String()
	return nil
}}

var quitAskScope = &scope{name: "quit?", modal: true, bindings: []binding{
	bind([]string{"y", "q", "ctrl+c"}, "y", "quit (the action is cancelled; blobs not started are untouched)", func(m *Model) tea.Cmd { return m.quit() }).footer(),
	bind([]string{"esc", "n"}, "esc", "stay", func(m *Model) tea.Cmd { m.quitAsk = false; return nil }).footer(),
}, other: func(*Model, tea.KeyMsg) tea.Cmd { return nil }}

// focusScope is the scope the next key goes to.
func (m *Model) focusScope() *scope {
	switch {
	case m.w < minW || m.h < minH:
		return tooSmallScope
	case m.quitAsk:
		return quitAskScope
	case m.help != nil:
		return helpScope
	case m.dialog != nil:
		switch m.dialog.phase {
		case phaseRunning:
			return runningScope
		case phaseResults:
			return resultsScope
		}
		if m.dialog.act == actAck {
			return ackScope
		}
		return confirmScope
	case m.filter.focused():
		return filterScope
	case m.detail != nil && m.detail.search.Focused():
		return searchScope
	case m.detail != nil:
		return detailScope
	case m.view == 0:
		return overviewScope
	}
	return tableScope
}

// key routes one key press to the focused scope, then (outside modal scopes) to the global keys.
func (m *Model) key(k tea.KeyMsg) tea.Cmd {
	// Fast typing and terminal multiplexers deliver several runes in one message ("/WEBHOOKS"): outside a text
	// field each is a key of its own; once a field takes focus, the rest is its text.
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 && !k.Paste && m.focusScope().other == nil {
		var cmds []tea.Cmd
		for i, r := range k.Runes {
			if m.focusScope().other != nil {
				cmds = append(cmds, m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: k.Runes[i:]}))
				break
			}
			cmds = append(cmds, m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt}))
		}
		return tea.Batch(cmds...)
	}
	m.status = "" // the status line answers one key; the next clears it
	s := m.focusScope()
	if cmd, ok := s.press(m, k); ok {
		return cmd
	}
	if !s.modal {
		if cmd, ok := globalScope.press(m, k); ok {
			return cmd
		}
	}
	if s.other != nil {
		return s.other(m, k)
	}
	return nil
}

// keyHints is the footer's key line for a scope: the keys that apply, most important first, as many as fit —
// with the global help and quit keys always kept at the end.
func (m *Model) keyHints(s *scope, w int) string {
	hint := func(b binding) string {
		if !b.short || b.reason(m) != "" {
			return ""
		}
		h := b.Help()
		desc := h.Desc // the footer says the first word; help says the rest
		if i := strings.IndexAny(desc, " :("); i > 0 {
			desc = desc[:i]
		}
		return m.paint(&m.st.Key, h.Key) + " " + m.paint(&m.st.Dim, desc)
	}
	var tail []string
	used := 0
	if !s.modal {
		for _, b := range globalScope.bindings {
			if p := hint(b); p != "" {
				tail, used = append(tail, p), used+textfmt.Width(p)+2
			}
		}
	}
	var parts []string
	for _, b := range s.bindings {
		p := hint(b)
		if p == "" {
			continue
		}
		if used+textfmt.Width(p)+2 > w {
			break
		}
		parts, used = append(parts, p), used+textfmt.Width(p)+2
	}
	return strings.Join(append(parts, tail...), "  ")
}
