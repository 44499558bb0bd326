package tui

import tea "github.com/charmbracelet/bubbletea"

// Run opens the dashboard on the terminal until the operator quits.
func Run(o Options) error {
	m := New(o)
	_, err := tea.NewProgram(m, tea.WithAltScreen()).Run()
	m.stop()
	return err
}
