package twin

import (
	"context"
	"fmt"
	"time"
)

// Event Grid's delayed delivery (its delivery document, "probation"): "if the first 10 events published to an
// endpoint fail, Event Grid assumes that the endpoint is experiencing problems and delays all subsequent retries
// and new deliveries for some time", it "might opportunistically skip certain retries if an endpoint is
// consistently unhealthy", and while on probation "events might get dead-lettered or dropped without even trying
// delivery". The twin's reading: after probationAfter failed attempts in a row, a subscription is on probation
// until probationFor after its last failure, and every attempt that comes due meanwhile is skipped — not tried,
// its outcome Probation, the retry schedule going on from it — so an event whose hour runs out in the meantime is
// given up untried (the time-to-live is checked when the next attempt comes due). The first attempt made after
// the hold either ends the probation (delivered) or holds the endpoint again. The document gives no figure for
// "some time" but "up to several hours"; the twin holds five minutes, so a handler that comes back is busy again
// within minutes, not at once — and a trigger whose last attempt in its hour fell in the hold after the Function
// App started is dropped, its blob stranded though the app is up.
const (
	probationAfter = 10
	probationFor   = 5 * time.Minute
)

// Probation is one subscription's endpoint as Event Grid's delayed delivery sees it.
type Probation struct {
	// Fails counts the failed attempts in a row (reset by a delivery).
	Fails int `json:"fails"`
	// Until is when the held deliveries are tried again (zero: not on probation).
	Until time.Time `json:"until,omitzero"`
}

// try makes an attempt that comes due — or, its subscription on probation, skips it: not tried, its outcome
// Probation, the schedule going on from it (so an event whose hour runs out meanwhile is given up untried).
func (tw *Twin) try(ctx context.Context, p *pending) (ok bool, status int, outcome string, err error) {
	p.LastTry = tw.st.Now // (a skipped attempt is recorded as Event Grid records it: at its time, outcome Probation)
	if tw.st.Now.Before(tw.st.Probation[p.Sub].Until) {
		return false, 0, "Probation", nil
	}
	ok, status, outcome, err = tw.deliver(ctx, p)
	if err != nil {
		return false, 0, "", err
	}
	tw.countAttempt(p.Sub, ok, status, outcome)
	tw.probe(p.Sub, ok, status)
	return ok, status, outcome, nil
}

// probe takes an attempt's answer into its subscription's probation: a delivery ends it; a failure Event Grid
// retries counts toward it and, from probationAfter in a row, holds the endpoint for probationFor. (A 400, 403 or
// 413 is the event's fault, not the endpoint's: it counts for nothing.)
func (tw *Twin) probe(sub string, ok bool, status int) {
	if ok {
		delete(tw.st.Probation, sub)
		return
	}
	if sub != ReplayFunction && (status == 400 || status == 403 || status == 413) {
		return
	}
	if tw.st.Probation == nil {
		tw.st.Probation = map[string]Probation{}
	}
	pr := tw.st.Probation[sub]
	pr.Fails++
	if pr.Fails >= probationAfter {
		pr.Until = tw.st.Now.Add(probationFor)
	}
	tw.st.Probation[sub] = pr
}

// checkProbation is parseState's check of the probations: known subscriptions, counts not negative.
func (st *State) checkProbation(subs map[string]bool) error {
	for sub, pr := range st.Probation {
		if !subs[sub] && sub != ReplayFunction {
			return fmt.Errorf("probation[%q]: not a subscription of the script", sub)
		}
		if pr.Fails < 0 {
			return fmt.Errorf("probation[%q].fails %d: want ≥ 0", sub, pr.Fails)
		}
		if err := inRange("probation.until", pr.Until); err != nil && !pr.Until.IsZero() {
			return err
		}
	}
	return nil
}
