package tui

import (
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// action is what a dialog asks about.
type action int

const (
	actDrain action = iota
	actRestore
	actAck
	actClearAck
)

var (
	actionNames = [...]string{actDrain: "Drain", actRestore: "Restore", actAck: "Acknowledge", actClearAck: "Clear the acknowledgement"}
	actionVerbs = [...]string{actDrain: "drain", actRestore: "restore", actAck: "acknowledge", actClearAck: "clear"}
)

// Every dialog speaks one grammar: enter confirms and esc cancels; where no text field has the focus, y and n do
// too; ↑↓ pgup pgdn scroll a body taller than the screen; q quits. Every dialog names the blobs it touches and what
// limited it to them; its key line lists only the keys that apply.

// box is what every dialog draws: a title, a body that scrolls (a pager), lines pinned below it (a field), and
// the key line of its scope.
type box struct {
	e     *env
	title string
	body  pager
	w, h  int
	inner int
}

func newBox(e *env, title string) box { return box{e: e, title: title, body: newPager(e.st)} }

// SetSize sizes the box for the screen it sits on: at most 100 columns inside, the rest of the height for the
// body after the title, the pinned lines and the key line.
func (b *box) SetSize(w, h int) {
	b.w, b.h = w, h
	b.inner = max(20, min(w-6, 100))
	b.body.SetSize(b.inner, 1)
}

// render draws the box: title, body (as tall as it needs, up to what the screen leaves), pinned lines, keys.
func (b *box) render(pinned []string, keys *scope) string {
	st := b.e.st
	room := max(1, b.h-2-4-len(pinned)) // the border, title and gaps, the key line
	b.body.SetSize(b.inner, min(room, max(1, len(b.body.lines))))
	var out []string
	out = append(out, st.Title.Render(textfmt.Truncate(b.title, b.inner, "…")), "")
	out = append(out, strings.Split(b.body.View(), "\n")...)
	out = append(out, pinned...)
	line := keyLine(st, b.e.painted, keys.hints(), nil, b.inner-14)
	if len(b.body.lines) > b.body.h {
		line += st.Dim.Render(fmt.Sprintf("  lines %d–%d of %d", b.body.vp.YOffset+1, min(len(b.body.lines), b.body.vp.YOffset+b.body.h), len(b.body.lines)))
	}
	out = append(out, "", line)
	for i := range out {
		out[i] = fit(out[i], b.inner, 1)
	}
	return st.Box.Render(strings.Join(out, "\n"))
}

// scrollKeys are the keys that move a dialog's body.
func (b *box) scrollKeys() []binding {
	return []binding{
		bind([]string{"up", "k"}, "↑/k", "scroll up", func() tea.Cmd { b.body.scroll(-1); return nil }),
		bind([]string{"down", "j"}, "↓/j", "scroll down", func() tea.Cmd { b.body.scroll(1); return nil }),
		bind([]string{"pgup"}, "pgup", "page up", func() tea.Cmd { b.body.scroll(-b.body.h); return nil }),
		bind([]string{"pgdown"}, "pgdn", "page down", func() tea.Cmd { b.body.scroll(b.body.h); return nil }),
		bind([]string{"home", "g"}, "g", "top", func() tea.Cmd { b.body.toTop(); return nil }),
		bind([]string{"end", "G"}, "G", "bottom", func() tea.Cmd { b.body.toBottom(); return nil }),
	}
}

// limitLines say first what limits the action to these blobs (the selection, the cursor's row, this blob).
func limitLines(e *env, limit string) []string {
	out := []string{"On " + e.estate + ".", ""} // every question names the estate it writes to
	if limit == "" {
		return out
	}
	return append(out, e.st.Warn.Render("It takes "+limit+"."), "")
}

// nameLines name the blobs an action touches: the first few, then the rest, one per line (the body scrolls).
func nameLines(e *env, head string, names []string) []string {
	if len(names) == 0 {
		return nil
	}
	out := []string{"", e.st.Header.Render(fmt.Sprintf("%s (%d):", head, len(names)))}
	for _, n := range names {
		out = append(out, "  "+textfmt.Printable(n))
	}
	return out
}

// leftLines list the blobs an action leaves where they are, each with why (in the front end's words).
func leftLines(e *env, head string, left []rules.Result) []string {
	if len(left) == 0 {
		return nil
	}
	out := []string{"", e.st.Header.Render(fmt.Sprintf("%s (%d):", head, len(left)))}
	for _, r := range left {
		out = append(out, "  "+textfmt.Printable(r.Name), fmt.Sprintf("    %s: %s", r.Outcome, present.Reason(r.Reason, present.ForceKey)))
	}
	return out
}

// confirmKeys are a question's keys: y or enter confirms (off with why), n or esc cancels, q quits.
func confirmKeys(b *box, confirm func() tea.Cmd, off func() string) []binding {
	return append([]binding{
		bind([]string{"y", "enter"}, "y", "confirm", confirm).footer().when(off),
		bind([]string{"esc", "n"}, "esc", "cancel (n too)", func() tea.Cmd { return b.e.send(closeMsg{}) }).footer(),
		bind([]string{"q", "ctrl+c"}, "q", "quit", func() tea.Cmd { return b.e.send(quitMsg{}) }),
	}, b.scrollKeys()...)
}

// drainDialog asks before a drain: what it re-uploads (named), what it leaves and why, what the replay will then
// do, and — per subscription whose handler still failed within the TTL — that those events will dead-letter again.
type drainDialog struct {
	box
	plan *rules.DrainPlan
	keys *scope
}

func newDrainDialog(e *env, items []rules.Item, limit string, ready []rules.Readiness) (*drainDialog, string) {
	plan := e.cfg.PlanDrain(e.snap, items, rules.DrainOptions{})
	f := plan.Forecast
	if !f.Asks() {
		// Asking "drain 0 blobs?" would ask for nothing: say why nothing is drained instead.
		var why []string
		for _, r := range f.Left {
			why = append(why, fmt.Sprintf("%s: %s", textfmt.Printable(rules.FileOf(r.Name)), present.Reason(r.Reason, present.ForceKey)))
		}
		return nil, "nothing to drain: " + strings.Join(why, "; ")
	}
	d := &drainDialog{box: newBox(e, present.DrainQuestion(f, "stranded blob(s)")), plan: plan}
	drained := plan.Taken
	lines := limitLines(e, limit)
	mine := rules.ReadinessOf(ready, drained)
	if l := present.LastDeadLetters(mine, e.snap.Now); l != "" {
		lines = append(lines, l, "")
	}
	if e.witness != nil {
		subs := make([]string, 0, len(mine))
		for _, r := range mine {
			subs = append(subs, r.Subscription)
		}
		if ls := present.WitnessLines(*e.witness, subs); len(ls) > 0 {
			lines = append(append(lines, ls...), "")
		}
	}
	lines = append(lines, readinessWarnings(e, drained, ready)...)
	lines = append(lines, present.ForecastLines(f)...)
	lines = append(lines, nameLines(e, "It re-uploads", f.Names)...)
	lines = append(lines, leftLines(e, "It leaves", f.Left)...)
	lines = append(lines, "", "Each write is conditional on the ETag read: a blob that changed or vanished is skipped, never resurrected.")
	d.body.setLines(lines)
	d.keys = &scope{name: "drain?", modal: true, bindings: confirmKeys(&d.box, d.confirm, nil)}
	return d, ""
}

// readinessWarnings warn, per subscription of the blobs a drain takes whose newest dead letter is inside the TTL
// window, that its handler still failed then: drained, those events dead-letter again one attempt further on.
func readinessWarnings(e *env, items []rules.Item, ready []rules.Readiness) []string {
	var out []string
	for _, w := range present.ReadinessWarnings(e.cfg, items, ready, e.snap.Now) {
		out = append(out, e.st.Warn.Render(w))
	}
	if e.witness != nil {
		for _, w := range present.WitnessWarnings(*e.witness, items) {
			out = append(out, e.st.Warn.Render(w))
		}
	}
	if len(out) > 0 {
		out = append(out, "")
	}
	return out
}

func (d *drainDialog) confirm() tea.Cmd {
	e, plan := d.e, d.plan
	intent := make([]store.BlobInfo, len(plan.Items))
	for i := range plan.Items {
		intent[i] = plan.Items[i].Info
	}
	return d.e.send(runMsg{&actionRun{act: actDrain, total: len(plan.Items), intent: intent, run: func(ctx contextT, progress func(rules.Result)) ([]rules.Result, error) {
		return replay.DrainAsPlanned(ctx, e.loader.Container, e.cfg, plan, rules.DrainOptions{ReadOnly: e.readOnly, Concurrency: e.concurrency, Progress: progress})
	}}})
}

func (d *drainDialog) Update(tea.Msg) (component, tea.Cmd) { return d, nil }
func (d *drainDialog) Scope() *scope                       { return d.keys }
func (d *drainDialog) View() string                        { return d.render(nil, d.keys) }
func (d *drainDialog) overlay()                            {}

// restoreDialog reads each blob's restore plan first (replay.PreviewRestore), then asks: what it writes, refuses,
// cannot read, what --force (f) changes, and each blob's plan.
type restoreDialog struct {
	box
	items []rules.Item
	limit string
	plans *replay.RestorePreview
	force bool
	keys  *scope
}

type restorePlansMsg struct {
	d       *restoreDialog
	preview *replay.RestorePreview
}

func newRestoreDialog(e *env, items []rules.Item, limit string) *restoreDialog {
	d := &restoreDialog{box: newBox(e, fmt.Sprintf("Reading the restore plans of %d quarantined blob(s)…", len(items))), items: items, limit: limit}
	d.body.setLines(append(limitLines(e, limit), "reading the restore plan…"))
	d.keys = &scope{name: "restore?", modal: true, bindings: append(confirmKeys(&d.box, d.confirm, d.confirmOff),
		bind([]string{"f"}, "f", "force: restore the refused blobs too, on or off (--force)", d.toggleForce).footer().when(d.forceOff))}
	return d
}

// read plans the restores in a command.
func (d *restoreDialog) read() tea.Cmd {
	l, ctx := d.e.loader, d.e.ctx
	infos := make([]store.BlobInfo, len(d.items))
	for i := range d.items {
		infos[i] = d.items[i].Info
	}
	return func() tea.Msg { return restorePlansMsg{d: d, preview: l.PreviewRestore(ctx, infos, false)} }
}

func (d *restoreDialog) Update(msg tea.Msg) (component, tea.Cmd) {
	if m, ok := msg.(restorePlansMsg); ok && m.d == d {
		d.plans = m.preview
		d.setLines()
	}
	return d, nil
}

func (d *restoreDialog) confirmOff() string {
	switch {
	case d.plans == nil:
		return "still reading the restore plan"
	case d.plans.Counts().Writes == 0 && d.plans.Counts().Forceable > 0 && !d.force:
		return "nothing would be restored: every blob here is refused (f forces)"
	case d.plans.Counts().Writes == 0:
		return "nothing would be restored: every blob here is refused or gone"
	}
	return ""
}

func (d *restoreDialog) forceOff() string {
	switch {
	case d.plans == nil:
		return "still reading the restore plan"
	case d.plans.Counts().Forceable == 0:
		return "nothing here is refused that --force would restore"
	}
	return ""
}

func (d *restoreDialog) toggleForce() tea.Cmd {
	d.force = !d.force
	d.plans.SetForce(d.force)
	d.setLines()
	return nil
}

// setLines say what the restore will do — first what it moves, refuses, cannot read and what --force changes,
// then which blobs, then each blob's plan — and set the title to what it will write.
func (d *restoreDialog) setLines() {
	st, n := d.e.st, d.plans.Counts()
	d.title = present.RestoreQuestion(n.Writes, rules.Tally{rules.OutcomeRefused: n.Refused, rules.OutcomeFailed: n.Unreadable}, "quarantined blob(s)")
	lines := limitLines(d.e, d.limit)
	switch {
	case n.Forceable > 0 && !d.force:
		lines = append(lines, st.Warn.Render(fmt.Sprintf("%d blob(s) will be refused: press f to restore them anyway (--force)", n.Forceable)))
	case d.force && n.Forceable > 0:
		lines = append(lines, st.Warn.Render(fmt.Sprintf("--force: the %d refused blob(s) are restored too (where nothing resumes, the replay re-quarantines them)", n.Forceable)))
		if n.Lingering > 0 {
			lines = append(lines, st.Warn.Render(fmt.Sprintf("--force: %d of them still have their original at the root: restored, their events are at the root twice and the replay handles them twice", n.Lingering)))
		}
	}
	if n.Unreadable > 0 {
		lines = append(lines, st.Error.Render(fmt.Sprintf("%d blob(s) could not be read: left where they are and reported as failed (esc, then r again to retry)", n.Unreadable)))
	}
	if n.Writes > 0 {
		lines = append(lines, fmt.Sprintf("%d event(s) resume.", n.Resume))
	}
	if d.e.witness != nil {
		for _, w := range present.RestoreWitnessWarnings(*d.e.witness, d.plans.Resuming()) {
			lines = append(lines, st.Warn.Render(w))
		}
	}
	lines = append(lines, nameLines(d.e, "It restores", d.plans.Writes())...)
	lines = append(lines, leftLines(d.e, "It leaves", d.plans.Left())...)
	lines = append(lines, "", st.Header.Render("Each blob's plan:"))
	for i := range d.plans.Entries {
		en := &d.plans.Entries[i]
		if en.Detail == nil {
			continue
		}
		lines = append(lines, st.Bold.Render(textfmt.Printable(en.Name)))
		for _, l := range present.Explain(en.Detail, d.e.cfg) {
			lines = append(lines, "  "+textfmt.Printable(l))
		}
	}
	d.body.setLines(lines)
}

func (d *restoreDialog) confirm() tea.Cmd {
	// Only what the preview says it writes is restored, each copy held to the ETag its plan was read at: a copy
	// rewritten since the dialog showed it is skipped as changed, never restored unseen. The rest are reported
	// as the preview found them.
	e, names, left, previewed, force := d.e, d.plans.Writes(), d.plans.Left(), d.plans.Previewed(), d.force
	intent := make([]store.BlobInfo, len(names))
	for i, n := range names {
		intent[i] = store.BlobInfo{Name: n, ETag: previewed[n]}
	}
	return d.e.send(runMsg{&actionRun{act: actRestore, total: len(names) + len(left), left: left, intent: intent,
		run: func(ctx contextT, progress func(rules.Result)) ([]rules.Result, error) {
			res, err := replay.Restore(ctx, e.loader.Container, e.cfg, names, replay.RestoreOptions{ReadOnly: e.readOnly, Force: force,
				Concurrency: e.concurrency, Progress: progress, Previewed: previewed})
			return append(left, res...), err
		}}})
}

func (d *restoreDialog) Scope() *scope { return d.keys }
func (d *restoreDialog) View() string  { return d.render(nil, d.keys) }
func (d *restoreDialog) overlay()      {}

// ackDurations are what the ack dialog offers.
var ackDurations = []time.Duration{time.Hour, 4 * time.Hour, 24 * time.Hour, 72 * time.Hour, 7 * 24 * time.Hour}

// ackDialog asks for an acknowledgement's note and duration. The note is a text field (every printable key types,
// ←/→ move its cursor); tab moves to the duration, which ←/→ or +/- change; enter confirms from either.
type ackDialog struct {
	box
	p       rules.AckPreview
	act     action
	note    textInput
	ackFor  int
	onNote  bool
	choices []time.Duration
}

func newAckDialog(e *env, items []rules.Item, limit string) (*ackDialog, string) {
	p := e.cfg.PreviewAck(items, e.snap.Now)
	if len(p.Targets) == 0 {
		return nil, "nothing to acknowledge: an ack means nothing for the replay's archived records"
	}
	d := &ackDialog{box: newBox(e, ""), p: p, act: actAck, onNote: true, note: newTextInput("note: ", 180)}
	for _, c := range ackDurations {
		if c <= e.cfg.AckLimit() {
			d.choices = append(d.choices, c)
		}
	}
	d.ackFor = min(2, len(d.choices)-1) // a day
	if p.Clear {
		d.act, d.onNote = actClearAck, false
	}
	d.title = fmt.Sprintf("%s of %d blob(s)?", actionNames[d.act], len(p.Targets))
	if d.act == actAck {
		d.title = fmt.Sprintf("Acknowledge %d blob(s)?", len(p.Targets))
		d.note.Focus()
	}
	lines := limitLines(e, limit)
	if d.act == actAck {
		for i, x := range p.Expiring {
			if i == 3 {
				lines = append(lines, e.st.Warn.Render(fmt.Sprintf("… and %d more expiring blob(s): an ack silences none of them", len(p.Expiring)-3)))
				break
			}
			lines = append(lines, e.st.Warn.Render("EXPIRING: "+present.AckExpiringNote(x.Name, x.DeletesIn)))
		}
		if len(p.Expiring) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, "An acknowledged blob stays listed (dimmed) and raises no stranded, quarantine or stalled finding until the ack runs out or the blob changes; expiring, crash, malformed and untriggerable stay.",
			"It is kept in the blob's index tags, shared with everyone who looks; the blob's ETag and Last-Modified do not change.",
			fmt.Sprintf("By %s.", textfmt.Printable(e.by)))
	} else {
		lines = append(lines, "Every one of them is acknowledged: clearing makes them raise their findings again.")
	}
	names := make([]string, len(p.Targets))
	for i, t := range p.Targets {
		names[i] = t.Name
	}
	lines = append(lines, nameLines(e, "It takes", names)...)
	lines = append(lines, leftLines(e, "It leaves", p.Left)...)
	d.body.setLines(lines)
	return d, ""
}

