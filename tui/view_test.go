package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/deadletter/deadletter/replay"
)

func loaded(t *testing.T, w, h int) *Model {
	mem, cfg := fixture(t, 25)
	m := newModel(mem, cfg, false)
	drive(t, m, size(w, h), m.Init()())
	return m
}

func TestGoldenScreens(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		w, h := sz[0], sz[1]
		name := func(s string) string { return fmt.Sprintf("%s-%03dx%03d", s, w, h) }
		m := loaded(t, w, h)
		golden(t, name("stranded"), m.View())
		drive(t, m, keys("2")...)
		golden(t, name("quarantine"), m.View())
		drive(t, m, special(tea.KeyEnter))
		golden(t, name("quarantine-detail"), m.View())
		drive(t, m, special(tea.KeyEsc))
		drive(t, m, keys("1")...)
		drive(t, m, keys("d")...)
		golden(t, name("drain-confirm"), m.View())
		drive(t, m, special(tea.KeyEsc))
		drive(t, m, keys("?")...)
		golden(t, name("help"), m.View())
	}
}

// Every view is exactly its window, at every size, in every state (superfile's validateRender idea).
func TestEveryViewFitsItsWindow(t *testing.T) {
	mem, cfg := fixture(t, 25)
	m := newModel(mem, cfg, false)
	drive(t, m, m.Init()())
	states := []struct {
		name string
		in   []tea.Msg
		out  []tea.Msg
	}{
		{"table", nil, nil},
		{"detail", []tea.Msg{special(tea.KeyEnter)}, []tea.Msg{special(tea.KeyEsc)}},
		{"help", keys("?"), keys("x")},
		{"filter", append(keys("/"), keys("push")...), []tea.Msg{special(tea.KeyEsc)}},
		{"confirm", keys("d"), []tea.Msg{special(tea.KeyEsc)}},
		{"quarantine", keys("2"), keys("1")},
	}
	for _, s := range states {
		drive(t, m, s.in...)
		for _, w := range []int{40, 79, 80, 81, 97, 120, 160, 211} {
			for _, h := range []int{10, 23, 24, 25, 31, 48, 70} {
				drive(t, m, size(w, h))
				checkSize(t, s.name, m.View(), w, h)
			}
		}
		drive(t, m, s.out...)
	}
}

// Everything read from a blob reaches the screen escaped.
func TestHostileTextIsEscaped(t *testing.T) {
	m := loaded(t, 160, 48)
	drive(t, m, keys("/")...)
	drive(t, m, keys("hostile")...)
	drive(t, m, special(tea.KeyEnter))
	if v := m.View(); !strings.Contains(v, `HOSTILE`) {
		t.Fatalf("filtered table:\n%s", v)
	}
	drive(t, m, special(tea.KeyEnter))
	v := m.View()
	for _, want := range []string{`\x1b[2J\x1b]0;pwned\x07.json`, `\x1b[31m`, `subject \x1b[2J\x1b]0;pwned\x07`} {
		if !strings.Contains(v, want) {
			t.Fatalf("detail lacks %q:\n%s", want, v)
		}
	}
	if strings.ContainsAny(v, "\x1b\x07") {
		t.Fatal("a raw escape reached the screen")
	}
}

