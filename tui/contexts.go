package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

// ContextSummary is one context's row on the summary screen: what a check of it found, or why it could not look.
type ContextSummary struct {
	Name      string
	Container string
	ReadOnly  bool
	Counts    map[rules.Pane]int
	Findings  int
	Worst     string // the most urgent finding, said short ("2 expiring")
	Err       string // could not look: the rest of the row is empty
	At        time.Time
}

// SummaryOptions set up the summary screen of every context (deadletter --all-contexts).
type SummaryOptions struct {
	// Names are the contexts, in the config file's order.
	Names []string
	// Look checks one context (each in its own command, with its own timeout: one that hangs holds up only its
	// own row).
	Look     func(ctx context.Context, name string) ContextSummary
	Interval time.Duration
	// Theme is the terminal's colour profile (its zero value draws plain text).
	Theme Theme
}

// RunSummary shows every context, one row each, refreshed every Interval; enter opens the context under the
// cursor: its name is returned ("" when the operator quit).
func RunSummary(ctx context.Context, o SummaryOptions) (string, error) {
	m := newSummary(o)
	_, err := tea.NewProgram(m, tea.WithContext(ctx)).Run()
	m.stop()
	if ctx.Err() != nil {
		return "", nil
	}
	return m.chosen, err
}

// summary is the contexts screen.
type summary struct {
	o      SummaryOptions
	st     Styles
	rows   map[string]*ContextSummary
	cursor int
	w, h   int
	chosen string
	ctx    context.Context
	stop   context.CancelFunc
	// looking are the contexts whose check is under way: a tick does not start another beside it, so one that
	// hangs costs one goroutine, not one per tick.
	looking map[string]bool
	painted memo
	// keys are the summary's keys as data (the dashboard's scope system): the footer and ? help list them.
	keys *scope
	// help is the key reference while it is open (? opens it); mail is what it posted (its esc).
	help *help
	mail []tea.Msg
}

type summaryRowMsg struct{ row ContextSummary }
type summaryTickMsg struct{}

func newSummary(o SummaryOptions) *summary {
	if o.Interval <= 0 {
		o.Interval = rules.DefaultInterval
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &summary{o: o, st: NewStyles(o.Theme), rows: map[string]*ContextSummary{}, w: minW, h: minH, ctx: ctx, stop: stop,
		looking: map[string]bool{}, painted: memo{}}
	s.keys = s.scope()
	return s
}

// scope is the summary's keys, each one of its methods.
func (s *summary) scope() *scope {
	empty := func() string {
		if len(s.o.Names) == 0 {
			return "no context in the config file"
		}
		return ""
	}
	return &scope{name: "contexts", bindings: []binding{
		bind([]string{"enter"}, "enter", "open the context under the cursor in its dashboard (: there comes back here)", s.open).footer().when(empty),
		bind([]string{"up", "k"}, "↑/k", "up", func() tea.Cmd { s.cursor = max(0, s.cursor-1); return nil }).footer(),
		bind([]string{"down", "j"}, "↓/j", "down", func() tea.Cmd { s.cursor = max(0, min(len(s.o.Names)-1, s.cursor+1)); return nil }).footer(),
		bind([]string{"R", "ctrl+r"}, "R", "refresh: check every context again now", s.lookAll).footer(),
		bind([]string{"?"}, "?", "help: these keys", s.openHelp).footer(),
		bind([]string{"q", "ctrl+c", "esc"}, "q", "quit", func() tea.Cmd { return tea.Quit }).footer(),
	}}
}

func (s *summary) open() tea.Cmd {
	s.chosen = s.o.Names[s.cursor]
	return tea.Quit
}

// openHelp opens the key reference of the summary's scope, as ? does in the dashboard.
func (s *summary) openHelp() tea.Cmd {
	e := &env{st: &s.st, post: func(msg tea.Msg) { s.mail = append(s.mail, msg) }}
	s.help = newHelp(e, s.keys, nil)
	s.help.SetSize(s.w, s.h-1)
	return nil
}

func (s *summary) Init() tea.Cmd { return s.lookAll() }

// lookAll checks every context at once, each answering on its own.
func (s *summary) lookAll() tea.Cmd {
	cmds := []tea.Cmd{tea.Tick(s.o.Interval, func(time.Time) tea.Msg { return summaryTickMsg{} })}
	for _, name := range s.o.Names {
		if s.looking[name] {
			continue
		}
		s.looking[name] = true
		look, ctx := s.o.Look, s.ctx
		cmds = append(cmds, func() tea.Msg { return summaryRowMsg{look(ctx, name)} })
	}
	return tea.Batch(cmds...)
}

func (s *summary) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		s.w, s.h = msg.Width, msg.Height
		if s.help != nil {
			s.help.SetSize(s.w, s.h-1)
		}
	case summaryRowMsg:
		r := msg.row
		s.rows[r.Name] = &r
		delete(s.looking, r.Name)
	case summaryTickMsg:
		return s, s.lookAll()
	case tea.KeyPressMsg:
		keys := s.keys
		if s.help != nil {
			keys = s.help.Scope()
		}
		b, ok := keys.find(msg)
		if !ok || b.reason() != "" {
			return s, nil
		}
		cmd := b.do()
		for _, m := range s.mail {
			switch m.(type) {
			case closeMsg:
				s.help = nil
			case quitMsg:
				cmd = tea.Quit
			}
		}
		s.mail = nil
		return s, cmd
	}
	return s, nil
}

