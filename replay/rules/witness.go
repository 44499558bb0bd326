package rules

import (
	"context"
	"sort"
	"strings"
	"time"
)

// The second witness: Event Grid's own delivery metrics (Azure Monitor, one-minute grain). The container tells
// when a handler was failing an hour ago (Readiness); the broker tells whether it is failing now. A Witness is
// anything that can answer — Azure Monitor (internal/azmonitor) or a simulation — and the verdict is reckoned
// here, once, from the per-minute counts it returns.

// Witness reads Event Grid's delivery counts per event subscription over the complete minutes of a window ending
// before now. It never guesses: what it cannot read is said in the report's Problems.
type Witness interface {
	Witness(ctx context.Context, now time.Time) WitnessReport
}

// HandlerVerdict is what the broker says about one subscription's handler.
type HandlerVerdict int

// The verdicts, from "nothing to tell" to worst.
const (
	// HandlerUnknown: no witness, or the witness could not be read (said in the report's Problems).
	HandlerUnknown HandlerVerdict = iota
	// HandlerNoDeliveries: nothing was delivered or attempted in the window.
	HandlerNoDeliveries
	// HandlerHealthy: deliveries succeeded and none failed.
	HandlerHealthy
	// HandlerRecovering: attempts failed in the window, but deliveries succeeded after the last failure.
	HandlerRecovering
	// HandlerFailing: attempts failed and no delivery succeeded since the last failure.
	HandlerFailing
)

// String is the verdict's JSON name.
func (v HandlerVerdict) String() string {
	switch v {
	case HandlerNoDeliveries:
		return "noDeliveries"
	case HandlerHealthy:
		return "healthy"
	case HandlerRecovering:
		return "recovering"
	case HandlerFailing:
		return "failing"
	}
	return "unknown"
}

// MinuteCounts are one subscription's Event Grid counts for one complete minute (At is its start).
type MinuteCounts struct {
	At                              time.Time
	Succeeded, Failed, DeadLettered int64
	Dropped                         int64
	FailedBy                        map[string]int64 // failed attempts by the metric's Error dimension
}

// HandlerHealth is the broker's verdict on one event subscription, with its evidence.
type HandlerHealth struct {
	// Subscription is the event subscription's name as the metric gives it.
	Subscription string
	// Topic is the resource ID of the topic the subscription is on.
	Topic   string
	Verdict HandlerVerdict
	// Totals over the window's complete minutes.
	Succeeded, Failed, DeadLettered, Dropped int64
	// FailedBy counts the failed attempts by error (the metric's Error dimension).
	FailedBy map[string]int64
	// LastFailure and LastSuccess are the starts of the latest minutes with a failed attempt and with a delivery
	// (zero: none in the window).
	LastFailure, LastSuccess time.Time
}

// WitnessProblem is something the witness could not read: a topic, and why.
type WitnessProblem struct {
	Topic string
	// Status is the HTTP status Azure Monitor answered (0: no answer, or not an HTTP failure).
	Status int
	// Err is the error as the SDK gave it.
	Err string
}

// WitnessReport is what a Witness read for one refresh.
type WitnessReport struct {
	// Source names the witness ("Event Grid metrics" or a simulation's name); empty when there is none.
	Source string
	// AsOf is the end of the latest complete minute read: the counts say nothing after it.
	AsOf time.Time
	// Window is how far back the counts go from AsOf.
	Window time.Duration
	// Handlers are the subscriptions of the configured topics (replay system topic excluded), by name.
	Handlers []HandlerHealth
	// Replay are the subscriptions of the replay's storage system topic: their dropped triggers are blobs being
	// stranded as it happens.
	Replay []HandlerHealth
	// Problems are what could not be read; a non-empty list makes any subscription not read unknown.
	Problems []WitnessProblem
	// None says why there is no witness at all (e.g. a connection-string context has no Entra ID token).
	None string
	// App is what the activity log says of the Function App's starts (read beside the metrics, when the app is
	// named).
	App AppStarts
}

// Judge reckons a subscription's verdict and totals from its per-minute counts (any order; minutes past asOf,
// still being counted, are left out).
func Judge(sub, topic string, minutes []MinuteCounts, asOf time.Time) HandlerHealth {
	h := HandlerHealth{Subscription: sub, Topic: topic, FailedBy: map[string]int64{}}
	var lastFailed, lastSucceeded int64
	for _, m := range minutes {
		if !m.At.Before(asOf) {
			continue // the partial minute: its counts are still arriving
		}
		h.Succeeded += m.Succeeded
		h.Failed += m.Failed
		h.DeadLettered += m.DeadLettered
		h.Dropped += m.Dropped
		for k, n := range m.FailedBy {
			h.FailedBy[k] += n
		}
		if m.Failed > 0 && !m.At.Before(h.LastFailure) {
			h.LastFailure, lastFailed = m.At, m.Failed
		}
		if m.Succeeded > 0 && !m.At.Before(h.LastSuccess) {
			h.LastSuccess, lastSucceeded = m.At, m.Succeeded
		}
	}
	switch {
	case h.Failed == 0 && h.Succeeded == 0:
		h.Verdict = HandlerNoDeliveries
	case h.Failed == 0:
		h.Verdict = HandlerHealthy
	case h.LastSuccess.After(h.LastFailure):
		h.Verdict = HandlerRecovering
	case h.LastSuccess.Equal(h.LastFailure) && lastSucceeded > lastFailed:
		// the same minute: more delivered than failed — coming back
		h.Verdict = HandlerRecovering
	default:
		h.Verdict = HandlerFailing
	}
	return h
}

// HandlerOf is the broker's word on the subscription a dead-letter folder is named for: Event Grid writes folder
// names in capitals, so they match case-insensitively. ok is false when the witness has none (not configured,
// not read, or no such subscription on the configured topics).
func (w WitnessReport) HandlerOf(sub string) (HandlerHealth, bool) {
	for _, h := range w.Handlers {
		if strings.EqualFold(h.Subscription, sub) {
			return h, true
		}
	}
	return HandlerHealth{}, false
}

// Failing lists the handlers the broker says are failing now, of the subscriptions given (all when subs is nil),
// by name.
func (w WitnessReport) Failing(subs []string) []HandlerHealth {
	var out []HandlerHealth
	for _, h := range w.Handlers {
		if h.Verdict != HandlerFailing {
			continue
		}
		if subs != nil && !containsFold(subs, h.Subscription) {
			continue
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Subscription < out[j].Subscription })
	return out
}

// Dropping lists the replay subscriptions whose triggers Event Grid dropped in the window: blobs it will never
// hand the replay, stranded before the TTL shows them.
func (w WitnessReport) Dropping() []HandlerHealth {
	var out []HandlerHealth
	for _, h := range w.Replay {
		if h.Dropped > 0 {
			out = append(out, h)
		}
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
