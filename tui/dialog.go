package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
)

type phase int

const (
	phaseConfirm phase = iota
	phaseRunning
	phaseResults
)

type action int

const (
	actDrain action = iota
	actRestore
	actAck
	actClearAck
)

var actionNames = [...]string{actDrain: "Drain", actRestore: "Restore", actAck: "Acknowledge", actClearAck: "Clear the acknowledgement"}

// ackDurations are what the ack dialog offers (← → to change).
var ackDurations = []time.Duration{time.Hour, 4 * time.Hour, 24 * time.Hour, 72 * time.Hour, 7 * 24 * time.Hour}

// dialog is an action's overlay: the confirmation with its prediction, the progress of the run (cancellable),
// then the per-blob outcomes. Its title and key line are pinned; its body scrolls.
type dialog struct {
	phase   phase
	act     action
	title   string
	lines   []string
	targets []replay.DrainTarget
	names   []string
	blobs   []store.BlobInfo // ack targets
	force   bool
	plans   *replay.RestorePreview // restore: the plans, once read
	limit   string                 // what limits the action to fewer blobs than the pane holds ("" when nothing)

	note   textinput.Model // ack: the note
	ackFor int             // ack: index into ackDurations

	total, done int
	counts      replay.Tally
	results     []replay.Result
	bar         progress.Model
	cancel      context.CancelFunc
	cancelled   bool
	ch          chan tea.Msg
	scroll      int
	w, h        int
	inner       int
	body        []string // wrapped

	st  Styles        // how it draws
	cfg replay.Config // the rules its restore plan is explained by
}

type (
	restorePlansMsg struct {
		names   []string
		preview *replay.RestorePreview
	}
	progressMsg   struct{ r replay.Result }
	actionDoneMsg struct {
		results []replay.Result
		err     error
	}
)

func (m *Model) newDialog(act action, title string) *dialog {
	d := &dialog{act: act, title: title, counts: replay.Tally{}, ackFor: 2, st: m.st, cfg: m.cfg,
		bar: progress.New(progress.WithDefaultGradient(), progress.WithColorProfile(m.opt.Renderer.ColorProfile()))}
	d.note = newInput()
	d.note.Prompt = "note: "
	d.note.CharLimit = 180
	d.SetSize(m.dialogSize())
	return d
}

// SetSize implements the component contract: the screen the dialog sits on.
func (d *dialog) SetSize(w, h int) {
	d.w, d.h = w, h
	d.inner = max(20, min(w-6, 100))
	d.bar.Width = min(60, d.inner)
	d.note.Width = d.inner - 8
	d.rewrap()
}

func (d *dialog) setLines(lines []string) {
	d.lines = lines
	d.rewrap()
}

func (d *dialog) rewrap() {
	d.body = d.body[:0]
	for _, l := range d.lines {
		d.body = append(d.body, strings.Split(ansi.Wrap(l, d.inner, " "), "\n")...)
	}
	d.clamp()
}

// room is how many body lines fit between the pinned title and key line.
func (d *dialog) room() int { return max(1, d.h-2-2-4) }

func (d *dialog) clamp() { d.scroll = max(0, min(d.scroll, len(d.body)-d.room())) }

func (d *dialog) scrollBy(n int) { d.scroll += n; d.clamp() }

// limitNote says what limits an action to fewer blobs than the pane holds: a selection or a filter.
func (m *Model) limitNote(t *table, n int) string {
	total := len(t.order)
	switch {
	case len(t.selected) > 0 && len(t.selected) >= total && m.filter.text == "":
		return "" // every blob of the pane is selected: nothing is left out
	case len(t.selected) > 0:
		return fmt.Sprintf("%d of %d %s: the selection", n, total, t.pane)
	case m.filter.text != "":
		return fmt.Sprintf("%d of %d %s: filter '%s'", n, total, t.pane, textfmt.Printable(m.filter.text))
	}
	return ""
}

