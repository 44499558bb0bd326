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
		verdict                  rules.HandlerVerdict
		want                     rules.CanaryWord
		why                      string
	}{
		{"a failure in the take's minute", minute, time.Time{}, rules.HandlerFailing, rules.CanaryWaiting, "may be from before it"},
		{"a failure the minute after", minute.Add(time.Minute), time.Time{}, rules.HandlerFailing, rules.CanaryFailing, "failed attempt"},
		{"a failure before the take's minute", minute.Add(-time.Minute), time.Time{}, rules.HandlerFailing, rules.CanaryWaiting, "counted nothing of it yet"},
		{"delivered after that minute's failure", minute, minute.Add(2 * time.Minute), rules.HandlerHealthy, rules.CanaryDelivered, "delivered since"},
		// (failing in the take's minute though another event was delivered in it: the canary may be the failure —
		// never called delivered on that minute)
		{"failures and a delivery in the take's minute", minute, minute, rules.HandlerFailing, rules.CanaryWaiting, "may be from before it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Canary{Sub: "FRIEND-REQUESTS", TakenAt: taken}
			rep := rules.WitnessReport{Source: "test metrics", AsOf: minute.Add(3 * time.Minute), Handlers: []rules.HandlerHealth{{
				Subscription: "friend-requests", Verdict: tc.verdict, Failed: 10, LastFailure: tc.lastFailure, LastSuccess: tc.lastSuccess,
			}}}
			(&Session{}).lookAt(context.Background(), &c, rep, rep.AsOf, taken.Add(-time.Minute))
			if c.Word != tc.want || !strings.Contains(c.Why, tc.why) {
				t.Fatalf("word %d (%s), want %d with %q", c.Word, c.Why, tc.want, tc.why)
			}
		})
	}
}
