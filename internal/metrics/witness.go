package metrics

import (
	"cmp"
	"slices"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

// HandlerKey is one deadletter_handler_verdict series: a subscription Event Grid's witness judged, and its verdict.
type HandlerKey struct {
	Subscription string
	Verdict      rules.HandlerVerdict
}

// witnessValues are the witness's series of one pass: per subscription (the handlers' and the replay's) its
// verdict, counted 1; the replay subscriptions' dropped triggers; the topics it could not read. Past
// MaxSubscriptions subscriptions — the worst verdicts kept first, then by name — the rest are summed under
// OtherSubscription by verdict, as deadletter_blobs folds its own.
func witnessValues(w rules.WitnessReport) (verdicts map[HandlerKey]int, dropped map[string]int64, problems int) {
	if w.Source == "" && w.None == "" {
		return nil, nil, 0 // no witness configured
	}
	verdicts, dropped = map[HandlerKey]int{}, map[string]int64{}
	problems = len(w.Problems)
	if w.None != "" {
		problems++ // configured, and cannot be read at all (a connection-string context)
	}
	type judged struct {
		h      rules.HandlerHealth
		replay bool
	}
	var all []judged
	for _, h := range w.Handlers {
		all = append(all, judged{h, false})
	}
	for _, h := range w.Replay {
		all = append(all, judged{h, true})
	}
	slices.SortStableFunc(all, func(a, b judged) int {
		return cmp.Or(cmp.Compare(b.h.Verdict, a.h.Verdict), cmp.Compare(a.h.Subscription, b.h.Subscription))
	})
	for i, j := range all {
		sub := textfmt.Printable(j.h.Subscription)
		if i >= MaxSubscriptions {
			sub = OtherSubscription
		}
		verdicts[HandlerKey{sub, j.h.Verdict}]++
		if j.replay {
			dropped[sub] += j.h.Dropped
		}
	}
	return verdicts, dropped, problems
}
