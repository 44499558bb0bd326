package tui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/record"
)

// fakeRehearsal is a rehearsal's controls that record what the screen asked of them.
type fakeRehearsal struct {
	mu      sync.Mutex
	look    RehearsalLook
	calls   []string
	looks   int
	changed []string
	max     float64 // the fastest SetSpeed takes (0: no bound)
}

func (f *fakeRehearsal) Look(context.Context) (RehearsalLook, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.looks++
	return f.look, nil
}

func (f *fakeRehearsal) Toggle() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.look.Paused = !f.look.Paused
	f.calls = append(f.calls, "toggle")
	return f.look.Paused
}

func (f *fakeRehearsal) SetSpeed(s float64) float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.max > 0 && s > f.max {
		s = f.max
	}
	f.look.Speed = s
	return s
}

func (f *fakeRehearsal) Jump(_ context.Context, d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.look.Clock = f.look.Clock.Add(d)
	return nil
}

func (f *fakeRehearsal) Change(who string, down bool, status int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	word := "up"
	if down {
		word = "down"
	}
	f.changed = append(f.changed, who+" "+word)
	return nil
}

// t opens the rehearsal's screen: its clock, its script (▶ what is down now), the handlers to bring down or up,
// the account; p, +, -, f and d/u act on the rehearsal and the screen shows the result; it fits its region.
func TestTheRehearsalScreen(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 10)
	clock := fixedNow.Truncate(time.Second)
	f := &fakeRehearsal{look: RehearsalLook{Clock: clock, Speed: 60, Who: []string{"webhooks", "friend-requests", "replay"},
		Script:  []RehearsalWindow{{Who: "webhooks", From: clock.Add(-time.Hour), To: clock.Add(time.Hour), Status: 404, Outcome: "NotFound", Why: "its URL changed"}},
		Account: "100 published = 90 delivered + 2 on their way + 8 in blobs + 0 lost", Balanced: true}}
	hs := newHarness(t, mem, cfg, 140, 36)
	hs.lacks("t rehearsal") // no rehearsal, no t
	rec, d := withRecord(t, mem)
	hs = newHarness(t, mem, cfg, 140, 36, rec, func(o *Options) { o.Rehearsal = f })
	hs.shows("t rehearsal")
	hs.press("t")
	s := hs.shows("rehearsal", "×60", "▶ webhooks", "404 NotFound", "its URL changed", "▸ webhooks", "DOWN NotFound", "friend-requests      up",
		"100 published = 90 delivered")
	checkSize(t, "the rehearsal screen", s, 140, 36)
	hs.press("+")
	hs.shows("×120", "the rehearsal's clock runs at ×120")
	hs.press("-", "-")
	hs.shows("×30")
	// presses faster than the twin answers are none of them lost: three + before any answer is ×240
	hs.pause()
	hs.press("+", "+", "+")
	hs.resume()
	hs.shows("×240", "the rehearsal's clock runs at ×240")
	hs.press("-", "-", "-")
	hs.shows("×30")
	// a step past the twin's bound stays where it was: the speeds stay doubles and halves, never an odd fraction
	f.mu.Lock()
	f.max = 500
	f.mu.Unlock()
	hs.pause() // faster than the answers too: 60, 120, 240, 480, then 960 is past 500
	hs.press("+", "+", "+", "+", "+")
	hs.resume()
	hs.shows("×480")
	hs.press("+")
	hs.shows("×480", "runs at ×480 — the fastest it goes")
	hs.press("-")
	hs.shows("×240")
	hs.press("f")
	hs.shows(clock.Add(15*time.Minute).UTC().Format("15:04:05Z"), "jumped 15m ahead")
	hs.press("p")
	hs.shows("PAUSED")
	hs.press("j", "b", "k", "u")
	if got := strings.Join(f.changed, ", "); got != "friend-requests down, webhooks up" {
		t.Fatalf("the screen changed the script: %s", got)
	}
	// each change is in the record, as twin script set's are
	recs, _, err := record.Read(context.Background(), d)
	var said []string
	for _, r := range recs {
		if r.Intent.Action == record.ActTwinScript && r.Outcome != nil {
			said = append(said, r.Intent.Detail)
		}
	}
	if err != nil || len(said) != 2 || !strings.Contains(strings.Join(said, " · "), "friend-requests down (503)") {
		t.Fatalf("the record of the screen's changes: %q %v", said, err)
	}
	hs.press("<esc>")
	hs.lacks("handlers now")
}

