package tui

import "github.com/charmbracelet/bubbles/key"

// KeyMap holds every binding with its help text. Bindings that do not apply where the operator is (restore in
// the stranded pane, any action in read-only mode) are disabled, and help shows them as disabled.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	NextPane, PrevPane, Pane1, Pane2        key.Binding
	Pane3, Pane4                            key.Binding
	Open, Back, Select, SelectAll           key.Binding
	Filter, Sort, Reverse, Refresh          key.Binding
	Drain, Restore, Help, Quit              key.Binding
	Confirm, Cancel, Force                  key.Binding
}

// DefaultKeyMap is the dashboard's keys.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, k, h string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, h))
	}
	return KeyMap{
		Up:        b([]string{"up", "k"}, "↑/k", "up"),
		Down:      b([]string{"down", "j"}, "↓/j", "down"),
		PageUp:    b([]string{"pgup", "ctrl+u"}, "pgup", "page up"),
		PageDown:  b([]string{"pgdown", "ctrl+d"}, "pgdn", "page down"),
		Top:       b([]string{"home", "g"}, "g", "top"),
		Bottom:    b([]string{"end", "G"}, "G", "bottom"),
		NextPane:  b([]string{"tab", "right", "l"}, "tab", "next pane"),
		PrevPane:  b([]string{"shift+tab", "left", "h"}, "shift+tab", "previous pane"),
		Pane1:     b([]string{"1"}, "1", "stranded"),
		Pane2:     b([]string{"2"}, "2", "quarantine"),
		Pane3:     b([]string{"3"}, "3", "live"),
		Pane4:     b([]string{"4"}, "4", "archived"),
		Open:      b([]string{"enter"}, "enter", "open blob"),
		Back:      b([]string{"esc", "backspace"}, "esc", "back"),
		Select:    b([]string{" "}, "space", "select"),
		SelectAll: b([]string{"ctrl+a"}, "ctrl+a", "select all shown"),
		Filter:    b([]string{"/"}, "/", "filter"),
		Sort:      b([]string{"s"}, "s", "sort by next column"),
		Reverse:   b([]string{"S"}, "S", "reverse sort"),
		Refresh:   b([]string{"ctrl+r", "R"}, "R", "refresh now"),
		Drain:     b([]string{"d"}, "d", "drain selection / all stranded"),
		Restore:   b([]string{"r"}, "r", "restore selection / blob"),
		Help:      b([]string{"?"}, "?", "help"),
		Quit:      b([]string{"q", "ctrl+c"}, "q", "quit"),
		Confirm:   b([]string{"y", "enter"}, "y", "confirm"),
		Cancel:    b([]string{"n", "esc", "c"}, "esc", "cancel"),
		Force:     b([]string{"f"}, "f", "toggle --force"),
	}
}

// ShortHelp is the footer line.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.NextPane, k.Open, k.Select, k.Filter, k.Sort, k.Drain, k.Restore, k.Help, k.Quit}
}

// FullHelp is the help screen, by column.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.NextPane, k.PrevPane, k.Pane1, k.Pane2, k.Pane3, k.Pane4},
		{k.Open, k.Back, k.Select, k.SelectAll, k.Filter, k.Sort, k.Reverse},
		{k.Drain, k.Restore, k.Refresh, k.Help, k.Quit},
	}
}
