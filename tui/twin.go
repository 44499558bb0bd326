package tui

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/deadletter/deadletter/internal/textfmt"
)

// Rehearsal is a running rehearsal twin's controls (the demo passes its twin's): the t screen shows its clock,
// script and account and changes them. Every method but Toggle may wait on the twin's step and runs in a command.
type Rehearsal interface {
	// Look reads the rehearsal as it stands, its account included.
	Look(ctx context.Context) (RehearsalLook, error)
	// Toggle pauses the clock or runs it again; it reports whether it is paused now. It does no I/O.
	Toggle() bool
	// SetSpeed runs the clock at speed (twin seconds per second) and returns the speed it took.
	SetSpeed(speed float64) float64
	// Jump runs the rehearsal ahead by d at once.
	Jump(ctx context.Context, d time.Duration) error
	// Change brings who (a subscription, or "replay") down with status until further notice, or up, from now.
	Change(who string, down bool, status int) error
}

// RehearsalLook is the rehearsal as Look read it.
type RehearsalLook struct {
	Clock  time.Time
	Speed  float64
	Paused bool
	// Script is every window of the script, in time order.
	Script []RehearsalWindow
	// Who are the subscriptions of the script, then "replay": what the screen can bring down or up.
	Who []string
	// Account is the account of every event, in one line; Balanced whether it adds up.
	Account  string
	Balanced bool
	Source   string
}

// RehearsalWindow is one stretch of the script when a handler (or the replay) is down.
type RehearsalWindow struct {
	Who      string
	From, To time.Time // To zero: until further notice
	Status   int
	Outcome  string
	Why      string
}

// twinScreen is the t screen: the rehearsal's clock, its script and its account, with their keys.
type twinScreen struct {
	e      *env
	r      Rehearsal
	text   pager
	look   RehearsalLook
	err    string
	cursor int
	seq    int
	keys   *scope
	// wantSpeed is the speed the last + or - asked for (0: none yet): the next press doubles or halves it, not
	// the last look's, so presses faster than the twin answers are none of them lost.
	wantSpeed float64
}

// twinSpeedMsg is a speed set: asked want, the twin took got.
type twinSpeedMsg struct{ want, got float64 }

type twinLookMsg struct {
	seq  int
	look RehearsalLook
	err  error
}

// twinDoneMsg is an action on the rehearsal finished: said on the status line, then looked at again.
type twinDoneMsg struct {
	said string
	err  error
}

func newTwinScreen(e *env, r Rehearsal) *twinScreen {
	ts := &twinScreen{e: e, r: r, text: newPager(e.st)}
	ts.keys = &scope{name: "rehearsal", bindings: []binding{
		bind([]string{"esc", "t"}, "esc", "back: close the rehearsal screen", func() tea.Cmd { return ts.e.send(closeMsg{}) }).footer(),
		bind([]string{"p"}, "p", "pause the rehearsal's clock, or run it again", ts.toggle),
		bind([]string{"+", "="}, "+", "faster: the clock at twice its speed", func() tea.Cmd { return ts.speed(2) }).footer(),
		bind([]string{"-"}, "-", "slower: the clock at half its speed", func() tea.Cmd { return ts.speed(0.5) }).footer(),
		bind([]string{"f"}, "f", "+15m: jump ahead 15 minutes", func() tea.Cmd { return ts.jump(15 * time.Minute) }).footer(),
		bind([]string{"F"}, "F", "+1h: jump ahead an hour", func() tea.Cmd { return ts.jump(time.Hour) }),
		bind([]string{"up", "k"}, "↑/k", "previous subscription", func() tea.Cmd { ts.move(-1); return nil }),
		bind([]string{"down", "j"}, "↓/j", "next subscription", func() tea.Cmd { ts.move(1); return nil }),
		// b breaks a handler: d drains everywhere else, and one key must not mean both (issue 46).
		bind([]string{"b"}, "b", "break: the chosen handler fails (503) from now, until further notice", func() tea.Cmd { return ts.change(true) }).footer(),
		bind([]string{"u"}, "u", "up: the chosen handler answers from now", func() tea.Cmd { return ts.change(false) }).footer(),
		bind([]string{"d"}, "d", "drains on the blob table (esc): here it changes nothing — b breaks a handler", func() tea.Cmd {
			return ts.e.status("d drains on the blob table (esc first); here b brings the chosen handler down, u up")
		}),
	}}
	return ts
}

// start is the screen's first look.
func (ts *twinScreen) start() tea.Cmd { return ts.refresh() }

