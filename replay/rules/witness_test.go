package rules

import (
	"testing"
	"time"
)

// Judge: a verdict from complete minutes only, the latest failure against the latest success.
func TestJudgeVerdicts(t *testing.T) {
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
