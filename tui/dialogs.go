package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
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
		line += st.Dim.Render(fmt.Sprintf("  lines %d–%d of %d", b.body.vp.YOffset()+1, min(len(b.body.lines), b.body.vp.YOffset()+b.body.h), len(b.body.lines)))
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

// drainDialog asks before a drain, showing what its preview says (session.PreviewDrain: the same the command
// line prints) — what it re-uploads (named), what it leaves and why, what the replay will then do, and, per
// subscription it takes whose handler still fails, that those events will dead-letter again.
type drainDialog struct {
	box
	preview *session.DrainPreview
	keys    *scope
	// canary: drain one blob per subscription first and the rest only where its handler delivered (c); pace:
	// the index in paces of the rate the drain goes at (p).
	canary bool
	pace   int
	lines  []string
}

// paces are the rates p steps through, blobs a second (0: as fast as the concurrency allows).
var paces = []float64{0, 1, 5, 20}

// canaryWait is how long the dashboard's canary drain waits for the canaries' word (drain --canary-wait's
// default is longer: a command can wait unattended, a screen has an operator in front of it).
const canaryWait = 30 * time.Minute

func newDrainDialog(e *env, items []rules.Item, limit string) (*drainDialog, string) {
	wit := rules.WitnessReport{}
	if e.witness != nil {
		wit = *e.witness
	}
	p := e.sess.PreviewDrain(e.snap, items, rules.DrainOptions{}, wit, present.ForceKey)
	if !p.Said.Asks {
		// Asking "drain 0 blobs?" would ask for nothing: say why nothing is drained instead.
		var why []string
		for _, r := range p.Left {
			why = append(why, fmt.Sprintf("%s: %s", textfmt.Printable(rules.FileOf(r.Name)), present.Reason(r.Reason, present.ForceKey)))
		}
		return nil, "nothing to drain: " + strings.Join(why, "; ")
	}
	if n := len(p.Names); n < len(items) && len(items) > 1 {
		// the question counts what the drain takes; the limit says it of what was given, so the two agree
		limit = fmt.Sprintf("%d of %s; it leaves %d (listed below)", n, limit, len(items)-n)
	}
	d := &drainDialog{box: newBox(e, p.Said.Question), preview: p}
	d.lines = append(limitLines(e, limit), saidLines(e, p.Said)...)
	d.body.setLines(d.lines)
	d.keys = &scope{name: "drain?", modal: true, bindings: append(confirmKeys(&d.box, d.confirm, nil),
		bind([]string{"c"}, "c", "canary first: one blob per subscription, the rest only where its handler delivered (on/off)", d.toggleCanary).footer(),
		bind([]string{"p"}, "p", "pace: 1, 5 or 20 blobs a second, in waves that stop a subscription whose handler fails again, or unpaced", d.stepPace).footer())}
	return d, ""
}

// stepPace steps the drain's pace: unpaced, 1, 5, 20 blobs a second, unpaced again.
func (d *drainDialog) stepPace() tea.Cmd {
	d.pace = (d.pace + 1) % len(paces)
	d.relayout()
	return nil
}

// toggleCanary turns the canary drain on or off, and says what it does.
func (d *drainDialog) toggleCanary() tea.Cmd {
	d.canary = !d.canary
	d.relayout()
	return nil
}

// relayout says, above the question's lines, what c and p chose.
func (d *drainDialog) relayout() {
	var head []string
	if d.canary {
		head = append(head, d.e.st.Warn.Render(fmt.Sprintf("Canary first: one blob per subscription, then — once Event Grid (or, without it, the container) says its handler delivered — the rest of that subscription; a subscription whose canary fails, or says nothing within %s, stays stranded.", textfmt.Duration(canaryWait))))
	}
	if rate := paces[d.pace]; rate > 0 {
		n := len(d.preview.Targets)
		head = append(head, d.e.st.Warn.Render(fmt.Sprintf("Paced: %s blob(s) a second, in waves of %d — about %s for %d blob(s); between two waves a subscription whose handler Event Grid says fails again is left stranded.",
			strconv.FormatFloat(rate, 'g', 3, 64), session.WaveOf(rate), textfmt.Duration(time.Duration(float64(n)/rate*float64(time.Second)).Round(time.Second)), n)))
	}
	if len(head) > 0 {
		head = append(head, "")
	}
	d.body.setLines(append(head, d.lines...))
}

// saidLines lay out what an action's preview says: facts as they are, warnings in the warning style set apart by
// a blank line, a blank line before each list and the closing note.
func saidLines(e *env, s present.Said) []string {
	var out []string
	for i, l := range s.Lines {
		if prev := s.Lines[max(0, i-1)].Kind; i > 0 && (l.Kind == present.LineHeading || l.Kind == present.LineNote || (l.Kind == present.LineWarn) != (prev == present.LineWarn)) {
			out = append(out, "")
		}
		switch l.Kind {
		case present.LineWarn:
			out = append(out, e.st.Warn.Render(l.Text))
		case present.LineHeading:
			out = append(out, e.st.Header.Render(l.Text))
		case present.LineName:
			out = append(out, "  "+l.Text)
		case present.LineLeft:
			name, why, _ := strings.Cut(l.Text, ": ")
			out = append(out, "  "+name, "    "+why)
		default:
			out = append(out, l.Text)
		}
	}
	return out
}

