package tui

import (
	"os"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Styles are every style the dashboard uses, built once from one renderer: nothing global, nothing mutable.
type Styles struct {
	Title, Dim, Bold           lipgloss.Style
	TabActive, Tab             lipgloss.Style
	Header, Row, Cursor, Chose lipgloss.Style
	Alert, Warn, OK, Info      lipgloss.Style
	Box, Key, Disabled, Error  lipgloss.Style
}

// NewStyles builds the theme for a renderer. NO_COLOR (or a renderer pinned to ASCII) gives plain text; the
// cursor and selection stay visible through their markers, not colour alone.
func NewStyles(r *lipgloss.Renderer) Styles {
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		r.SetColorProfile(termenv.Ascii)
	}
	c := func(light, dark string) lipgloss.AdaptiveColor {
		return lipgloss.AdaptiveColor{Light: light, Dark: dark}
	}
	s := r.NewStyle
	return Styles{
		Title:     s().Bold(true).Foreground(c("#5A3FC0", "#B9A6FF")),
		Dim:       s().Foreground(c("#767676", "#8A8A8A")),
		Bold:      s().Bold(true),
		TabActive: s().Bold(true).Foreground(c("#FFFFFF", "#1A1A1A")).Background(c("#5A3FC0", "#B9A6FF")),
		Tab:       s().Foreground(c("#4A4A4A", "#C8C8C8")),
		Header:    s().Bold(true).Foreground(c("#4A4A4A", "#C8C8C8")),
		Row:       s(),
		Cursor:    s().Bold(true).Background(c("#E4DDFF", "#3B3360")),
		Chose:     s().Foreground(c("#5A3FC0", "#B9A6FF")),
		Alert:     s().Bold(true).Foreground(c("#FFFFFF", "#FFFFFF")).Background(c("#C62828", "#B71C1C")),
		Warn:      s().Bold(true).Foreground(c("#B45309", "#FBBF24")),
		OK:        s().Foreground(c("#15803D", "#4ADE80")),
		Info:      s().Foreground(c("#1D4ED8", "#93C5FD")),
		Box:       s().Border(lipgloss.RoundedBorder()).BorderForeground(c("#5A3FC0", "#B9A6FF")).Padding(0, 1),
		Key:       s().Bold(true),
		Disabled:  s().Foreground(c("#A0A0A0", "#5C5C5C")).Strikethrough(true),
		Error:     s().Bold(true).Foreground(c("#C62828", "#F87171")),
	}
}
