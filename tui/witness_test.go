package tui

import (
	"context"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
)

// fixedWitness answers the same report every time, and counts how often it was asked.
type fixedWitness struct {
	rep   rules.WitnessReport
	asked chan struct{}
}

func (f *fixedWitness) Witness(context.Context, time.Time) rules.WitnessReport {
	f.asked <- struct{}{}
	return f.rep
}

// With Event Grid's witness configured, the HANDLER column names both witnesses, the badge line raises the failing
// handler, and the drain dialog warns of the subscription Event Grid says is failing now — matched to its folder
// whatever the case.
func TestHandlerColumnAndDrainSayEventGrid(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	w := &fixedWitness{asked: make(chan struct{}, 16), rep: rules.WitnessReport{Source: "test", AsOf: fixedNow.Truncate(time.Minute), Window: 15 * time.Minute,
		Handlers: []rules.HandlerHealth{{Subscription: "push-notifications", Verdict: rules.HandlerFailing, Failed: 12, FailedBy: map[string]int64{"Busy": 12}}}}}
	hs := newHarness(t, mem, cfg, 160, 40, withWitness(w))
	if len(w.asked) != 1 {
		t.Fatalf("the witness was asked %d times by the first refresh, want once", len(w.asked))
	}
	hs.press("o")
	hs.shows("PUSH-NOTIFICATIONS", "· EG failing", "EG Event Grid's metrics as of", "EG HANDLER FAILING 1")
	hs.press("1", "/", "push", "<enter>", "<ctrl+a>", "d")
	hs.shows("Drain", "PUSH-NOTIFICATIONS failing", "PUSH-NOTIFICATIONS: Event Grid says its handler is failing now: 12 failed attempt(s) (Busy 12)")
	// the restore dialog warns the same of the copies whose events would resume to that handler
	hs.press("<esc>", "2", "<ctrl+a>", "r") // (the filter push stays)
	hs.shows("Restore", "PUSH-NOTIFICATIONS: Event Grid says its handler is failing now", "restored events would go to a handler that is failing now")
}

// Without a witness the column and the dialog are as they were: the container's witness alone.
func TestHandlerColumnWithoutWitness(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	hs := newHarness(t, mem, cfg, 160, 40)
	hs.press("o")
	hs.shows("HANDLER = last dead letter, an hour late")
	hs.lacks("EG ", "Event Grid")
}
