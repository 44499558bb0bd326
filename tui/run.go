package tui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/progress"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// Run opens the dashboard on the terminal until the operator quits or ctx ends. The program asks the terminal for
// mouse events (clicks and the wheel, as cells).
func Run(ctx context.Context, o Options) error {
	m := New(o)
	_, err := tea.NewProgram(m, tea.WithContext(ctx)).Run()
	m.stop()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// contextT is the context an action runs under.
type contextT = context.Context

// actionRun is a confirmed action: what it is, how many blobs it reports on, those already decided (left as the
// preview found them), and the run itself — a session call, which records it (its intent, then its outcome).
type actionRun struct {
	act   action
	total int
	left  []rules.Result
	run   func(ctx contextT, r session.Run) (session.Done, error)
	// rate paces a drain (blobs a second; 0: unpaced): its run says what is left and when it will be done.
	rate float64
}

// actionKeys are the keys that ask for each of the dashboard's actions (the record says which asked).
var actionKeys = [...]string{actDrain: "d", actRestore: "r", actAck: "a", actClearAck: "a"}

// sessionRun is how the dashboard runs an action: its concurrency, progress as each blob finishes, and the key
// that asked with the filter the blobs were chosen under, for the record — as a command line's --filter words
// are kept (they are not secrets).
func (e *env) sessionRun(act action, progress func(rules.Result)) session.Run {
	via := "dashboard: key " + actionKeys[act]
	if e.filter != nil {
		if f := strings.TrimSpace(e.filter()); f != "" {
			via += " · filter " + strconv.Quote(f)
		}
	}
	return session.Run{Concurrency: e.concurrency, Progress: progress, Via: via}
}

type phase int

const (
	phaseRunning phase = iota
	phaseResults
)

type (
	progressMsg struct {
		id int
		r  rules.Result
	}
	// sayMsg is what a run says as it goes: a canary drain's waits and its canaries' words.
	sayMsg struct {
		id   int
		text string
	}
	actionDoneMsg struct {
		id      int
		results []rules.Result
		err     error
		// warned says what the record could not keep (a shared record refused: kept locally).
		warned []string
	}
)

// runView is an action under way — its progress, cancellable (esc: nothing after this is touched) — and then its
// results, one blob a line: enter on one opens the blob where it is now (a restored copy under its new name).
type runView struct {
	box
	id        int
	run       *actionRun
	phase     phase
	done      int
	counts    rules.Tally
	results   []rules.Result
	cursor    int
	bar       progress.Model
	cancel    context.CancelFunc
	cancelled bool
	ch        chan tea.Msg
	// startedAt is the service time the action started at; fates are what became of each blob it wrote since,
	// as of the latest listing (followMsg), "" where there is nothing to follow.
	startedAt time.Time
	fates     []string
	// said is what the run said as it went (sayMsg), the latest last.
	said []string
}

func newRunView(e *env, run *actionRun, id int) *runView {
	r := &runView{box: newBox(e, actionNames[run.act]+"…"), id: id, run: run, counts: rules.Tally{},
		bar: progress.New(progress.WithDefaultBlend(), progress.WithFillCharacters('█', '░'))}
	for _, x := range run.left {
		r.done++
		r.counts[x.Outcome]++
	}
	return r
}

func (r *runView) SetSize(w, h int) {
	r.box.SetSize(w, h)
	r.bar.SetWidth(min(60, r.inner))
}

// start runs the action in a goroutine; its progress and its end come back through a channel read by a command,
// one message at a time.
func (r *runView) start() tea.Cmd {
	ctx, cancel := context.WithCancel(r.e.ctx)
	r.cancel, r.ch = cancel, make(chan tea.Msg, 64)
	r.startedAt = r.e.serviceNow()
	id, run, e := r.id, r.run, r.e
	// (made here, on the program's goroutine: it reads the root's filter)
	sr := e.sessionRun(run.act, func(x rules.Result) { r.ch <- progressMsg{id, x} })
	sr.Say, sr.Rate = func(text string) { r.ch <- sayMsg{id, text} }, run.rate
	go func() {
		// The session records the intent before anything is written (an intent that cannot be written locally
		// stops the action, said as its error) and the outcome after; a shared record that refused a line is said
		// in the results, and kept locally.
		done, err := run.run(ctx, sr)
		r.ch <- actionDoneMsg{id: id, results: done.Results, err: err, warned: done.Warnings}
	}()
	return waitFor(r.ch)
}

func (r *runView) cancelRun() {
	if r.cancel != nil && r.phase == phaseRunning {
		r.cancelled = true
		r.cancel()
	}
}

func (r *runView) Update(msg tea.Msg) (component, tea.Cmd) {
	if _, ok := msg.(followMsg); ok && r.phase == phaseResults {
		r.follow()
		return r, nil
	}
	if p, ok := msg.(progressMsg); ok && p.id == r.id {
		r.done++
		r.counts[p.r.Outcome]++
		return r, waitFor(r.ch)
	}
	if s, ok := msg.(sayMsg); ok && s.id == r.id {
		// What it waits for is said again as it changes: the latest stands alone, never beside the one it replaced.
		if strings.HasPrefix(s.text, session.WaitingPrefix) {
			r.said = slices.DeleteFunc(r.said, func(x string) bool { return strings.HasPrefix(x, session.WaitingPrefix) })
		}
		r.said = append(r.said, s.text)
		return r, waitFor(r.ch)
	}
	return r, nil
}

// finish shows the results of the run, and returns the one-line tally for the status line.
func (r *runView) finish(msg actionDoneMsg) string {
	r.phase, r.results, r.cursor = phaseResults, msg.results, 0
	r.title = actionNames[r.run.act] + " finished"
	tally := rules.TallyOf(msg.results)
	var lines []string
	switch {
	case msg.err != nil:
		lines = []string{r.e.st.Error.Render(textfmt.Printable(msg.err.Error()))}
	default:
		lines = []string{present.TallyLine(tally, false) + " · on " + r.e.estate}
		if r.cancelled && tally[rules.OutcomeCancelled] == 0 {
			lines = append(lines, r.e.st.Warn.Render(fmt.Sprintf("The %s finished before the cancel arrived: every blob was handled.", actionVerbs[r.run.act])))
		}
	}
	for _, w := range msg.warned {
		lines = append(lines, r.e.st.Warn.Render(textfmt.Printable(w)))
	}
	for _, s := range r.said {
		if strings.HasPrefix(s, "canary ") { // (what each canary told stays; what it waited for does not)
			lines = append(lines, textfmt.Printable(s))
		}
	}
	r.body.setLines(lines)
	return present.TallyLine(tally, false)
}

func (r *runView) Scope() *scope {
	if r.phase == phaseRunning {
		return &scope{name: "running", modal: true, bindings: []binding{
			bind([]string{"esc"}, "esc", "cancel: nothing after this is touched", func() tea.Cmd { r.cancelRun(); return nil }).footer(),
			bind([]string{"q", "ctrl+c"}, "q", "quit", func() tea.Cmd { return r.e.send(quitMsg{}) }).footer(),
		}}
	}
	move := func(n int) func() tea.Cmd {
		return func() tea.Cmd { r.cursor = max(0, min(len(r.results)-1, r.cursor+n)); return nil }
	}
	return &scope{name: "results", modal: true, bindings: []binding{
		bind([]string{"enter"}, "enter", "open the blob where it is now", r.open).footer().when(func() string {
			if len(r.results) == 0 {
				return "no blob to open"
			}
			return ""
		}),
		bind([]string{"esc"}, "esc", "close (L: the record keeps them)", func() tea.Cmd { return r.e.send(closeMsg{}) }).footer(),
		bind([]string{"up", "k"}, "↑/k", "previous", move(-1)),
		bind([]string{"down", "j"}, "↓/j", "next", move(1)),
		bind(nil, "↑↓", "move", nil).footer(), // (the footer says both ways in one: either may be the only one that moves)
		bind([]string{"pgup"}, "pgup", "page up", func() tea.Cmd { return move(-r.listHeight())() }),
		bind([]string{"pgdown"}, "pgdn", "page down", func() tea.Cmd { return move(r.listHeight())() }),
		bind([]string{"home", "g"}, "g", "first", move(-len(r.results))),
		bind([]string{"end", "G"}, "G", "last", move(len(r.results))),
		bind([]string{"q", "ctrl+c"}, "q", "quit", func() tea.Cmd { return r.e.send(quitMsg{}) }),
	}}
}

// follow works out, from the latest listing, what became of each blob the action wrote: the results answer "did
// it work?" on the screen that asked, as the evidence arrives.
func (r *runView) follow() {
	r.fates = make([]string, len(r.results))
	for i, x := range r.results {
		name := x.Name
		switch {
		case x.Outcome == rules.OutcomeRestored && x.Target != "":
			name = x.Target
		case x.Outcome != rules.OutcomeDrained:
			continue
		}
		w, err := replay.WhereIs(r.e.ctx, replay.Listed(r.e.snap), store.BlobInfo{Name: name, LastModified: r.startedAt}, r.startedAt)
		if err != nil {
			continue
		}
		pane := rules.PaneLive
		if j, ok := r.e.snap.Lookup(name); ok {
			pane = r.e.snap.Items[j].Pane
		}
		r.fates[i] = present.Fate(w, pane)
	}
}

// open shows the blob a result is about, where it is now: a restore's new copy, the drained blob.
func (r *runView) open() tea.Cmd {
	x := r.results[r.cursor]
	name := x.Name
	if x.Target != "" && x.Outcome == rules.OutcomeRestored {
		name = x.Target
	}
	return tea.Batch(r.e.send(closeMsg{}), r.e.send(openBlobMsg{name}))
}

// compact is result i's line at width w: whole when it fits; else its outcome and the blob's name cut in the middle,
// so the subscription and the GUID's head and tail — what the table shows — stay (the line under the cursor says
// the rest).
func (r *runView) compact(i int, line string, w int) string {
	if textfmt.Width(line) <= w {
		return line
	}
	x := r.results[i]
	head := fmt.Sprintf("%-13s ", x.Outcome)
	room := max(8, w-textfmt.Width(head))
	file := textfmt.Printable(rules.FileOf(x.Name))
	dir := textfmt.Printable(strings.TrimSuffix(x.Name, rules.FileOf(x.Name)))
	if textfmt.Width(file)+4 >= room { // the file alone: its GUID's head and tail
		return head + textfmt.ShortenMiddle(file, room)
	}
	return head + textfmt.ShortenMiddle(dir, room-textfmt.Width(file)) + file
}

// listHeight is how many results the box shows at once.
func (r *runView) listHeight() int { return max(1, r.h-2-6-len(r.body.lines)) }

func (r *runView) View() string {
	st := r.e.st
	if r.phase == phaseRunning {
		pinned := []string{r.bar.ViewAs(float64(r.done) / float64(max(1, r.run.total))), fmt.Sprintf("%d of %d done  %s", r.done, r.run.total, present.TallyLine(r.counts, false))}
		if rate := r.run.rate; rate > 0 {
			left := r.run.total - r.done
			pinned = append(pinned, fmt.Sprintf("paced at %s a second, in waves of %d: %d left, done in about %s", strconv.FormatFloat(rate, 'g', 3, 64),
				session.WaveOf(rate), left, textfmt.Duration(time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second))))
		}
		if r.cancelled {
			pinned = append(pinned, st.Warn.Render("cancelling: blobs not yet started are left untouched…"))
		}
		for _, s := range r.said[max(0, len(r.said)-6):] {
			pinned = append(pinned, strings.Split(textfmt.Wrap(textfmt.Printable(s), max(1, r.inner-2), " "), "\n")...)
		}
		r.body.setLines(nil)
		return r.render(pinned, r.Scope())
	}
	// One line a result, cut in the middle so both ends of a name show; the result under the cursor whole,
	// wrapped — a restored copy's new name is what the operator may need to copy.
	lines := present.ResultLinesFor(r.results, false, present.ForceKey)
	for i := range lines {
		if i < len(r.fates) && r.fates[i] != "" {
			lines[i] += " → now " + r.fates[i]
		}
	}
	if len(lines) == 0 {
		return r.render(nil, r.Scope())
	}
	h, w := r.listHeight(), r.inner-2
	cur := strings.Split(textfmt.Wrap(textfmt.Printable(lines[min(r.cursor, len(lines)-1)]), w, "/-. "), "\n")
	rows := max(1, h-len(cur)+1) // the cursor's result takes len(cur) of the h lines
	top := max(0, min(r.cursor-rows/2, len(lines)-rows))
	var pinned []string
	for i := top; i < min(len(lines), top+rows); i++ {
		style, mark := lipgloss.NewStyle(), "  "
		if strings.HasPrefix(lines[i], string(rules.OutcomeFailed)) {
			style = st.Error
		}
		if i != r.cursor {
			pinned = append(pinned, style.Render(mark+textfmt.Cell(r.compact(i, lines[i], w), w)))
			continue
		}
		for j, l := range cur {
			mark = "  "
			if j == 0 {
				mark = "▸ "
			}
			pinned = append(pinned, st.Cursor.Render(mark+l))
		}
	}
	if len(lines) > rows {
		pinned = append(pinned, st.Dim.Render(fmt.Sprintf("  result %d of %d", r.cursor+1, len(lines))))
	}
	return r.render(pinned, r.Scope())
}

func (r *runView) overlay() {}

// textInput is a one-line text field: every printable key types, ←/→ move the cursor.
type textInput struct{ textinput.Model }

func newTextInput(prompt string, limit int) textInput {
	in := newInput()
	in.Prompt, in.CharLimit = prompt, limit
	return textInput{in}
}

func (t *textInput) update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	t.Model, cmd = t.Model.Update(msg)
	return cmd
}
