package twin

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A running rehearsal's controls: the header's words say what the script has down now, a change from the
// dashboard takes effect at the clock's time and is kept, a jump runs the twin ahead with its account balanced,
// and the speed is what was set.
func TestTheRunnersControls(t *testing.T) {
	tw, _ := started(t, "incident")
	run := NewRunner(tw, 60)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run.Run(ctx) }()
	defer func() { stop(); <-done }()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
		}
	}
	waitFor("the runner never started", func() bool { n, _ := run.Now(); return !n.IsZero() })
	if f := run.FailingNow(); !strings.Contains(f, "webhooks 404 (") || !strings.Contains(f, " left)") || !strings.Contains(f, "blob-deletions 500") {
		t.Fatalf("failing now: %q", f)
	}
	if _, err := run.Change(Change{Who: "WEBHOOKS", To: UntilFurtherNotice}); err != nil {
		t.Fatal(err)
	}
	if f := run.FailingNow(); strings.Contains(f, "webhooks") {
		t.Fatalf("webhooks brought up, still failing now: %q", f)
	}
	l, err := run.Look(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w := l.Script.Down("webhooks", l.Clock.Sub(l.Start)); w != nil {
		t.Fatalf("the script still has webhooks down now: %+v", w)
	}
	if w := l.Script.Down("webhooks", l.Clock.Sub(l.Start)-time.Minute); w == nil {
		t.Fatal("bringing webhooks up now rewrote its past")
	}
	before := l.Clock
	if err := run.Jump(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if l, err = run.Look(ctx); err != nil || l.Clock.Before(before.Add(time.Hour)) || !l.Account.Balanced() {
		t.Fatalf("after a jump of an hour from %s: clock %s, account %s, %v", before, l.Clock, l.Account, err)
	}
	if got := run.SetSpeed(600); got != 600 || run.Speed() != 600 {
		t.Fatalf("speed %g", got)
	}
	// a speed is set at once, never after a step (at ×100000 one takes seconds: a - waited that long)
	run.step.Lock()
	set := make(chan float64, 1)
	go func() { set <- run.SetSpeed(1200) }()
	select {
	case got := <-set:
		if got != 1200 || run.Speed() != 1200 {
			t.Errorf("speed %g", got)
		}
	case <-time.After(5 * time.Second):
		t.Error("SetSpeed waited on a step")
	}
	run.step.Unlock()
	stop()
	if err := <-done; err != nil && err != context.Canceled {
		t.Fatal(err)
	}
	done <- nil
	again, err := Peek(tw.root)
	if err != nil {
		t.Fatal(err)
	}
	if w := again.Script().Down("webhooks", again.Now().Sub(again.State().Start)); w != nil {
		t.Fatalf("the change was not kept: %+v", w)
	}
}

// What the script has failing says the time each failure has left, as left — it counts down, so "for 2h" read as
// how long it had failed.
func TestFailingNowSaysTheTimeLeft(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	s := &Script{Windows: []Window{
		{Sub: "webhooks", From: 0, To: 3 * time.Hour, Status: 404},
		{Sub: "replay", From: time.Hour, To: UntilFurtherNotice, Outcome: "TimedOut"},
	}}
	got := failingAt(s, start.Add(70*time.Minute), start)
	if got != "replay TimedOut, webhooks 404 (1h50m left)" {
		t.Errorf("failing: %q", got)
	}
}