// View is the screen, declared: the alternate screen and its text (plain where the theme is).
func (s *summary) View() tea.View {
	content := s.screen()
	if s.st.plain && strings.IndexByte(content, ansi.ESC) >= 0 {
		content = ansi.Strip(content)
	}
	v := tea.NewView(content)
	v.AltScreen = true
	return v
}

func (s *summary) screen() string {
	st := &s.st
	lines := []string{st.Title.Render("deadletter") + "  every context", ""}
	head := fmt.Sprintf("  %-16s %-9s %-22s %7s %7s %5s %8s  %s", "CONTEXT", "STATE", "WORST", "STRAND", "QUARANT", "LIVE", "ARCHIVED", "CONTAINER")
	lines = append(lines, st.Header.Render(textfmt.Cell(head, s.w)))
	for i, name := range s.o.Names {
		mark := "  "
		if i == s.cursor {
			mark = "▸ "
		}
		r, ok := s.rows[name]
		var line string
		switch {
		case !ok:
			line = fmt.Sprintf("%s%-16s %s", mark, textfmt.Cell(textfmt.Printable(name), 16), st.Dim.Render("looking…"))
		case r.Err != "":
			line = fmt.Sprintf("%s%-16s %s", mark, textfmt.Cell(textfmt.Printable(name), 16), st.Error.Render("ERROR "+textfmt.Printable(r.Err)))
		default:
			state := "healthy"
			if r.Findings > 0 {
				state = fmt.Sprintf("%d found", r.Findings)
			}
			ro := ""
			if r.ReadOnly {
				ro = " READ-ONLY"
			}
			line = fmt.Sprintf("%s%s %-9s %-22s %7d %7d %5d %8d  %s%s", mark, textfmt.Cell(textfmt.Printable(name), 16), state,
				textfmt.Cell(textfmt.Printable(r.Worst), 22), r.Counts[rules.PaneStranded], r.Counts[rules.PaneQuarantine],
				r.Counts[rules.PaneLive], r.Counts[rules.PaneArchived], textfmt.Printable(r.Container), ro)
			if r.Findings > 0 {
				line = st.Warn.Render(textfmt.Truncate(line, s.w, "…"))
			}
		}
		if i == s.cursor {
			line = st.Cursor.Render(textfmt.Truncate(line, s.w, "…"))
		}
		lines = append(lines, line)
	}
	body := strings.Join(lines, "\n")
	keys := s.keys
	if s.help != nil {
		body, keys = s.help.View(), s.help.Scope()
	}
	foot := keyLine(st, s.painted, keys.hints(), nil, s.w)
	return fit(body, s.w, s.h-1) + "\n" + fit(foot, s.w, 1)
}