// confirmDrain asks before draining what the operator sees: the selection, else the rows the filter shows.
func (m *Model) confirmDrain(items []replay.Item, limit string) tea.Cmd {
	if len(items) == 0 {
		m.setStatus("nothing to drain here")
		return nil
	}
	f := m.cfg.ForecastDrain(items, false, m.snap.Now)
	if !f.Asks() {
		// Asking "drain 0 blobs?" would ask for nothing: say why nothing is drained instead.
		var why []string
		for _, c := range []struct {
			n    int
			what string
		}{{f.Handled, "already handled by the replay"}, {f.NotStranded, "not stranded"}, {f.TooLarge, "over the size limit"}} {
			if c.n > 0 {
				why = append(why, fmt.Sprintf("%d %s", c.n, c.what))
			}
		}
		m.setStatus("nothing to drain here: " + strings.Join(why, ", "))
		return nil
	}
	d := m.newDialog(actDrain, present.DrainQuestion(f, "stranded blob(s)"))
	d.limit = limit
	lines := d.limitLines()
	lines = append(lines, present.ForecastLines(f)...)
	lines = append(lines, "", "Each write is conditional on the ETag read: a blob that changed or vanished is skipped, never resurrected.")
	for i := range items {
		d.targets = append(d.targets, m.cfg.DrainTargetOf(&items[i], m.snap.Now))
	}
	d.setLines(lines)
	m.dialog = d
	return nil
}

// confirmRestore reads each blob's restore plan first (in a command), then asks.
func (m *Model) confirmRestore(names []string, limit string) tea.Cmd {
	if len(names) == 0 {
		m.setStatus("nothing to restore here")
		return nil
	}
	d := m.newDialog(actRestore, fmt.Sprintf("Reading the restore plans of %d quarantined blob(s)…", len(names)))
	d.names, d.limit = names, limit
	d.setLines(append(d.limitLines(), "reading the restore plan…"))
	m.dialog = d
	l, ctx := m.opt.Loader, m.ctx
	return func() tea.Msg { return restorePlansMsg{names: names, preview: l.PreviewRestore(ctx, names, false)} }
}

// confirmAck asks before acknowledging (or, when every target is acknowledged already, clearing) blobs.
func (m *Model) confirmAck(items []replay.Item, limit string) tea.Cmd {
	if len(items) == 0 {
		m.setStatus("nothing to acknowledge here")
		return nil
	}
	p := m.cfg.PreviewAck(items, m.snap.Now)
	if len(p.Targets) == 0 {
		m.setStatus("nothing to acknowledge here: an ack means nothing for the replay's archived/ records")
		return nil
	}
	act := actAck
	if p.Clear {
		act = actClearAck
	}
	d := m.newDialog(act, fmt.Sprintf("%s of %d blob(s)?", actionNames[act], len(p.Targets)))
	if act == actAck {
		d.title = fmt.Sprintf("Acknowledge %d blob(s)?", len(p.Targets))
		d.note.Focus()
	}
	d.blobs = p.Targets
	d.limit = limit
	lines := d.limitLines()
	if act == actAck {
		for i, e := range p.Expiring {
			if i == 3 {
				lines = append(lines, m.st.Warn.Render(fmt.Sprintf("… and %d more expiring blob(s): an ack silences none of them", len(p.Expiring)-3)))
				break
			}
			lines = append(lines, m.st.Warn.Render("EXPIRING: "+present.AckExpiringNote(e.Name, e.DeletesIn)))
		}
		if len(p.Expiring) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, "An acknowledged blob stays listed (dimmed) but raises no badge, check or watch finding for being stranded, quarantined or stalled until the ack runs out or the blob changes.",
			"It is kept in the blob's index tags, shared with everyone who looks; the blob's ETag and Last-Modified do not change.",
			fmt.Sprintf("By %s.", textfmt.Printable(m.by())))
	} else {
		lines = append(lines, "Every one of them is acknowledged: clearing makes them raise their findings again.")
	}
	d.setLines(lines)
	m.dialog = d
	return nil
}

