package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
)

// Event Grid counts per minute, so a failure in the very minute the replay took a canary may be the handler's
// last one before it (a handler just brought back, its subscription on probation): the canary waits for a later
// minute rather than call the handler failing — and a failure a minute later is the canary's.
func TestACanaryIsNotFailedByItsOwnMinutesEarlierFailure(t *testing.T) {
	taken := time.Date(2026, 12, 7, 19, 51, 40, 0, time.UTC)
	minute := taken.Truncate(time.Minute)
	for _, tc := range []struct {
		name                     string
		lastFailure, lastSuccess time.Time
		want                     rules.CanaryWord
		why                      string
	}{
		{"a failure in the take's minute", minute, time.Time{}, rules.CanaryWaiting, "may be from before it"},
		{"a failure the minute after", minute.Add(time.Minute), time.Time{}, rules.CanaryFailing, "failed attempt"},
		{"a failure before the take's minute", minute.Add(-time.Minute), time.Time{}, rules.CanaryWaiting, "counted nothing of it yet"},
		{"delivered after that minute's failure", minute, minute.Add(2 * time.Minute), rules.CanaryDelivered, "delivered since"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Canary{Sub: "FRIEND-REQUESTS", TakenAt: taken}
			verdict := rules.HandlerFailing
			if !tc.lastSuccess.IsZero() {
				verdict = rules.HandlerHealthy
			}
			rep := rules.WitnessReport{Source: "test metrics", AsOf: minute.Add(3 * time.Minute), Handlers: []rules.HandlerHealth{{
				Subscription: "friend-requests", Verdict: verdict, Failed: 10, LastFailure: tc.lastFailure, LastSuccess: tc.lastSuccess,
			}}}
			(&Session{}).lookAt(context.Background(), &c, rep, rep.AsOf, taken.Add(-time.Minute))
			if c.Word != tc.want || !strings.Contains(c.Why, tc.why) {
				t.Fatalf("word %d (%s), want %d with %q", c.Word, c.Why, tc.want, tc.why)
			}
		})
	}
}