func (ts *twinScreen) refresh() tea.Cmd {
	ts.seq++
	seq, r, ctx := ts.seq, ts.r, ts.e.ctx
	return func() tea.Msg {
		l, err := r.Look(ctx)
		return twinLookMsg{seq: seq, look: l, err: err}
	}
}

func (ts *twinScreen) toggle() tea.Cmd {
	said := "the rehearsal's clock runs again"
	if ts.r.Toggle() {
		said = "the rehearsal's clock is paused (p runs it again)"
	}
	return tea.Batch(ts.e.status(said), ts.refresh())
}

func (ts *twinScreen) speed(by float64) tea.Cmd {
	base := ts.wantSpeed
	if base <= 0 {
		base = ts.look.Speed
	}
	want := base * by
	if want <= 0 {
		want = 60 * by
	}
	ts.wantSpeed = want
	return ts.setSpeed(want, base)
}

// setSpeed sets the speed in a command. Commands may finish in any order: the answer to one that is no longer
// the last asked sets the last asked again, so the twin ends at the last press whatever the order.
//
// A step past the twin's bound stays at the speed it started from (from): the speeds stay doubles and halves of
// one another, never a bound's odd fraction.
func (ts *twinScreen) setSpeed(want, from float64) tea.Cmd {
	r := ts.r
	return func() tea.Msg {
		got := r.SetSpeed(want)
		if got < want && from > 0 && from < want {
			got = r.SetSpeed(from)
		}
		return twinSpeedMsg{want: want, got: got}
	}
}

func (ts *twinScreen) jump(d time.Duration) tea.Cmd {
	r, ctx := ts.r, ts.e.ctx
	return func() tea.Msg {
		err := r.Jump(ctx, d)
		return twinDoneMsg{said: "the rehearsal jumped " + textfmt.Duration(d) + " ahead", err: err}
	}
}

func (ts *twinScreen) move(by int) {
	if n := len(ts.look.Who); n > 0 {
		ts.cursor = (ts.cursor + by + n) % n
	}
}

func (ts *twinScreen) change(down bool) tea.Cmd {
	if ts.cursor >= len(ts.look.Who) {
		return ts.e.status("no subscription to change yet")
	}
	r, who, e := ts.r, ts.look.Who[ts.cursor], ts.e
	if !down && ts.look.upFromNow(who) {
		return e.status(textfmt.Printable(who) + " is already up, and the script brings it down no more: nothing to change")
	}
	if down && ts.look.downFromNow(who) {
		return e.status(textfmt.Printable(who) + " is already down (503) until further notice: nothing to change")
	}
	return func() tea.Msg {
		said := who + " up from now"
		if down {
			said = who + " down (503) from now, until further notice"
		}
		// Recorded as the command line's twin script set is (session.RecordScriptChange): the intent first (a
		// local record that cannot be written stops the change), the outcome after.
		done, err := e.sess.RecordScriptChange(e.ctx, "dashboard: rehearsal screen", e.serviceNow, said, func() error { return r.Change(who, down, 503) })
		for _, w := range done.Warnings {
			said += " (" + w + ")"
		}
		return twinDoneMsg{said: said, err: err}
	}
}

func (ts *twinScreen) SetSize(w, h int) { ts.text.SetSize(w, h) }

func (ts *twinScreen) Scope() *scope { return ts.keys }

func (ts *twinScreen) Update(msg tea.Msg) (component, tea.Cmd) {
	switch msg := msg.(type) {
	case twinLookMsg:
		if msg.seq == ts.seq {
			ts.look, ts.err = msg.look, ""
			if msg.err != nil {
				ts.err = msg.err.Error()
			}
			ts.move(0)
		}
	case twinSpeedMsg:
		if msg.want != ts.wantSpeed { // (the last asked doubled or halved the one before: past the bound, stay there)
			return ts, ts.setSpeed(ts.wantSpeed, ts.wantSpeed/2)
		}
		ts.wantSpeed = msg.got // (a speed beyond the twin's bounds: the next press starts from where it stayed)
		said := fmt.Sprintf("the rehearsal's clock runs at ×%g", msg.got)
		if msg.got < msg.want {
			said += " — the fastest it goes"
		}
		ts.e.post(statusMsg{text: said})
		return ts, ts.refresh()
	case twinDoneMsg:
		if msg.err != nil {
			ts.e.post(statusMsg{text: msg.err.Error(), warn: true})
		} else {
			ts.e.post(statusMsg{text: msg.said})
		}
		return ts, ts.refresh()
	case followMsg:
		return ts, ts.refresh()
	}
	return ts, nil
}