// start runs the confirmed action in a goroutine; its progress and result come back through a channel read by a
// command, one message at a time.
func (m *Model) start(d *dialog) tea.Cmd {
	ctx, cancel := context.WithCancel(m.ctx)
	d.phase, d.cancel, d.ch = phaseRunning, cancel, make(chan tea.Msg, 64)
	d.note.Blur()
	c, cfg, ro, conc := m.opt.Loader.Container, m.cfg, m.opt.ReadOnly, m.opt.Concurrency
	progressed := func(r replay.Result) { d.ch <- progressMsg{r} }
	var run func() ([]replay.Result, error)
	switch d.act {
	case actDrain:
		d.total = len(d.targets)
		run = func() ([]replay.Result, error) {
			return replay.Drain(ctx, c, cfg, d.targets, replay.DrainOptions{ReadOnly: ro, Concurrency: conc, Progress: progressed})
		}
	case actRestore:
		// Only what the preview says it writes is restored, each copy held to the ETag its plan was read at: a copy
		// rewritten since the dialog showed it is skipped as changed, never restored unseen. The rest are reported
		// as the preview found them.
		names, left := d.plans.Writes(), d.plans.Left()
		d.total = len(names) + len(left)
		for _, r := range left {
			d.done++
			d.counts[r.Outcome]++
		}
		previewed := d.plans.Previewed()
		run = func() ([]replay.Result, error) {
			res, err := replay.Restore(ctx, c, cfg, names, replay.RestoreOptions{ReadOnly: ro, Force: d.force, Concurrency: conc, Progress: progressed,
				Previewed: previewed})
			return append(left, res...), err
		}
	default:
		d.total = len(d.blobs)
		o := replay.AckOptions{For: ackDurations[d.ackFor], Max: m.cfg.AckLimit(), Now: m.snap.Since(m.list.nowAt, m.now()), By: m.by(), Note: d.note.Value(), Clear: d.act == actClearAck, ReadOnly: ro, Progress: progressed}
		run = func() ([]replay.Result, error) { return replay.Acknowledge(ctx, c, d.blobs, o) }
	}
	go func() {
		res, err := run()
		d.ch <- actionDoneMsg{res, err}
	}()
	return waitFor(d.ch)
}

// Update takes what the dialog's work sends back — plans, progress — and, while it asks for a note, keys. The end
// of the run (actionDoneMsg) is the root's: it goes to finish, and the root refreshes.
func (d *dialog) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case restorePlansMsg:
		if d.act != actRestore || d.plans != nil || !slices.Equal(d.names, msg.names) || d.phase != phaseConfirm {
			return nil // plans for a dialog that is no longer open
		}
		d.plans = msg.preview
		d.setLines(d.restoreLines())
	case progressMsg:
		d.done++
		d.counts[msg.r.Outcome]++
		return waitFor(d.ch)
	default:
		if d.note.Focused() {
			var cmd tea.Cmd
			d.note, cmd = d.note.Update(msg)
			return cmd
		}
	}
	return nil
}

// finish shows the outcomes of the run, and returns the one-line tally for the status line.
func (d *dialog) finish(msg actionDoneMsg) string {
	d.phase, d.results, d.scroll = phaseResults, msg.results, 0
	d.title = actionNames[d.act] + " finished"
	tally := replay.TallyOf(msg.results)
	var lines []string
	switch {
	case msg.err != nil:
		lines = []string{d.st.Error.Render(textfmt.Printable(msg.err.Error()))}
	default:
		lines = []string{present.TallyLine(tally, false)}
		if d.cancelled && tally[replay.OutcomeCancelled] == 0 {
			lines = append(lines, d.st.Warn.Render(fmt.Sprintf("The %s finished before the cancel arrived: every blob was handled.", strings.ToLower(actionNames[d.act]))))
		}
		lines = append(lines, "")
		for _, l := range present.ResultLines(msg.results, false) {
			if strings.HasPrefix(l, string(replay.OutcomeFailed)) {
				l = d.st.Error.Render(l)
			}
			lines = append(lines, l)
		}
	}
	d.setLines(lines)
	return present.TallyLine(tally, false)
}

// finished takes an action's end: the dialog shows its outcomes (and stays reopenable), selections are spent, and
// the container is listed again — or, when the operator asked to quit while it ran, the dashboard quits.
func (m *Model) finished(msg actionDoneMsg) tea.Cmd {
	d := m.dialog
	if d == nil || d.phase != phaseRunning {
		return nil
	}
	m.setStatus(d.finish(msg))
	m.results = d
	for _, t := range m.tables {
		t.selected = map[string]bool{}
	}
	if m.quitAsk { // nothing is left to abandon
		return m.quit()
	}
	return m.refresh()
}

