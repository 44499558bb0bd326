package tui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"
)

// Run opens the dashboard on the terminal until the operator quits or ctx ends.
func Run(ctx context.Context, o Options) error {
	m := New(o)
	_, err := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx)).Run()
	m.stop()
	if ctx.Err() != nil {
		return nil
	}
	return err
}