func (ts *twinScreen) View() string {
	off := ts.text.vp.YOffset()
	ts.text.setLines(ts.lines())
	ts.text.vp.SetYOffset(off)
	return ts.text.View()
}

// lines are the screen: the clock, the script, the subscriptions to bring down or up, the account.
func (ts *twinScreen) lines() []string {
	st, l := ts.e.st, ts.look
	if l.Clock.IsZero() && ts.err == "" {
		return []string{st.Title.Render("rehearsal"), "", "  reading the rehearsal…"}
	}
	speed := l.Speed
	if ts.wantSpeed > 0 { // set at once; a look may wait on a long step (×100000) and say the speed before
		speed = ts.wantSpeed
	}
	state := fmt.Sprintf("×%g", speed)
	if l.Paused {
		state = "PAUSED"
	}
	out := []string{st.Title.Render("rehearsal") + st.Dim.Render("   p pause · + faster · - slower · f +15m · F +1h · ↑↓ choose · b break · u up · esc close"), ""}
	if l.Source != "" {
		out = append(out, "  a twin of "+textfmt.Printable(l.Source))
	}
	out = append(out, fmt.Sprintf("  clock  %s  %s", l.Clock.UTC().Format("2006-01-02 15:04:05Z"), state), "",
		st.Header.Render("script")+st.Dim.Render("  (▶ now)"))
	out = append(out, ts.scriptLines()...)
	out = append(out, "", st.Header.Render("handlers now")+st.Dim.Render("  (↑↓ choose · b break · u up)"))
	out = append(out, ts.handlerLines()...)
	acct := "account: " + l.Account
	if !l.Balanced && l.Account != "" {
		acct = st.Warn.Render(acct + " — does not balance")
	}
	out = append(out, "", acct)
	if ts.err != "" {
		out = append(out, st.Warn.Render("could not read the rehearsal: "+ts.err))
	}
	return out
}

// downNow reports whether a window has who down at the clock's time.
func (l RehearsalLook) downNow(w RehearsalWindow) bool {
	return !l.Clock.Before(w.From) && (w.To.IsZero() || l.Clock.Before(w.To))
}

// upFromNow says whether who (a subscription, or the replay) answers from the clock's time on: no window of the
// script, its own or every handler's, is in force now or to come. u on such a handler changes nothing.
func (l RehearsalLook) upFromNow(who string) bool {
	for _, w := range l.Script {
		if (w.Who == who || w.Who == "*" && who != "replay") && (w.To.IsZero() || l.Clock.Before(w.To)) {
			return false
		}
	}
	return true
}

// downFromNow says whether who is down now with 503 until further notice by a window of its own — what b would
// make it; b on such a handler changes nothing.
func (l RehearsalLook) downFromNow(who string) bool {
	for _, w := range l.Script {
		if w.Who == who && w.To.IsZero() && w.Status == 503 && !l.Clock.Before(w.From) {
			return true
		}
	}
	return false
}

// scriptLines are the script's windows, ▶ marking those in force now.
func (ts *twinScreen) scriptLines() []string {
	l := ts.look
	if len(l.Script) == 0 {
		return []string{"    every handler and the replay up"}
	}
	var out []string
	for _, w := range l.Script {
		mark := " "
		if l.downNow(w) {
			mark = "▶"
		}
		until := "until further notice"
		if !w.To.IsZero() {
			until = "until " + w.To.UTC().Format("01-02 15:04")
		}
		status := w.Outcome
		if w.Status != 0 {
			status = fmt.Sprintf("%d %s", w.Status, w.Outcome)
		}
		who := w.Who
		if who == "*" {
			who = "every handler"
		}
		out = append(out, fmt.Sprintf("  %s %-20s down %-22s from %s %s  %s", mark, textfmt.Printable(who), status,
			w.From.UTC().Format("01-02 15:04"), until, ts.e.st.Dim.Render(textfmt.Printable(w.Why))))
	}
	return out
}

// handlerLines are the subscriptions and the replay, each up or down now, the chosen one marked.
func (ts *twinScreen) handlerLines() []string {
	l := ts.look
	var out []string
	for i, who := range l.Who {
		cur := " "
		if i == ts.cursor {
			cur = "▸"
		}
		now := "up"
		for _, w := range l.Script {
			if (w.Who == who || w.Who == "*" && who != "replay") && l.downNow(w) {
				now = "DOWN " + w.Outcome
			}
		}
		out = append(out, fmt.Sprintf("  %s %-20s %s", cur, textfmt.Printable(who), now))
	}
	return out
}
