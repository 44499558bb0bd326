package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// binding is one key of one scope, as data: what it is called in the footer and in help, why it does nothing
// where the operator is (off), and what it does. The footer and help are generated from the focused scope's
// bindings, so they can never list a key that does nothing there, and a key that is off says why when pressed
// (lazygit's GetDisabledReason).
type binding struct {
	key.Binding
	// short: listed in the footer (when it applies).
	short bool
	// off says why the binding does nothing here, or "" when it applies.
	off func(m *Model) string
	// do acts; nil for bindings only listed (keys a text field or a scroll handles itself).
	do func(m *Model) tea.Cmd
}

func bind(keys []string, label, desc string, do func(m *Model) tea.Cmd) binding {
	return binding{Binding: key.NewBinding(key.WithKeys(keys...), key.WithHelp(label, desc)), do: do}
}

func (b binding) footer() binding { b.short = true; return b }

func (b binding) when(off func(m *Model) string) binding { b.off = off; return b }

// reason is why b is off for m ("" when it applies).
func (b binding) reason(m *Model) string {
	if b.off == nil {
		return ""
	}
	return b.off(m)
}

// matches reports whether the key press is one of b's keys.
func (b binding) matches(k tea.KeyMsg) bool {
	s := k.String()
	for _, want := range b.Keys() {
		if s == want {
			return true
		}
	}
	return false
}

// scope is the keys of one focus: a component, a dialog, a text field. Keys not bound fall to other, when set
// (a text field takes what it types).
type scope struct {
	name     string
	bindings []binding
	other    func(m *Model, k tea.KeyMsg) tea.Cmd
	// modal: the global keys (help, refresh, panes) do not reach through.
	modal bool
}

// press handles a key in the scope: the matching binding acts, or says why it is off.
func (s *scope) press(m *Model, k tea.KeyMsg) (tea.Cmd, bool) {
	for _, b := range s.bindings {
		if !b.matches(k) {
			continue
		}
		if why := b.reason(m); why != "" {
			m.setStatus(m.st.Warn.Render(why))
			return nil, true
		}
		if b.do == nil {
			return nil, false
		}
		return b.do(m), true
	}
	return nil, false
}
