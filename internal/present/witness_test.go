package present

import (
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
)

// The HANDLER cell names both witnesses; a forbidden topic names the role; a throttled one says it is retried;
// the evidence says the counts behind a verdict.
func TestWitnessWords(t *testing.T) {
	now := time.Date(2026, 12, 2, 18, 13, 27, 0, time.UTC)
	r := rules.Readiness{Subscription: "PUSH-NOTIFICATIONS", NewestDeadLetter: now.Add(-4 * time.Hour)}
	w := rules.WitnessReport{Source: "Event Grid metrics", AsOf: now.Truncate(time.Minute), Window: 15 * time.Minute,
		Handlers: []rules.HandlerHealth{{Subscription: "push-notifications", Verdict: rules.HandlerFailing, Failed: 9,
			FailedBy: map[string]int64{"Busy": 7, "TimedOut": 2}, Succeeded: 3, LastFailure: now.Add(-2 * time.Minute).Truncate(time.Minute)}}}
	if c := HandlerCell(r, w, now); c != "DL 4h ago · EG failing" {
		t.Errorf("cell %q", c)
	}
	if c := HandlerCell(rules.Readiness{Subscription: "ORDERS"}, w, now); c != "- · EG ?" {
		t.Errorf("cell of a subscription the metrics lack: %q", c)
	}
	if c := HandlerCell(r, rules.WitnessReport{}, now); c != "DL 4h ago" {
		t.Errorf("cell without a witness: %q", c)
	}
	if e := Evidence(w.Handlers[0]); e != "9 failed attempt(s) (Busy 7, TimedOut 2), none delivered since 18:11" {
		t.Errorf("evidence %q", e)
	}
	if p := Problem(rules.WitnessProblem{Topic: "/subscriptions/x/resourceGroups/r/providers/Microsoft.EventGrid/topics/estate", Status: 403, Err: "AuthorizationFailed"}); !strings.Contains(p, "estate: refused (403 AuthorizationFailed)") || !strings.Contains(p, "Monitoring Reader") {
		t.Errorf("403: %q", p)
	}
	if p := Problem(rules.WitnessProblem{Topic: "t", Status: 429, Err: "TooManyRequests"}); !strings.Contains(p, "throttling (429)") {
		t.Errorf("429: %q", p)
	}
	lines := WitnessLines(rules.WitnessReport{None: "no Event Grid witness: needs Entra ID"}, []string{"A"})
	if len(lines) != 1 || lines[0] != "no Event Grid witness: needs Entra ID." {
		t.Errorf("none: %q", lines)
	}
}
