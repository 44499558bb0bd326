package tui

import (
	"context"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/testkit"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
	"github.com/rivo/uniseg"
)

var fixedNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// hostileName holds terminal escape sequences: they must reach the screen escaped.
const hostileName = "HOSTILE/2026/11/30/9/\x1b[2J\x1b]0;pwned\x07.json"

// fixture is the incident scenario in memory at a pinned clock, plus a hostile blob.
func fixture(t testing.TB, count int) (*storetest.Mem, rules.Config) {
	t.Helper()
	mem := storetest.NewMem(fixedNow)
	cfg := rules.DefaultConfig()
	if _, err := scenario.Seed(context.Background(), mem, scenario.SeedOptions{Count: count, Seed: 7, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	body := `[{"id":"x\u001b[31m","subject":"\u001b[2J\u001b]0;pwned\u0007","eventType":"ProcessPushNotification","dataVersion":"1","data":{}}]`
	mem.Write(context.Background(), hostileName, []byte(body), store.WriteOptions{})
	mem.Backdate(context.Background(), hostileName, fixedNow.Add(-3*time.Hour))
	cfg.Handlers = scenario.IncidentRegister
	return mem, cfg
}

// deferred is a timer the harness holds instead of sleeping: polling, the retry countdown, the filter's debounce.
type deferred struct {
	d   time.Duration
	msg tea.Msg
}

// harness drives the dashboard as the terminal would — window size, keys, mouse — and runs every command it
// returns to completion, synchronously; timers wait in a list until the test advances the clock. No test sleeps.
type harness struct {
	t      testing.TB
	m      *Model
	now    time.Time
	timers []timerAt
	clip   *testkit.LockedBuffer
	// paused holds what commands return instead of delivering it, so a test can press a key while work is
	// in flight (a cancel that arrives late); resume delivers it.
	paused bool
	held   []tea.Msg
}

func (hs *harness) pause() { hs.paused = true }

func (hs *harness) resume() {
	hs.paused = false
	held := hs.held
	hs.held = nil
	hs.send(held...)
}

type timerAt struct {
	at  time.Time
	msg tea.Msg
}

type opt func(*Options)

// readOnly opens the dashboard's session read-only.
func readOnly(o *Options) {
	sp := o.Session.Spec()
	sp.ReadOnly = true
	o.Session = session.Over(o.Session.Loader(), sp)
}

// withWitness gives the dashboard's session Event Grid's witness w.
func withWitness(w rules.Witness) opt {
	return func(o *Options) {
		sp := o.Session.Spec()
		sp.Witness = w
		o.Session = session.Over(o.Session.Loader(), sp)
	}
}

// tester is who the harness's record names.
var tester = record.Who{User: "tester", Host: "host"}

func newHarness(t testing.TB, c store.Container, cfg rules.Config, w, h int, opts ...opt) *harness {
	t.Helper()
	hs := &harness{t: t, now: fixedNow, clip: &testkit.LockedBuffer{}}
	sess := session.Over(replay.NewLoader(c, cfg), session.Spec{RecordDir: filepath.Join(t.TempDir(), "record"), Who: &tester})
	o := Options{Session: sess, Interval: time.Minute, Theme: Theme{}, By: "tester@host",
		Clock: func() time.Time { return hs.now }, Clipboard: hs.clip,
		After: func(d time.Duration, msg tea.Msg) tea.Cmd { return func() tea.Msg { return deferred{d, msg} } }}
	for _, f := range opts {
		f(&o)
	}
	hs.m = New(o)
	t.Cleanup(hs.m.stop)
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(hs.m.Init())
	hs.settle()
	return hs
}

// send delivers messages and everything they set off.
func (hs *harness) send(msgs ...tea.Msg) {
	hs.t.Helper()
	for _, msg := range msgs {
		_, cmd := hs.m.Update(msg)
		hs.run(cmd)
	}
}

// run executes a command (a batch's parts in turn) and delivers what it returns.
func (hs *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil, tea.QuitMsg:
	case tea.BatchMsg:
		for _, c := range msg {
			hs.run(c)
		}
	case deferred:
		hs.timers = append(hs.timers, timerAt{at: hs.now.Add(msg.d), msg: msg.msg})
	default:
		if hs.paused {
			hs.held = append(hs.held, msg)
			return
		}
		hs.send(msg)
	}
}

// settle fires the short timers (the filter's debounce) until nothing more is due within a second.
func (hs *harness) settle() { hs.advance(time.Second - time.Nanosecond) }

// advance moves the clock on by d and delivers every timer that falls due, in order.
func (hs *harness) advance(d time.Duration) {
	end := hs.now.Add(d)
	for {
		next := -1
		for i, tm := range hs.timers {
			if !tm.at.After(end) && (next < 0 || tm.at.Before(hs.timers[next].at)) {
				next = i
			}
		}
		if next < 0 {
			hs.now = end
			return
		}
		tm := hs.timers[next]
		hs.timers = append(hs.timers[:next], hs.timers[next+1:]...)
		if tm.at.After(hs.now) {
			hs.now = tm.at
		}
		hs.send(tm.msg)
	}
}

// press types keys: each rune a key press; names in angle brackets are special keys (<enter>, <esc>, <tab>…).
func (hs *harness) press(keys ...string) {
	hs.t.Helper()
	for _, k := range keys {
		if strings.HasPrefix(k, "<") && strings.HasSuffix(k, ">") {
			hs.send(special(k[1 : len(k)-1]))
		} else {
			for _, r := range k {
				hs.send(tea.KeyPressMsg{Code: r, Text: string(r)})
			}
		}
		hs.settle()
	}
}

// waitUntil waits for a condition another goroutine makes true, with a deadline — never a fixed pause.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		runtime.Gosched()
	}
}