func (d *ackDialog) Scope() *scope {
	confirm := bind([]string{"enter"}, "enter", "confirm", d.confirm).footer()
	cancel := bind([]string{"esc"}, "esc", "cancel", func() tea.Cmd { return d.e.send(closeMsg{}) }).footer()
	quit := bind([]string{"ctrl+c"}, "ctrl+c", "quit", func() tea.Cmd { return d.e.send(quitMsg{}) })
	if d.act == actClearAck {
		return &scope{name: "clear ack?", modal: true, bindings: confirmKeys(&d.box, d.confirm, nil)}
	}
	toDuration := bind([]string{"tab", "shift+tab"}, "tab", "duration: to the duration field", func() tea.Cmd { d.onNote = false; d.note.Blur(); return nil }).footer()
	if d.onNote {
		return &scope{name: "acknowledge: note", modal: true, typing: true, bindings: []binding{confirm, cancel, toDuration, quit}}
	}
	shorter := func() tea.Cmd { d.ackFor = max(0, d.ackFor-1); return nil }
	longer := func() tea.Cmd { d.ackFor = min(len(d.choices)-1, d.ackFor+1); return nil }
	return &scope{name: "acknowledge: duration", modal: true, bindings: append([]binding{confirm,
		bind([]string{"y"}, "y", "confirm", d.confirm),
		cancel,
		bind([]string{"n"}, "n", "cancel", func() tea.Cmd { return d.e.send(closeMsg{}) }),
		bind([]string{"left", "-"}, "←/-", "shorter", shorter).footer(),
		bind([]string{"right", "+", "="}, "→/+", "longer", longer).footer(),
		bind([]string{"tab", "shift+tab"}, "tab", "note: to the note field", func() tea.Cmd { d.onNote = true; return d.note.Focus() }).footer(),
		bind([]string{"q"}, "q", "quit", func() tea.Cmd { return d.e.send(quitMsg{}) }), quit}, d.scrollKeys()...)}
}

