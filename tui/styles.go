package tui

import (
	"os"
	"strings"

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
	Badge, Stale, Match        lipgloss.Style

	// paint holds the row styles as fixed prefix and suffix, worked out once: a table row is one line, and
	// running lipgloss over it on every frame was a quarter of View's time at 100,000 blobs.
	paint struct{ row, cursor, chose, alert, warn, dim painter }
}

// painter wraps one line in a style's escape sequences.
type painter struct{ pre, post string }

func newPainter(st lipgloss.Style) painter {
	out := st.Render("X")
	i := strings.Index(out, "X")
	return painter{pre: out[:i], post: out[i+1:]}
}

func (p painter) to(b *strings.Builder, line string) {
	b.WriteString(p.pre)
	b.WriteString(line)
	b.WriteString(p.post)
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
	st := Styles{
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
		Badge:     s().Bold(true).Foreground(c("#1A1A1A", "#1A1A1A")).Background(c("#FBBF24", "#FBBF24")),
		Stale:     s().Bold(true).Foreground(c("#FFFFFF", "#1A1A1A")).Background(c("#B45309", "#FBBF24")),
		Match:     s().Reverse(true),
	}
	st.paint.row, st.paint.cursor, st.paint.chose = newPainter(st.Row), newPainter(st.Cursor), newPainter(st.Chose)
	st.paint.alert, st.paint.warn, st.paint.dim = newPainter(st.Error), newPainter(st.Warn), newPainter(st.Dim)
	return st
}

// paintKey is one styled text: the style (by its place in Styles) and the text.
type paintKey struct {
	style *lipgloss.Style
	text  string
}

// maxPainted bounds the memo of styled texts (the badges, tabs and key hints of a session are a few dozen).
const maxPainted = 1024

// memo holds styled texts: the same badges, tabs, key hints and chart labels are drawn on every frame, and each
// lipgloss render costs microseconds that a million-row frame budget cannot spare. The root and the overview
// share one.
type memo map[paintKey]string

// paint renders text in style, remembering the result.
func (pm memo) paint(style *lipgloss.Style, text string) string {
	k := paintKey{style, text}
	if s, ok := pm[k]; ok {
		return s
	}
	if len(pm) >= maxPainted {
		clear(pm)
	}
	s := style.Render(text)
	pm[k] = s
	return s
}

// paint renders text in a style of m.st, remembered.
func (m *Model) paint(style *lipgloss.Style, text string) string { return m.painted.paint(style, text) }
