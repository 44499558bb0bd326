package twin

import (
	"container/heap"
	"context"
	"testing"
	"time"
)

// On probation a subscription's due attempts are skipped, untried: a trigger whose last attempt in its hour
// falls in the hold is dropped though the replay is up — its blob stranded — and the endpoint is tried again when
// the hold ends, a delivery ending the probation.
func TestProbationSkipsAttemptsAndDropsWhatRunsOutMeanwhile(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	now := tw.Now()
	tw.st.Probation = map[string]Probation{ReplayFunction: {Fails: probationAfter, Until: now.Add(probationFor)}}
	p := &pending{Due: now, Sub: ReplayFunction, Blob: "FRIEND-REQUESTS/2026/12/1/11/held.json", First: now.Add(-50 * time.Minute), Attempts: 6}
	heap.Push(&tw.st.Queue, p)
	before := tw.st.Totals
	if _, err := tw.Advance(context.Background(), now.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	after := tw.st.Totals
	if after.TriggersDropped != before.TriggersDropped+1 {
		t.Errorf("dropped %d trigger(s), want the held one", after.TriggersDropped-before.TriggersDropped)
	}
	for _, r := range tw.State().Runs {
		if r.Blob == p.Blob {
			t.Errorf("the replay ran on %s at %s: its attempt was held", p.Blob, r.At)
		}
	}
	if p.Outcome != "Probation" || p.Attempts != 7 {
		t.Errorf("the held trigger: outcome %q after %d attempt(s)", p.Outcome, p.Attempts)
	}
	if _, on := tw.st.Probation[ReplayFunction]; on {
		t.Errorf("still on probation two hours on, with the replay up: %+v", tw.st.Probation[ReplayFunction])
	}
}

// Ten failures in a row put an endpoint on probation; fewer, or a delivery between, do not.
func TestProbationComesAfterTenFailuresInARow(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	delete(tw.st.Probation, "webhooks") // (its handler fails at the opening: count from nothing)
	for i := 0; i < probationAfter-1; i++ {
		tw.probe("webhooks", false, 404)
	}
	if tw.st.Now.Before(tw.st.Probation["webhooks"].Until) {
		t.Fatal("on probation after nine failures")
	}
	tw.probe("webhooks", true, 200)
	for i := 0; i < probationAfter-1; i++ {
		tw.probe("webhooks", false, 404)
	}
	if tw.st.Now.Before(tw.st.Probation["webhooks"].Until) {
		t.Fatal("on probation after nine, a delivery, and nine")
	}
	tw.probe("webhooks", false, 400) // the event's fault, not the endpoint's
	if tw.st.Now.Before(tw.st.Probation["webhooks"].Until) {
		t.Fatal("a 400 counted toward probation")
	}
	tw.probe("webhooks", false, 503)
	if !tw.st.Now.Before(tw.st.Probation["webhooks"].Until) {
		t.Fatal("not on probation after ten failures in a row")
	}
}
