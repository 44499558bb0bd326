package rules

import (
	"context"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
)

// DrainTarget is a blob to drain. With an ETag it is held to it (a blob rewritten since it was listed is
// skipped); without one it is taken as it is read.
type DrainTarget struct {
	blob.Info
	// HandledBy names the replay's copy that shows this blob was already handled ("" when it was not): it is
	// skipped unless DrainOptions.IncludeHandled.
	HandledBy string
	// QuarantineTwin says the listing holds this blob's quarantine/ copy: whether that copy is the whole record
	// (the blob was handled) depends on the payload, which the drain judges on the bytes it reads.
	QuarantineTwin bool
	// ListedLive says the blob was younger than the TTL when it was listed, so the question asked before the
	// drain did not count it: it is left alone as young even if it has come of age since.
	ListedLive bool
	// CrashDepth is, when the listing read the payload, how deep it nests past what the replay function can
	// serialize (0: it does not crash, or it was not read — the drain then judges the bytes it reads).
	CrashDepth int
}

// DrainOptions control a drain.
type DrainOptions struct {
	DryRun bool
	// ReadOnly refuses the drain before any call to the container.
	ReadOnly bool
	// IncludeHandled drains blobs the replay already handled (their events are then republished again).
	IncludeHandled bool
	// Force drains blobs the replay function crashes on (too deep to serialize): without it they are left, since
	// a drain only makes the replay throw on them again.
	Force bool
	// Concurrency bounds parallel blobs (DefaultConcurrency when ≤ 0).
	Concurrency int
	// StopAfterFailures stops the drain after this many blobs fail in a row (StopAfterFailures when 0; < 0 never).
	StopAfterFailures int
	// Progress is called once per blob as it finishes, from any goroutine.
	Progress func(Result)
	// Rate paces the drain: at most this many blobs a second (0: as fast as Concurrency allows). Every re-upload
	// is a BlobCreated, and every replayed event a publish: a paced drain hands a handler just back on its feet
	// the backlog at a rate it can take.
	Rate float64
	// Wave is how many blobs go out between two looks at the handlers (Check); 0: one wave.
	Wave int
	// Check is asked after each wave which subscriptions' handlers fail again (subscription, any case → what
	// says so): their blobs not yet drained are left stranded (ReasonHandlerFailing), the others go on.
	Check func(ctx context.Context) map[string]string
}

// DrainTargets lists what a drain with no names takes: every stranded blob of the snapshot, handled ones marked.
func (c Config) DrainTargets(s *Snapshot) []DrainTarget { return c.PlanDrainStranded(s).all }

// DrainTargetOf is the drain target for one listed item.
func (c Config) DrainTargetOf(it *Item, now time.Time) DrainTarget {
	t := DrainTarget{Info: it.Info, HandledBy: c.AlertsOf(it, now).HandledBy, QuarantineTwin: it.QuarantineTwin,
		ListedLive: it.Pane == PaneLive}
	if it.Summary != nil && IsRoot(it.Name) {
		t.CrashDepth = it.Summary.CrashDepth
	}
	return t
}

// CrashDepthOf is how deep a blob's payload nests past what the replay function serializes (0: it does not crash).
// A payload shorter than the depth that crashes cannot nest that deep (every level opens with a byte), so most
// blobs are not parsed at all.
func (c Config) CrashDepthOf(name string, body []byte) int {
	if safe, _ := c.stackBand(); len(body) <= safe || !IsRoot(name) {
		return 0
	}
	return c.Summarize(name, ParsePayload(body)).CrashDepth
}

// CrashResult is the outcome of a blob the replay function crashes on, left by a drain that was not forced.
func CrashResult(r Result, depth int) Result {
	r.Outcome, r.Reason = OutcomeCrash, Reason{Kind: ReasonCrash, Depth: depth, Forceable: true}
	return r
}

// HandledResult is the outcome of a blob the replay already handled.
func HandledResult(r Result, by string) Result {
	r.Outcome, r.Reason = OutcomeHandled, Reason{Kind: ReasonHandled, Name: by}
	return r
}