func (d *drainDialog) confirm() tea.Cmd {
	s, p := d.e.sess, d.preview
	if d.canary {
		cp := s.PlanCanary(d.e.snap, p, present.ForceKey) // (planned here, from the snapshot; run without it)
		total := len(cp.Canaries.Items) + len(cp.Left)
		for _, r := range cp.Rest {
			total += len(r.Items)
		}
		return d.e.send(runMsg{&actionRun{act: actDrain, total: total, rate: paces[d.pace], run: func(ctx contextT, r session.Run) (session.Done, error) {
			done, _, err := s.RunCanary(ctx, cp, canaryWait, r)
			return done, err
		}}})
	}
	return d.e.send(runMsg{&actionRun{act: actDrain, total: len(p.Items), rate: paces[d.pace], run: func(ctx contextT, r session.Run) (session.Done, error) {
		return s.Drain(ctx, p, r)
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
	plans *session.RestorePreview
	force bool
	keys  *scope
}

type restorePlansMsg struct {
	d       *restoreDialog
	preview *session.RestorePreview
}

func newRestoreDialog(e *env, items []rules.Item, limit string) *restoreDialog {
	d := &restoreDialog{box: newBox(e, fmt.Sprintf("Reading the restore plans of %d quarantined blob(s)…", len(items))), items: items, limit: limit}
	d.body.setLines(append(limitLines(e, limit), "reading the restore plan…"))
	d.keys = &scope{name: "restore?", modal: true, bindings: append(confirmKeys(&d.box, d.confirm, d.confirmOff),
		bind([]string{"f"}, "f", "force: restore the refused blobs too, on or off (--force)", d.toggleForce).footer().when(d.forceOff))}
	return d
}

// read plans the restores in a command (session.PreviewRestore: the command line's preview too).
func (d *restoreDialog) read() tea.Cmd {
	s, ctx, snap := d.e.sess, d.e.ctx, d.e.snap
	names := make([]string, len(d.items))
	for i := range d.items {
		names[i] = d.items[i].Name
	}
	wit := rules.WitnessReport{}
	if d.e.witness != nil {
		wit = *d.e.witness
	}
	return func() tea.Msg {
		return restorePlansMsg{d: d, preview: s.PreviewRestore(ctx, snap, names, false, wit, nil)}
	}
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
	for _, w := range d.plans.Warnings {
		lines = append(lines, st.Warn.Render(w))
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
	s, p, snap := d.e.sess, d.plans, d.e.snap
	return d.e.send(runMsg{&actionRun{act: actRestore, total: len(p.Writes()) + len(p.Left()), left: p.Left(),
		run: func(ctx contextT, r session.Run) (session.Done, error) { return s.Restore(ctx, p, snap, r) }}})
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
	p := e.sess.PreviewAck(items, e.snap.Now)
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
	// (y confirms here as in every other question; enter too — in the note field only enter does, y types)
	return &scope{name: "acknowledge: duration", modal: true, bindings: append([]binding{
		bind([]string{"y", "enter"}, "y", "confirm", d.confirm).footer(),
		cancel,
		bind([]string{"n"}, "n", "cancel", func() tea.Cmd { return d.e.send(closeMsg{}) }),
		bind([]string{"left", "-"}, "←/-", "shorter", shorter).footer(),
		bind([]string{"right", "+", "="}, "→/+", "longer", longer).footer(),
		bind([]string{"tab", "shift+tab"}, "tab", "note: to the note field", func() tea.Cmd { d.onNote = true; return d.note.Focus() }).footer(),
		bind([]string{"q"}, "q", "quit", func() tea.Cmd { return d.e.send(quitMsg{}) }), quit}, d.scrollKeys()...)}
}

func (d *ackDialog) Update(msg tea.Msg) (component, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && d.onNote {
		return d, d.note.update(k)
	}
	return d, nil
}

func (d *ackDialog) confirm() tea.Cmd {
	s, p := d.e.sess, d.p
	a := session.Ack{Now: d.e.serviceNow(), By: d.e.by, Note: d.note.Value(), Clear: d.act == actClearAck}
	if d.act == actAck {
		a.For = d.choices[d.ackFor]
	}
	return d.e.send(runMsg{&actionRun{act: d.act, total: len(p.Targets), run: func(ctx contextT, r session.Run) (session.Done, error) {
		return s.Acknowledge(ctx, p, a, r)
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
