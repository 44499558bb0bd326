package tui

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/deadletter/deadletter/replay/rules"
)

// The summary of every context: a row each as its check answers — a context that cannot be reached shows its
// error in its row, and one that never answers holds up nothing but its own row — and enter opens the one under
// the cursor.
func TestSummaryOfEveryContext(t *testing.T) {
	t.Parallel()
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	var devLooks, slowLooks atomic.Int32
	look := func(ctx context.Context, name string) ContextSummary {
		switch name {
		case "dev":
			devLooks.Add(1)
			return ContextSummary{Name: name, Container: "dir:/dev", Counts: map[rules.Pane]int{}}
		case "prod":
			return ContextSummary{Name: name, Container: "https://prod", Findings: 2, Worst: "31 stranded",
				Counts: map[rules.Pane]int{rules.PaneStranded: 31}}
		case "slow":
			slowLooks.Add(1)
			select {
			case <-hang:
			case <-ctx.Done():
			}
			return ContextSummary{Name: name}
		}
		return ContextSummary{Name: name, Err: errors.New("dial tcp 127.0.0.1:1: connection refused").Error()}
	}
	m := newSummary(SummaryOptions{Names: []string{"dev", "prod", "gone", "slow"}, Look: look, Interval: 20 * time.Millisecond, Theme: Theme{}})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 30))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("healthy")) && bytes.Contains(b, []byte("31 stranded")) &&
			bytes.Contains(b, []byte("ERROR dial tcp")) && bytes.Contains(b, []byte("looking…"))
	}, teatest.WithDuration(10*time.Second))
	// Every tick looks again — but never a second time at a context whose look has not answered.
	for deadline := time.Now().Add(10 * time.Second); devLooks.Load() < 4; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("dev was looked at %d times", devLooks.Load())
		}
	}
	if n := slowLooks.Load(); n != 1 {
		t.Fatalf("the context that never answers was looked at %d times at once", n)
	}
	// Its keys are a scope like the dashboard's: the footer lists them, ? shows them all, esc comes back.
	tm.Send(tea.KeyPressMsg{Code: '?', Text: "?"})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("keys: contexts")) && bytes.Contains(b, []byte("refresh: check every context again now")) &&
			bytes.Contains(b, []byte("open the context under the cursor"))
	}, teatest.WithDuration(10*time.Second))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape}) // closes the help, not the summary
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("every context")) }, teatest.WithDuration(10*time.Second))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyDown})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if got := tm.FinalModel(t).(*summary).chosen; got != "prod" {
		t.Fatalf("enter opened %q, want prod", got)
	}
}

// In a context's dashboard the header names the context, and : closes it to the summary.
func TestColonGoesToTheContexts(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	switched := false
	hs := newHarness(t, mem, cfg, 120, 40, func(o *Options) {
		o.Context = "prod"
		o.Switch = func() { switched = true }
	})
	hs.shows("ctx:prod", ": contexts")
	hs.press(":")
	if !switched || !hs.m.quitting {
		t.Fatalf("switched %v, quitting %v", switched, hs.m.quitting)
	}
}