func TestKeysAndPanes(t *testing.T) {
	mem, cfg := fixture(t, 25)
	m := newModel(mem, cfg, false)
	drive(t, m, size(80, 24), m.Init()())
	if m.tables[m.active].pane != replay.PaneStranded {
		t.Fatal("opens on the stranded pane")
	}
	drive(t, m, special(tea.KeyTab))
	if m.tables[m.active].pane != replay.PaneQuarantine || !m.keys.Restore.Enabled() || m.keys.Drain.Enabled() {
		t.Fatal("tab → quarantine, where restore applies and drain does not")
	}
	drive(t, m, keys("4")...)
	if m.tables[m.active].pane != replay.PaneArchived || m.keys.Restore.Enabled() || m.keys.Drain.Enabled() {
		t.Fatal("archived: no action applies")
	}
	drive(t, m, keys("r")...)
	if m.dialog != nil || !strings.Contains(m.status, "restore applies to the quarantine pane") {
		t.Fatalf("a disabled key says why: %q", m.status)
	}
	drive(t, m, special(tea.KeyShiftTab), special(tea.KeyShiftTab), special(tea.KeyShiftTab))
	tb := m.tables[m.active]
	first, _ := tb.Current(m.snap)
	drive(t, m, keys("jj")...)
	if tb.cursor != 2 {
		t.Fatalf("cursor %d", tb.cursor)
	}
	drive(t, m, keys("G")...)
	if tb.cursor != len(tb.rows)-1 {
		t.Fatal("G goes to the bottom")
	}
	drive(t, m, keys("g ")...)
	if len(tb.selected) != 1 || !tb.selected[first.Name] {
		t.Fatalf("space selects the row: %v", tb.selected)
	}
	drive(t, m, keys("s")...)
	if tb.sort != sortExpiry {
		t.Fatal("s cycles the sort")
	}
	// The filter narrows every pane, debounced.
	total := len(tb.rows)
	drive(t, m, keys("/WEBHOOKS")...)
	drive(t, m, special(tea.KeyEnter))
	if len(tb.rows) == 0 || len(tb.rows) >= total {
		t.Fatalf("filter kept %d of %d", len(tb.rows), total)
	}
	for _, r := range tb.rows {
		if !strings.Contains(m.snap.Items[r].Name, "WEBHOOKS") {
			t.Fatalf("filter let %s through", m.snap.Items[r].Name)
		}
	}
	drive(t, m, keys("/")...)
	drive(t, m, special(tea.KeyEsc))
	if len(tb.rows) != total {
		t.Fatal("esc in the filter clears it")
	}
	// A burst of runes in one message (tmux, fast typing) is a sequence of keys.
	drive(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/WEBHOOKS")}, special(tea.KeyEnter))
	if m.filterText != "WEBHOOKS" {
		t.Fatalf("burst filter = %q", m.filterText)
	}
	drive(t, m, keys("/")...)
	drive(t, m, special(tea.KeyEsc))
	if len(tb.rows) != total {
		t.Fatal("esc in the filter clears it")
	}
}

func TestReadOnlyDisablesActions(t *testing.T) {
	mem, cfg := fixture(t, 5)
	m := newModel(mem, cfg, true)
	drive(t, m, size(80, 24), m.Init()())
	drive(t, m, keys("d")...)
	if m.dialog != nil || !strings.Contains(m.status, "read-only") || m.keys.Drain.Enabled() {
		t.Fatal("read-only: drain disabled")
	}
	drive(t, m, keys("?")...)
	if v := m.View(); !strings.Contains(v, "off · drain selection") || !strings.Contains(v, "off · restore selection") {
		t.Fatal("help explains disabled keys")
	}
}

// A failed refresh keeps the last good data on screen with the error and a retry countdown.
func TestFailedRefreshKeepsData(t *testing.T) {
	mem, cfg := fixture(t, 5)
	m := newModel(mem, cfg, false)
	drive(t, m, size(160, 24), m.Init()())
	before := len(m.snap.Items)
	m.refreshing = true
	m.refreshSeq++
	drive(t, m, refreshMsg{seq: m.refreshSeq, err: errString("list: cannot reach devstoreaccount1: connection refused")})
	v := m.View()
	if len(m.snap.Items) != before || !strings.Contains(v, "refresh failed: list: cannot reach") || !strings.Contains(v, "retrying in 1h0m0s") {
		t.Fatalf("%s", v)
	}
	// A stale reply (older sequence) is dropped.
	drive(t, m, refreshMsg{seq: m.refreshSeq - 1, snap: &replay.Snapshot{}})
	if len(m.snap.Items) != before {
		t.Fatal("a stale refresh replaced the data")
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// Restore plans that arrive after their dialog was closed do not land in the next dialog.
func TestLateRestorePlansAreDropped(t *testing.T) {
	m := loaded(t, 120, 40)
	drive(t, m, keys("2")...)
	q, _ := m.tables[m.active].Current(m.snap)
	drive(t, m, keys("1d")...)
	if m.dialog == nil || m.dialog.act != actDrain {
		t.Fatal("the drain dialog is open")
	}
	before := strings.Join(m.dialog.lines, "\n")
	m.Update(restorePlansMsg{names: []string{q.Name}, details: []*replay.Detail{nil}, errs: []error{errString("late")}})
	if got := strings.Join(m.dialog.lines, "\n"); got != before || m.dialog.plans != nil {
		t.Fatalf("a late restore plan replaced the drain dialog:\n%s", got)
	}
}