func (d *ackDialog) Update(msg tea.Msg) (component, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok && d.onNote {
		return d, d.note.update(k)
	}
	return d, nil
}

func (d *ackDialog) confirm() tea.Cmd {
	e, targets := d.e, d.p.Targets
	o := replay.AckOptions{Max: e.cfg.AckLimit(), Now: e.serviceNow(), By: e.by, Note: d.note.Value(), Clear: d.act == actClearAck, ReadOnly: e.readOnly}
	if d.act == actAck {
		o.For = d.choices[d.ackFor]
	}
	return d.e.send(runMsg{&actionRun{act: d.act, total: len(targets), intent: targets, run: func(ctx contextT, progress func(rules.Result)) ([]rules.Result, error) {
		o.Progress = progress
		return replay.Acknowledge(ctx, e.loader.Container, targets, o)
	}}})
}

func (d *ackDialog) View() string {
	if d.act == actClearAck {
		return d.render(nil, d.Scope())
	}
	dur := fmt.Sprintf("for: %s", textfmt.Duration(d.choices[d.ackFor]))
	if !d.onNote {
		dur = d.e.st.Cursor.Render(fmt.Sprintf("for: ‹ %s ›", textfmt.Duration(d.choices[d.ackFor])))
	}
	return d.render([]string{"", d.note.View(), dur}, d.Scope())
}

func (d *ackDialog) overlay() {}

// quitAsk asks before quitting while an action runs.
type quitAsk struct {
	box
	keys *scope
}

func newQuitAsk(e *env) *quitAsk {
	q := &quitAsk{box: newBox(e, "An action is running. Quit?")}
	q.body.setLines([]string{"Blobs not yet started are left untouched; the one in flight finishes."})
	q.keys = &scope{name: "quit?", modal: true, bindings: []binding{
		bind([]string{"y", "enter", "q", "ctrl+c"}, "y", "quit (the action is cancelled; blobs not started are untouched)", func() tea.Cmd { return q.e.send(forceQuitMsg{}) }).footer(),
		bind([]string{"esc", "n"}, "esc", "stay", func() tea.Cmd { return q.e.send(closeMsg{}) }).footer(),
	}}
	return q
}

func (q *quitAsk) Update(tea.Msg) (component, tea.Cmd) { return q, nil }
func (q *quitAsk) Scope() *scope                       { return q.keys }
func (q *quitAsk) View() string                        { return q.render(nil, q.keys) }
func (q *quitAsk) overlay()                            {}

// forceQuitMsg quits without asking.
type forceQuitMsg struct{}