func special(name string) tea.KeyPressMsg {
	keys := map[string]tea.KeyPressMsg{"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape}, "tab": {Code: tea.KeyTab},
		"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift}, "up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown}, "left": {Code: tea.KeyLeft},
		"right": {Code: tea.KeyRight}, "pgup": {Code: tea.KeyPgUp}, "pgdown": {Code: tea.KeyPgDown}, "home": {Code: tea.KeyHome},
		"end": {Code: tea.KeyEnd}, "space": {Code: tea.KeySpace, Text: " "}, "ctrl+a": {Code: 'a', Mod: tea.ModCtrl},
		"ctrl+c": {Code: 'c', Mod: tea.ModCtrl}, "backspace": {Code: tea.KeyBackspace}}
	if k, ok := keys[name]; ok {
		return k
	}
	panic("no key " + name)
}

// screen is what the terminal shows now.
func (hs *harness) screen() string { return hs.m.View().Content }

// shows fails unless the screen holds every text.
func (hs *harness) shows(want ...string) string {
	hs.t.Helper()
	s := hs.screen()
	for _, w := range want {
		if !strings.Contains(s, w) {
			hs.t.Fatalf("the screen does not show %q:\n%s", w, s)
		}
	}
	return s
}

// lacks fails if the screen holds any of the texts.
func (hs *harness) lacks(not ...string) {
	hs.t.Helper()
	s := hs.screen()
	for _, n := range not {
		if strings.Contains(s, n) {
			hs.t.Fatalf("the screen shows %q:\n%s", n, s)
		}
	}
}

// checkSize fails unless the view is exactly w columns by h lines, measured independently of the code under test:
// escape sequences removed by a regular expression of its own, then uniseg's grapheme-cluster widths (the
// dashboard measures with x/ansi).
func checkSize(t testing.TB, label, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != h {
		t.Fatalf("%s at %dx%d: %d lines", label, w, h, len(lines))
	}
	for i, l := range lines {
		if lw := independentWidth(l); lw != w {
			t.Fatalf("%s at %dx%d: line %d is %d wide: %q", label, w, h, i, lw, l)
		}
	}
}

// escapes are the CSI and OSC sequences styles and hyperlinks use.
var escapes = regexp.MustCompile("\x1b\\[[0-?]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)")

// independentWidth is a line's width on screen by another library than the one the dashboard uses.
func independentWidth(s string) int { return uniseg.StringWidth(escapes.ReplaceAllString(s, "")) }
