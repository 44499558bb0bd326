package replay

import (
	"context"
	"errors"
	"sync"

	"github.com/deadletter/deadletter/store"
	"golang.org/x/sync/errgroup"
)

// Outcome is what an action did to one blob.
type Outcome string

// Outcomes of drain and restore (docs/commands.md), plus handled, notFound and cancelled.
const (
	OutcomeDrained  Outcome = "drained"
	OutcomeRestored Outcome = "restored"
	OutcomeAcked    Outcome = "acked"
	// OutcomeRepaired: an edited payload written as a new root dead letter (and its original retired).
	OutcomeRepaired Outcome = "repaired"
	OutcomeCleared  Outcome = "cleared"
	OutcomeYoung    Outcome = "young"
	OutcomeExcluded Outcome = "excluded"
	// OutcomeHandled: a root blob the replay already handled; draining it would republish its events again.
	OutcomeHandled Outcome = "handled"
	// OutcomeUntriggerable: a root blob whose BlobCreated the replay subscription's filter never delivers: a
	// drain cannot make the replay see it.
	OutcomeUntriggerable Outcome = "untriggerable"
	// OutcomeCrash: a root blob the replay function crashes on (too deep to serialize): a drain only makes it
	// throw again, so it is left unless forced.
	OutcomeCrash   Outcome = "crash"
	OutcomeChanged Outcome = "changed"
	OutcomeGone    Outcome = "gone"
	// OutcomeNotFound: a blob named by the operator that does not exist.
	OutcomeNotFound Outcome = "notFound"
	OutcomeRefused  Outcome = "refused"
	// OutcomeCancelled: a blob the action never touched because it was cancelled first.
	OutcomeCancelled Outcome = "cancelled"
	OutcomeFailed    Outcome = "failed"
)

// Outcomes lists every outcome in the order reports give them: what was done, what was left and why, failures.
var Outcomes = []Outcome{OutcomeDrained, OutcomeRestored, OutcomeRepaired, OutcomeAcked, OutcomeCleared, OutcomeYoung, OutcomeExcluded,
	OutcomeHandled, OutcomeUntriggerable, OutcomeCrash, OutcomeChanged, OutcomeGone, OutcomeNotFound, OutcomeRefused, OutcomeCancelled, OutcomeFailed}

// Done reports whether the outcome is the action having been carried out.
func (o Outcome) Done() bool {
	return o == OutcomeDrained || o == OutcomeRestored || o == OutcomeRepaired || o == OutcomeAcked || o == OutcomeCleared
}

// readFailed is the outcome of an action whose read of its blob failed: the blob is missing (missing), the
// action was cancelled meanwhile, an entry the store refuses, or the read failed.
func readFailed(ctx context.Context, r Result, err error, missing Outcome) Result {
	switch {
	case errors.Is(err, store.ErrNotFound):
		r.Outcome, r.Reason = missing, Reason{Kind: ReasonNotFound}
	case errors.Is(err, store.ErrRefused):
		r.Outcome, r.Reason = OutcomeRefused, Reason{Kind: ReasonRefusedEntry, Err: err.Error()}
	case ctx.Err() != nil:
		r.Outcome = OutcomeCancelled
	default:
		r.Outcome, r.Reason = OutcomeFailed, failed(err)
	}
	return r
}

// Result is one blob's outcome.
type Result struct {
	Name    string
	Outcome Outcome
	// Target is the restored copy's name (a repair's new blob).
	Target string
	// Retired is the original a repair deleted once its new blob had landed.
	Retired string
	// Reason says why a blob failed, was refused or left alone, or warns about what was left (internal/present
	// words it).
	Reason Reason
	// Resume is how many events a restore sets moving again.
	Resume int
	// NewETag is the ETag of what the action wrote, where it knows it without asking (a drain's re-upload): the
	// record's "ETag after" (internal/record asks the container where it is empty).
	NewETag string
}

// Tally counts results per outcome.
type Tally map[Outcome]int

// TallyOf counts a run's results.
func TallyOf(rs []Result) Tally {
	t := Tally{}
	for _, r := range rs {
		t[r.Outcome]++
	}
	return t
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
	progress    func(Result)
	stopAfter   int

	mu      sync.Mutex
	streak  int
	why     Reason
	tripped context.CancelFunc
}

func (r *runner) run(ctx context.Context, names []string, do func(ctx context.Context, i int) Result) []Result {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	r.tripped = stop
	n := r.concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	results := make([]Result, len(names))
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
func (r *runner) one(ctx context.Context, i int, name string, do func(ctx context.Context, i int) Result, results []Result) {
	res := Result{Name: name, Outcome: OutcomeCancelled}
	if ctx.Err() == nil {
		res = do(ctx, i)
	}
	if res.Outcome == OutcomeCancelled && res.Reason.Kind == ReasonNone {
		res.Reason = r.stopReason()
	}
	r.count(res)
	results[i] = res
	if r.progress != nil {
		r.progress(res)
	}
}

func (r *runner) count(res Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case res.Outcome == OutcomeFailed:
		r.streak++
		limit := r.stopAfter
		if limit == 0 {
			limit = StopAfterFailures
		}
		if limit > 0 && r.streak >= limit && r.why.Kind == ReasonNone {
			r.why = Reason{Kind: ReasonStopped, Count: r.streak, Err: res.Reason.Err}
			r.tripped()
		}
	case res.Outcome != OutcomeCancelled:
		r.streak = 0
	}
}

func (r *runner) stopReason() Reason {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.why
}
