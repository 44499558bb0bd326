package rules

import (
	"testing"
	"time"
)

// Judge: a verdict from complete minutes only, the latest failure against the latest success.
func TestJudgeVerdicts(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	asOf := t0.Add(15 * time.Minute)
	m := func(i int, ok, failed int64) MinuteCounts {
		return MinuteCounts{At: t0.Add(time.Duration(i) * time.Minute), Succeeded: ok, Failed: failed}
	}
	for _, c := range []struct {
		name    string
		minutes []MinuteCounts
		want    HandlerVerdict
	}{
		{"nothing", nil, HandlerNoDeliveries},
		{"zeros", []MinuteCounts{m(1, 0, 0), m(2, 0, 0)}, HandlerNoDeliveries},
		{"healthy", []MinuteCounts{m(1, 5, 0), m(9, 2, 0)}, HandlerHealthy},
		{"failing", []MinuteCounts{m(1, 5, 0), m(9, 0, 3)}, HandlerFailing},
		{"failing, never delivered", []MinuteCounts{m(14, 0, 1)}, HandlerFailing},
		{"recovering", []MinuteCounts{m(3, 0, 3), m(9, 4, 0)}, HandlerRecovering},
		{"same minute, more failed", []MinuteCounts{m(14, 1, 3)}, HandlerFailing},
		{"same minute, more delivered", []MinuteCounts{m(14, 3, 1)}, HandlerRecovering},
		{"the partial minute is left out", []MinuteCounts{m(2, 4, 0), m(15, 0, 9)}, HandlerHealthy},
	} {
		if got := Judge("S", "T", c.minutes, asOf); got.Verdict != c.want {
			t.Errorf("%s: %v, want %v", c.name, got.Verdict, c.want)
		}
	}
}

// The boundaries the verdicts turn on: a last minute with as many deliveries as failures is still failing (one
// more delivery makes it recovering); a single dropped trigger is a replayDropping finding.
func TestTheWitnessAtItsBoundaries(t *testing.T) {
	t.Parallel()
	asOf := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	minute := asOf.Add(-time.Minute)
	for _, c := range []struct {
		succeeded, failed int64
		want              HandlerVerdict
	}{
		{3, 3, HandlerFailing},
		{4, 3, HandlerRecovering},
		{2, 3, HandlerFailing},
		{1, 0, HandlerHealthy},
		{0, 1, HandlerFailing},
	} {
		h := Judge("s", "t", []MinuteCounts{{At: minute, Succeeded: c.succeeded, Failed: c.failed}}, asOf)
		if h.Verdict != c.want {
			t.Errorf("%d delivered and %d failed in the last minute: %v, want %v", c.succeeded, c.failed, h.Verdict, c.want)
		}
	}
	for _, dropped := range []int64{0, 1} {
		var r Report
		r.AddWitness(WitnessReport{Replay: []HandlerHealth{{Subscription: "replay", Dropped: dropped}}})
		if _, ok := r.Find(FindingReplayDropping); ok != (dropped > 0) {
			t.Errorf("%d dropped trigger(s): finding %v", dropped, ok)
		}
	}
}
