package tui

import (
	"image/color"
	"os"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// Styles are every style the dashboard uses, built once from one theme: nothing global, nothing mutable.
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
	// plain: no colour, no attribute (Theme.Plain); pick chooses a palette colour for the background.
	plain bool
	pick  func(light, dark string) color.Color
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

// Theme is how the dashboard paints: the terminal's colour profile and whether its background is light. Bubble
// Tea v2 reports both (tea.ColorProfileMsg, tea.BackgroundColorMsg) and downsamples what is drawn to the profile.
type Theme struct {
	Profile colorprofile.Profile
	// Light is a light background (the terminal said so): the dark palette is the default until it answers.
	Light bool
}

// Plain says the theme draws no colour and no attribute: a terminal of ASCII or less, NO_COLOR, a pipe, the tests.
// The cursor and the selection stay visible through their markers, not colour alone.
func (t Theme) Plain() bool {
	_, noColor := os.LookupEnv("NO_COLOR")
	return noColor || t.Profile <= colorprofile.ASCII
}

// NewStyles builds the styles of a theme. A plain theme keeps each style's layout (the box's border and padding)
// and nothing else.
func NewStyles(t Theme) Styles {
	pick := lipgloss.LightDark(!t.Light)
	plain := t.Plain()
	type style = lipgloss.Style
	s := lipgloss.NewStyle
	c := func(light, dark string) color.Color { return pick(lipgloss.Color(light), lipgloss.Color(dark)) }
	fg := func(st style, light, dark string) style {
		if plain {
			return st
		}
		return st.Foreground(c(light, dark))
	}
	bg := func(st style, light, dark string) style {
		if plain {
			return st
		}
		return st.Background(c(light, dark))
	}
	bold := func(st style) style {
		if plain {
			return st
		}
		return st.Bold(true)
	}
	box := s().Border(lipgloss.RoundedBorder()).Padding(0, 1)
	if !plain {
		box = box.BorderForeground(c("#5A3FC0", "#B9A6FF"))
	}
	match, disabled := s(), fg(s(), "#A0A0A0", "#5C5C5C")
	if !plain {
		match, disabled = match.Reverse(true), disabled.Strikethrough(true)
	}
	st := Styles{
		Title:     fg(bold(s()), "#5A3FC0", "#B9A6FF"),
		Dim:       fg(s(), "#767676", "#8A8A8A"),
		Bold:      bold(s()),
		TabActive: bg(fg(bold(s()), "#FFFFFF", "#1A1A1A"), "#5A3FC0", "#B9A6FF"),
		Tab:       fg(s(), "#4A4A4A", "#C8C8C8"),
		Header:    fg(bold(s()), "#4A4A4A", "#C8C8C8"),
		Row:       s(),
		Cursor:    bg(bold(s()), "#E4DDFF", "#3B3360"),
		Chose:     fg(s(), "#5A3FC0", "#B9A6FF"),
		Alert:     bg(fg(bold(s()), "#FFFFFF", "#FFFFFF"), "#C62828", "#B71C1C"),
		Warn:      fg(bold(s()), "#B45309", "#FBBF24"),
		OK:        fg(s(), "#15803D", "#4ADE80"),
		Info:      fg(s(), "#1D4ED8", "#93C5FD"),
		Box:       box,
		Key:       bold(s()),
		Disabled:  disabled,
		Error:     fg(bold(s()), "#C62828", "#F87171"),
		Badge:     bg(fg(bold(s()), "#1A1A1A", "#1A1A1A"), "#FBBF24", "#FBBF24"),
		Stale:     bg(fg(bold(s()), "#FFFFFF", "#1A1A1A"), "#B45309", "#FBBF24"),
		Match:     match,
		plain:     plain,
		pick:      c,
	}
	st.paint.row, st.paint.cursor, st.paint.chose = newPainter(st.Row), newPainter(st.Cursor), newPainter(st.Chose)
	st.paint.alert, st.paint.warn, st.paint.dim = newPainter(st.Error), newPainter(st.Warn), newPainter(st.Dim)
	return st
}

// Color is a colour of the palette as the theme picks it (nil in a plain theme: no colour at all).
func (st *Styles) Color(light, dark string) color.Color {
	if st.plain {
		return nil
	}
	return st.pick(light, dark)
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
