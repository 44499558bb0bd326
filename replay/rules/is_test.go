package rules_test

import (
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
	"github.com/deadletter/deadletter/replay/rules"
)

// One answer for ls --verdict and the dashboard's verdict:/is: terms. Malformed and crash are what the replay
// will meet: an archived copy is never handled again, and a quarantine copy never reaches the crash.
func TestIsAnswersForBothFrontEnds(t *testing.T) {
	t.Parallel()
	cfg := rules.DefaultConfig()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	item := func(name string, age time.Duration, s rules.Summary) *rules.Item {
		it := cfg.MakeItem(blob.Info{Name: name, LastModified: now.Add(-age)}, now)
		it.Summary = &s
		return &it
	}
	capped := rules.Summary{Events: 1}
	capped.Verdicts[rules.VerdictCap] = 1
	for _, tc := range []struct {
		it   *rules.Item
		what string
		want bool
	}{
		{item("S/a.json", 2*time.Hour, rules.Summary{Malformed: true}), "malformed", true},
		{item("archived/S/a.json", 2*time.Hour, rules.Summary{Malformed: true}), "MALFORMED", false},
		{item("S/a.json", 2*time.Hour, rules.Summary{CrashDepth: 5000}), "crash", true},
		{item("quarantine/S/a.json", 2*time.Hour, rules.Summary{CrashDepth: 5000}), "crash", false},
		{item("S/a.json", 2*time.Hour, capped), "cap", true},
		{item("S/a.json", 2*time.Hour, capped), "Replay", false},
		{item("S/a.json", 2*time.Hour, rules.Summary{Malformed: true, Verdicts: capped.Verdicts}), "cap", false},
		{item("S/a.json", 30*time.Minute, capped), "stalled", true},
		{item("quarantine/S/a.json", 29*24*time.Hour, capped), "expiring", true},
	} {
		got, known := cfg.Is(tc.it, now, tc.what)
		if !known || got != tc.want {
			t.Errorf("%s is %s: %v (known %v), want %v", tc.it.Name, tc.what, got, known, tc.want)
		}
	}
	if _, known := cfg.Is(item("S/a.json", 0, capped), now, "frobbed"); known {
		t.Error("an unknown word is known")
	}
	for _, w := range append([]string{"notidempotent", "handled"}, rules.IsWords[:2]...) {
		if !rules.IsVerdictFilter(w) {
			t.Errorf("%s is a verdict filter", w)
		}
	}
	if rules.IsVerdictFilter("expiring") {
		t.Error("expiring is an is: word, not a verdict")
	}
}