// limitLines say, first, what limits the action to fewer blobs than the pane holds.
func (d *dialog) limitLines() []string {
	if d.limit == "" {
		return nil
	}
	return []string{d.st.Warn.Render("Only what you see: " + d.limit + "."), ""}
}

// planLines explains each blob's restore plan.
func (d *dialog) planLines() (lines []string) {
	st := d.st
	for i := range d.plans.Entries {
		e := &d.plans.Entries[i]
		lines = append(lines, st.Bold.Render(textfmt.Printable(e.Name)))
		if e.Detail == nil {
			lines = append(lines, "  "+st.Error.Render(present.Reason(e.Left.Reason, present.ForceKey)))
			continue
		}
		for _, l := range present.Explain(e.Detail, d.cfg) {
			lines = append(lines, "  "+textfmt.Printable(l))
		}
	}
	return lines
}

// restoreLines say what the restore will do — first what it moves, refuses, cannot read and what --force
// changes, then each blob's plan — and set the title to what it will write.
func (d *dialog) restoreLines() []string {
	st := d.st
	n := d.plans.Counts()
	d.title = present.RestoreQuestion(n.Writes, replay.Tally{replay.OutcomeRefused: n.Refused, replay.OutcomeFailed: n.Unreadable}, "quarantined blob(s)")
	lines := d.limitLines()
	switch {
	case n.Forceable > 0 && !d.force:
		lines = append(lines, st.Warn.Render(fmt.Sprintf("%d blob(s) will be refused: press f to restore them anyway (--force)", n.Forceable)))
	case d.force && n.Forceable > 0:
		lines = append(lines, st.Warn.Render(fmt.Sprintf("--force: the %d refused blob(s) are restored too (where nothing resumes, the replay re-quarantines them)", n.Forceable)))
		if n.Lingering > 0 {
			lines = append(lines, st.Warn.Render(fmt.Sprintf("--force: %d of them still have their original at the root: restored, their events are at the root twice and the replay handles them twice (a drain would then take that original too)", n.Lingering)))
		}
	}
	if n.Unreadable > 0 {
		lines = append(lines, st.Error.Render(fmt.Sprintf("%d blob(s) could not be read: they are left where they are and reported as failed (R refreshes; try again)", n.Unreadable)))
	}
	if len(lines) > len(d.limitLines()) {
		lines = append(lines, "")
	}
	return append(lines, d.planLines()...)
}

// View draws the dialog box over the centre of the screen: title, body (scrolled), and keys — its pinned last
// line, which the root generates from the dialog's scope at the dialog's inner width.
func (d *dialog) View(screen, keys string) string {
	st := d.st
	var body []string
	body = append(body, st.Title.Render(d.title), "")
	room := d.room()
	switch d.phase {
	case phaseRunning:
		body = append(body, d.bar.ViewAs(float64(d.done)/float64(max(1, d.total))), fmt.Sprintf("%d of %d done  %s", d.done, d.total, present.TallyLine(d.counts, false)))
		if d.cancelled {
			body = append(body, st.Warn.Render("cancelling: blobs not yet started are left untouched…"))
		}
	default:
		end := min(len(d.body), d.scroll+room)
		body = append(body, d.body[d.scroll:end]...)
		if d.act == actAck && d.phase == phaseConfirm {
			body = append(body, "", d.note.View(), fmt.Sprintf("for: %s  (← → to change)", textfmt.Duration(ackDurations[d.ackFor])))
		}
	}
	more := ""
	if len(d.body) > room && d.phase != phaseRunning {
		more = st.Dim.Render(fmt.Sprintf("  lines %d–%d of %d", d.scroll+1, min(len(d.body), d.scroll+room), len(d.body)))
	}
	body = append(body, "", keys+more)
	for i := range body {
		body[i] = fit(body[i], d.inner, 1)
	}
	if len(body) > d.h-2 { // never taller than the screen: the key line stays
		body = append(body[:d.h-3], body[len(body)-1])
	}
	box := st.Box.Render(strings.Join(body, "\n"))
	return placeOver(screen, box, d.w, d.h)
}

// placeOver centres box on screen, replacing the lines it covers.
func placeOver(screen, box string, w, h int) string {
	lines := strings.Split(screen, "\n")
	bl := strings.Split(box, "\n")
	bw := 0
	for _, l := range bl {
		bw = max(bw, textfmt.Width(l))
	}
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
