package metrics

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
)

// The witness's series: a subscription each, labelled with its verdict, the replay's dropped triggers, and the
// topics not read; in the scrape as deadletter_handler_verdict, deadletter_replay_dropped_triggers and
// deadletter_witness_problems. A later pass replaces the verdicts, never keeps a stale one.
func TestMetricsHandlerVerdicts(t *testing.T) {
	w := rules.WitnessReport{Source: "test", AsOf: time.Now().Truncate(time.Minute), Window: 15 * time.Minute,
		Handlers: []rules.HandlerHealth{{Subscription: "PUSH-NOTIFICATIONS", Verdict: rules.HandlerFailing, Failed: 9},
			{Subscription: "WEBHOOKS", Verdict: rules.HandlerHealthy, Succeeded: 3}},
		Replay:   []rules.HandlerHealth{{Subscription: "DEADLETTER-REPLAY", Verdict: rules.HandlerFailing, Failed: 4, Dropped: 2}},
		Problems: []rules.WitnessProblem{{Topic: "t", Status: 429}}}
	cfg := rules.DefaultConfig()
	e := New("dir:/x")
	e.Succeeded(Measure(snapshot(cfg), rules.Report{Witness: w}, cfg), time.Now(), time.Millisecond)
	s := series(t, e.hub.reg)
	for key, want := range map[string]float64{
		`deadletter_handler_verdict{container="dir:/x",subscription="PUSH-NOTIFICATIONS",verdict="failing"}`: 1,
		`deadletter_handler_verdict{container="dir:/x",subscription="WEBHOOKS",verdict="healthy"}`:           1,
		`deadletter_handler_verdict{container="dir:/x",subscription="DEADLETTER-REPLAY",verdict="failing"}`:  1,
		`deadletter_replay_dropped_triggers{container="dir:/x",subscription="DEADLETTER-REPLAY"}`:            2,
		`deadletter_witness_problems{container="dir:/x"}`:                                                    1,
	} {
		if got, ok := s[key]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", key, got, ok, want)
		}
	}
	w.Handlers[0].Verdict = rules.HandlerRecovering
	w.Problems = nil
	e.Succeeded(Measure(snapshot(cfg), rules.Report{Witness: w}, cfg), time.Now(), time.Millisecond)
	s = series(t, e.hub.reg)
	if _, stale := s[`deadletter_handler_verdict{container="dir:/x",subscription="PUSH-NOTIFICATIONS",verdict="failing"}`]; stale {
		t.Error("the failing verdict outlived the pass that said recovering")
	}
	if s[`deadletter_handler_verdict{container="dir:/x",subscription="PUSH-NOTIFICATIONS",verdict="recovering"}`] != 1 || s[`deadletter_witness_problems{container="dir:/x"}`] != 0 {
		t.Errorf("after the second pass: %v", s)
	}
	// Without a witness: no verdict, no problem.
	e.Succeeded(Measure(snapshot(cfg), rules.Report{}, cfg), time.Now(), time.Millisecond)
	for k, v := range series(t, e.hub.reg) {
		if strings.HasPrefix(k, "deadletter_handler_verdict") || strings.HasPrefix(k, "deadletter_replay_dropped") || strings.HasPrefix(k, "deadletter_witness_problems") && v != 0 {
			t.Errorf("without a witness: %s = %v", k, v)
		}
	}
}

// Subscription names come from whoever names subscriptions on the topics: past MaxSubscriptions the rest are
// counted under _other by verdict — the failing ones keep their names first — and a name is escaped.
func TestMetricsHandlerVerdictsAreBoundedAndEscaped(t *testing.T) {
	var w rules.WitnessReport
	w.Source = "test"
	for i := range MaxSubscriptions + 10 {
		w.Handlers = append(w.Handlers, rules.HandlerHealth{Subscription: fmt.Sprintf("S%03d", i), Verdict: rules.HandlerHealthy})
	}
	w.Handlers = append(w.Handlers, rules.HandlerHealth{Subscription: "ZZ\x1b[2J", Verdict: rules.HandlerFailing})
	v := Measure(snapshot(rules.DefaultConfig()), rules.Report{Witness: w}, rules.DefaultConfig())
	if len(v.Handlers) != MaxSubscriptions+1 {
		t.Errorf("%d verdict series, want %d", len(v.Handlers), MaxSubscriptions+1)
	}
	if v.Handlers[HandlerKey{`ZZ\x1b[2J`, rules.HandlerFailing}] != 1 {
		t.Errorf("the failing subscription lost its (escaped) name: %v", v.Handlers)
	}
	if got := v.Handlers[HandlerKey{OtherSubscription, rules.HandlerHealthy}]; got != 11 {
		t.Errorf("_other healthy %d, want 11", got)
	}
}
