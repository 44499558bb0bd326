package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
)

type dialogKind int

const (
	dlgConfirm dialogKind = iota
	dlgRunning
	dlgResults
)

type actionKind int

const (
	actDrain actionKind = iota
	actRestore
)

// dialog is the action overlay: the confirmation with the prediction, the progress of the run (cancellable),
// then the per-blob outcomes.
type dialog struct {
	kind    dialogKind
	act     actionKind
	title   string
	lines   []string
	targets []replay.DrainTarget
	names   []string
	force   bool
	refused int
	plans   *restorePlansMsg // the restore plans, once read

	total, done int
	counts      replay.Tally
	results     []replay.Result
	bar         progress.Model
	cancel      context.CancelFunc
	ch          chan tea.Msg
	scroll      int
	w, h        int
}

type (
	restorePlansMsg struct {
		names   []string
		details []*replay.Detail
		errs    []error
	}
	progressMsg   struct{ r replay.Result }
	actionDoneMsg struct {
		results []replay.Result
		err     error
	}
)

func (d *dialog) SetSize(w, h int) {
	d.w, d.h = w, h
	d.bar.Width = min(60, w-12)
}

func (m *Model) newDialog(kind dialogKind, act actionKind, title string) *dialog {
	d := &dialog{kind: kind, act: act, title: title, counts: replay.Tally{},
		bar: progress.New(progress.WithDefaultGradient(), progress.WithColorProfile(m.opt.Renderer.ColorProfile()))}
	d.SetSize(m.w, m.h)
	return d
}

func (m *Model) confirmDrain(items []replay.Item) tea.Cmd {
	if !m.keys.Drain.Enabled() {
		m.status = m.st.Warn.Render(disabledWhy(m, "drain"))
		return nil
	}
	if len(items) == 0 {
		m.status = "nothing is stranded: no blob to drain"
		return nil
	}
	d := m.newDialog(dlgConfirm, actDrain, fmt.Sprintf("Drain %d stranded blob(s)?", len(items)))
	d.lines = present.ForecastLines(replay.ForecastDrain(items))
	d.lines = append(d.lines, "", "Each write is conditional on the ETag read: a blob that changed or vanished is skipped, never resurrected.")
	for _, it := range items {
		d.targets = append(d.targets, m.cfg.DrainTargetOf(&it, m.snap.Now))
	}
	m.dialog = d
	return nil
}

func disabledWhy(m *Model, what string) string {
	if m.opt.ReadOnly {
		return what + " is off: read-only mode"
	}
	if what == "drain" {
		return "drain applies to the stranded pane (press 1)"
	}
	return "restore applies to the quarantine pane (press 2)"
}

// confirmRestore reads each blob's restore plan first (in a command), then asks.
func (m *Model) confirmRestore(names []string) tea.Cmd {
	if !m.keys.Restore.Enabled() {
		m.status = m.st.Warn.Render(disabledWhy(m, "restore"))
		return nil
	}
	if len(names) == 0 {
		return nil
	}
	d := m.newDialog(dlgConfirm, actRestore, fmt.Sprintf("Restore %d quarantined blob(s)?", len(names)))
	d.lines = []string{"reading the restore plan…"}
	d.names = names
	m.dialog = d
	l, ctx := m.opt.Loader, m.ctx
	return func() tea.Msg {
		msg := restorePlansMsg{names: names}
		for _, n := range names {
			det, err := l.Inspect(ctx, n)
			msg.details, msg.errs = append(msg.details, det), append(msg.errs, err)
		}
		return msg
	}
}

func (m *Model) restoreLines(msg restorePlansMsg, force bool) ([]string, int) {
	var lines []string
	refused := 0
	for i, n := range msg.names {
		lines = append(lines, m.st.Bold.Render(textfmt.Printable(n)))
		if msg.errs[i] != nil {
			lines = append(lines, "  "+m.st.Error.Render(textfmt.Printable(msg.errs[i].Error())))
			refused++
			continue
		}
		for _, l := range present.Explain(msg.details[i], m.cfg) {
			lines = append(lines, "  "+textfmt.Printable(l))
		}
		if rp := msg.details[i].Restore; rp == nil || rp.Refusal != "" {
			refused++
		}
	}
	if refused > 0 && !force {
		lines = append(lines, "", m.st.Warn.Render(fmt.Sprintf("%d blob(s) will be refused: press f to restore them anyway (--force)", refused)))
	} else if force {
		lines = append(lines, "", m.st.Warn.Render("--force: blobs where nothing resumes are restored too (the replay re-quarantines them)"))
	}
	return lines, refused
}

// start runs the confirmed action in a goroutine; its progress and result come back through a channel read by
// a command, one message at a time.
func (m *Model) start(d *dialog) tea.Cmd {
	ctx, cancel := context.WithCancel(m.ctx)
	d.kind, d.cancel, d.ch = dlgRunning, cancel, make(chan tea.Msg, 64)
	c, cfg := m.opt.Loader.Container, m.cfg
	progress := func(r replay.Result) { d.ch <- progressMsg{r} }
	if d.act == actDrain {
		d.total = len(d.targets)
		go func() {
			res, err := replay.Drain(ctx, c, cfg, d.targets, replay.DrainOptions{ReadOnly: m.opt.ReadOnly, Concurrency: m.opt.Concurrency, Progress: progress})
			d.ch <- actionDoneMsg{res, err}
		}()
	} else {
		d.total = len(d.names)
		go func() {
			res, err := replay.Restore(ctx, c, cfg, d.names, replay.RestoreOptions{ReadOnly: m.opt.ReadOnly, Force: d.force, Concurrency: m.opt.Concurrency, Progress: progress})
			d.ch <- actionDoneMsg{res, err}
		}()
	}
	return tea.Batch(waitFor(d.ch), d.bar.SetPercent(0))
}

