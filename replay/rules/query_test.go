package rules_test

import (
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
	"github.com/deadletter/deadletter/replay/rules"
)

// A word matches what a row shows: the reason's short form (TTLExpired, MaxAttempts) as well as Event Grid's own
// word, plainly and with reason:; an outcome is not mistaken for a reason.
func TestQueryMatchesTheShortReasonARowShows(t *testing.T) {
	t.Parallel()
	cfg := rules.DefaultConfig()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	item := func(reason string) *rules.Item {
		it := cfg.MakeItem(blob.Info{Name: "WEBHOOKS/2026/11/30/9/a.json", LastModified: now.Add(-time.Hour)}, now)
		it.Summary = &rules.Summary{Events: 1, Reasons: rules.Counts{{Value: reason, N: 1}}, Outcomes: rules.Counts{{Value: "Busy", N: 1}}}
		return &it
	}
	ttl, max := item("TimeToLiveExceeded"), item("MaxDeliveryAttemptsExceeded")
	for _, tc := range []struct {
		q    string
		it   *rules.Item
		want bool
	}{
		{"TTLExpired", ttl, true}, {"ttlexpired", ttl, true}, {"reason:TTLExpired", ttl, true}, {"reason:=TTLExpired", ttl, true},
		{"TimeToLive", ttl, true}, {"reason:TimeToLive", ttl, true},
		{"MaxAttempts", max, true}, {"reason:MaxAttempts", max, true}, {"TTLExpired", max, false}, {"reason:MaxAttempts", ttl, false},
		{"outcome:TTLExpired", ttl, false},
	} {
		q, err := rules.ParseQuery(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.Matches(cfg, now, tc.it, func() string { return rules.SearchKey(tc.it) }); got != tc.want {
			t.Errorf("%q on %s: %v, want %v", tc.q, tc.it.Summary.Reasons.Top(), got, tc.want)
		}
	}
}