// u on a handler that is already up — no window of the script now or to come — changes nothing and records
// nothing, and says so; on a handler the script brings down later it still brings it up (found by a fresh-eyes
// test: every u was recorded as a script change).
func TestUpOnAHandlerAlreadyUp(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 10)
	clock := fixedNow.Truncate(time.Second)
	f := &fakeRehearsal{look: RehearsalLook{Clock: clock, Speed: 60, Who: []string{"webhooks", "friend-requests", "thread-replies", "replay"},
		Script: []RehearsalWindow{{Who: "webhooks", From: clock.Add(-2 * time.Hour), To: clock.Add(-time.Hour), Status: 404, Outcome: "NotFound"},
			{Who: "thread-replies", From: clock.Add(time.Hour), Status: 503, Outcome: "Busy"}},
		Account: "1 published = 1 delivered", Balanced: true}}
	rec, d := withRecord(t, mem)
	hs := newHarness(t, mem, cfg, 140, 36, rec, func(o *Options) { o.Rehearsal = f })
	hs.press("t", "u")
	hs.shows("webhooks is already up")
	hs.press("j", "u")
	hs.shows("friend-requests is already up")
	hs.press("j", "u")
	if got := strings.Join(f.changed, ", "); got != "thread-replies up" {
		t.Fatalf("the screen changed the script: %q", got)
	}
	recs, _, err := record.Read(context.Background(), d)
	n := 0
	for _, r := range recs {
		if r.Intent.Action == record.ActTwinScript {
			n++
		}
	}
	if err != nil || n != 1 {
		t.Fatalf("%d script changes recorded (%v), want thread-replies' alone", n, err)
	}
}

// d on a handler already down with 503 until further notice — what d makes it — changes and records nothing, and
// says so; on one down with another status, or until a time, it still brings it down (503, until further notice).
func TestDownOnAHandlerAlreadyDown(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 10)
	clock := fixedNow.Truncate(time.Second)
	f := &fakeRehearsal{look: RehearsalLook{Clock: clock, Speed: 60, Who: []string{"webhooks", "friend-requests", "replay"},
		Script: []RehearsalWindow{{Who: "webhooks", From: clock.Add(-time.Hour), Status: 503, Outcome: "Busy"},
			{Who: "friend-requests", From: clock.Add(-time.Hour), Status: 404, Outcome: "NotFound"}},
		Account: "1 published = 1 delivered", Balanced: true}}
	hs := newHarness(t, mem, cfg, 140, 36, func(o *Options) { o.Rehearsal = f })
	hs.press("t", "d")
	hs.shows("d drains on the blob table (esc first); here b brings the chosen handler down, u up")
	if len(f.changed) > 0 {
		t.Fatalf("d on the rehearsal screen changed the script: %v", f.changed)
	}
	hs.press("b")
	hs.shows("webhooks is already down (503) until further notice: nothing to change")
	hs.press("j", "b")
	if got := strings.Join(f.changed, ", "); got != "friend-requests down" {
		t.Fatalf("the screen changed the script: %q", got)
	}
}

// On a twin's directory opened without running it, t and p say why they do nothing (found by a fresh-eyes test:
// they did nothing, silently).
func TestStillTwinSaysWhyTAndPDoNothing(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 10)
	hs := newHarness(t, mem, cfg, 140, 36, func(o *Options) { o.StillTwin = "the twin's clock stands still here" })
	hs.press("t")
	hs.shows("the twin's clock stands still here")
	hs.lacks("handlers now")
	hs.press("<esc>", "p")
	hs.shows("the twin's clock stands still here")
}

// The key line says what p does now: run the clock while it stands still, pause it while it runs (a fresh-eyes
// audit found "p pause" on the demo's first screen, paused).
func TestTheKeyLineSaysWhatPDoesNow(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	paused := true
	hs := newHarness(t, mem, cfg, 160, 30, func(o *Options) {
		o.Paused = func() bool { return paused }
		o.Pause = func() string { paused = !paused; return "toggled" }
	})
	hs.shows("p run")
	hs.press("p")
	hs.shows("p pause")
}