func waitFor(ch chan tea.Msg) tea.Cmd {
	return func() tea.Msg { return <-ch }
}

func (m *Model) updateDialog(msg tea.Msg) tea.Cmd {
	d := m.dialog
	if d == nil {
		return nil
	}
	switch msg := msg.(type) {
	case restorePlansMsg:
		if d.act != actRestore || d.plans != nil || !slices.Equal(d.names, msg.names) {
			return nil // plans for a dialog that is no longer open
		}
		d.plans = &msg
		d.lines, d.refused = m.restoreLines(msg, d.force)
		return nil
	case progressMsg:
		d.done++
		d.counts[msg.r.Outcome]++
		return tea.Batch(waitFor(d.ch), d.bar.SetPercent(float64(d.done)/float64(max(1, d.total))))
	case actionDoneMsg:
		d.kind, d.results = dlgResults, msg.results
		if msg.err != nil {
			d.lines = []string{m.st.Error.Render(textfmt.Printable(msg.err.Error()))}
		} else {
			d.lines = resultLines(msg.results, m.st)
		}
		d.title = map[actionKind]string{actDrain: "Drain", actRestore: "Restore"}[d.act] + " finished"
		m.status = present.TallyLine(replay.TallyOf(msg.results), false)
		return m.refresh()
	case progress.FrameMsg:
		pm, cmd := d.bar.Update(msg)
		d.bar = pm.(progress.Model)
		return cmd
	case tea.KeyMsg:
		switch d.kind {
		case dlgConfirm:
			switch {
			case key.Matches(msg, m.keys.Confirm):
				if d.act == actRestore && d.plans == nil {
					return nil // still reading the plan
				}
				return m.start(d)
			case key.Matches(msg, m.keys.Force) && d.plans != nil:
				d.force = !d.force
				d.lines, d.refused = m.restoreLines(*d.plans, d.force)
			case key.Matches(msg, m.keys.Cancel), msg.String() == "q":
				m.dialog = nil
			case msg.String() == "ctrl+c":
				return m.quit()
			}
		case dlgRunning:
			if key.Matches(msg, m.keys.Cancel) || msg.String() == "ctrl+c" {
				d.cancel() // nothing after this point is touched; the run reports what it did
				d.title = "Cancelling…"
			}
		case dlgResults:
			switch msg.String() {
			case "up", "k":
				d.scroll = max(0, d.scroll-1)
			case "down", "j":
				d.scroll = min(max(0, len(d.lines)-1), d.scroll+1)
			case "ctrl+c":
				return m.quit()
			default:
				m.dialog = nil
				for _, t := range m.tables {
					t.selected = map[string]bool{}
				}
				m.updateKeys()
			}
		}
	}
	return nil
}

func resultLines(rs []replay.Result, st Styles) []string {
	lines := []string{present.TallyLine(replay.TallyOf(rs), false), ""}
	for _, r := range rs {
		l := fmt.Sprintf("%-9s %s", r.Outcome, textfmt.Printable(r.Name))
		if r.Target != "" {
			l += " → " + textfmt.Printable(r.Target)
		}
		if r.Error != "" {
			l += ": " + textfmt.Printable(r.Error)
		}
		if r.Outcome == replay.OutcomeFailed {
			l = st.Error.Render(l)
		}
		lines = append(lines, l)
	}
	return lines
}

// Overlay draws the dialog box over the centre of the screen.
func (d *dialog) Overlay(screen string, st Styles, w, h int) string {
	inner := min(w-6, 100)
	var body []string
	body = append(body, st.Title.Render(d.title), "")
	switch d.kind {
	case dlgConfirm:
		for _, l := range d.lines {
			body = append(body, strings.Split(ansi.Wrap(l, inner, " "), "\n")...)
		}
		body = append(body, "", st.Key.Render("y")+" confirm   "+st.Key.Render("esc")+" cancel")
		if d.act == actRestore {
			body[len(body)-1] += "   " + st.Key.Render("f") + " toggle --force"
		}
	case dlgRunning:
		body = append(body, d.bar.View(), fmt.Sprintf("%d of %d done  %s", d.done, d.total, present.TallyLine(d.counts, false)), "", st.Key.Render("esc")+" cancel: nothing after this point is touched")
	case dlgResults:
		room := max(3, h-8)
		end := min(len(d.lines), d.scroll+room)
		body = append(body, d.lines[d.scroll:end]...)
		body = append(body, "", st.Dim.Render("↑/↓ scroll · any other key closes"))
	}
	for i := range body {
		body[i] = fit(body[i], inner, 1)
	}
	if len(body) > h-2 {
		body = body[:h-2]
	}
	box := st.Box.Render(strings.Join(body, "\n"))
	return placeOver(screen, box, w, h)
}

// placeOver centres box on screen, replacing the lines it covers.
func placeOver(screen, box string, w, h int) string {
	lines := strings.Split(screen, "\n")
	bl := strings.Split(box, "\n")
	bw := lipgloss.Width(box)
	top := max(0, (h-len(bl))/2)
	left := max(0, (w-bw)/2)
	for i, l := range bl {
		if top+i >= len(lines) {
			break
		}
		lines[top+i] = strings.Repeat(" ", left) + l
	}
	return strings.Join(lines, "\n")
}
