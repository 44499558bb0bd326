package replay

import (
	"context"
	"errors"
	"sync"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"
)

// readFailed is the outcome of an action whose read of its blob failed: the blob is missing (missing), the
// action was cancelled meanwhile, an entry the store refuses, or the read failed.
func readFailed(ctx context.Context, r rules.Result, err error, missing rules.Outcome) rules.Result {
	switch {
	case errors.Is(err, store.ErrNotFound):
		r.Outcome, r.Reason = missing, rules.Reason{Kind: rules.ReasonNotFound}
	case errors.Is(err, store.ErrRefused):
		r.Outcome, r.Reason = rules.OutcomeRefused, rules.Reason{Kind: rules.ReasonRefusedEntry, Err: err.Error()}
	case ctx.Err() != nil:
		r.Outcome = rules.OutcomeCancelled
	default:
		r.Outcome, r.Reason = rules.OutcomeFailed, rules.Failure(err)
	}
	return r
}

// ErrReadOnly is returned by every action in read-only mode, before anything is touched.
var ErrReadOnly = errors.New("read-only mode: drain, restore, ack and repair are disabled")

// StopAfterFailures is how many blobs in a row may fail before an action stops: an endpoint that fails every
// request should not be hammered through ten thousand blobs before the operator hears of it.
const StopAfterFailures = 10

// runner carries one action over its targets: bounded concurrency, results in target order, progress per blob,
// and two ways to stop — the caller's cancel, and a run of consecutive failures. Blobs not yet started when it
// stops come back cancelled, untouched, saying why.
type runner struct {
	concurrency int
	progress    func(rules.Result)
	stopAfter   int
	// pace, when set, is waited on before each blob: a paced action (DrainOptions.Rate).
	pace *rate.Limiter

	mu      sync.Mutex
	streak  int
	why     rules.Reason
	tripped context.CancelFunc
}

func (r *runner) run(ctx context.Context, names []string, do func(ctx context.Context, i int) rules.Result) []rules.Result {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	r.tripped = stop
	if r.stopReason().Kind != rules.ReasonNone {
		stop() // an earlier wave of the same run stopped it: nothing more is touched
	}
	n := r.concurrency
	if n <= 0 {
		n = rules.DefaultConcurrency
	}
	results := make([]rules.Result, len(names))
	var g errgroup.Group
	g.SetLimit(n)
	for i := range names {
		g.Go(func() error {
			r.one(ctx, i, names[i], do, results)
			return nil
		})
	}
	g.Wait()
	return results
}

// one runs the action on target i (or says why it did not) and records and reports its result.
func (r *runner) one(ctx context.Context, i int, name string, do func(ctx context.Context, i int) rules.Result, results []rules.Result) {
	res := rules.Result{Name: name, Outcome: rules.OutcomeCancelled}
	if r.pace != nil && r.pace.Wait(ctx) != nil {
		// cancelled while waiting its turn: untouched
	} else if ctx.Err() == nil {
		res = do(ctx, i)
	}
	if res.Outcome == rules.OutcomeCancelled && res.Reason.Kind == rules.ReasonNone {
		res.Reason = r.stopReason()
	}
	r.count(res)
	results[i] = res
	if r.progress != nil {
		r.progress(res)
	}
}

func (r *runner) count(res rules.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case res.Outcome == rules.OutcomeFailed:
		r.streak++
		limit := r.stopAfter
		if limit == 0 {
			limit = StopAfterFailures
		}
		if limit > 0 && r.streak >= limit && r.why.Kind == rules.ReasonNone {
			r.why = rules.Reason{Kind: rules.ReasonStopped, Count: r.streak, Err: res.Reason.Err}
			r.tripped()
		}
	case res.Outcome != rules.OutcomeCancelled:
		r.streak = 0
	}
}

func (r *runner) stopReason() rules.Reason {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.why
}
