package replay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"github.com/deadletter/deadletter/store"
)

// newActionID is a fresh id for one drain or restore run: 64 random bits, hex.
func newActionID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// DrainTarget is a blob to drain. With an ETag it is held to it (a blob rewritten since it was listed is
// skipped); without one it is taken as it is read.
type DrainTarget struct {
	store.BlobInfo
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
}

// DrainTargets lists what a drain with no names takes: every stranded blob of the snapshot, handled ones marked.
func (c Config) DrainTargets(s *Snapshot) []DrainTarget { return c.PlanDrainStranded(s).all }

// DrainTargetOf is the drain target for one listed item.
func (c Config) DrainTargetOf(it *Item, now time.Time) DrainTarget {
	t := DrainTarget{BlobInfo: it.Info, HandledBy: c.AlertsOf(it, now).HandledBy, QuarantineTwin: it.QuarantineTwin,
		ListedLive: it.Pane == PaneLive}
	if it.Summary != nil && IsRoot(it.Name) {
		t.CrashDepth = it.Summary.CrashDepth
	}
	return t
}

// Drain re-uploads stranded blobs so a fresh BlobCreated reaches the replay: the identical bytes, to the same
// name, If-Match the ETag read, keeping content type and metadata and adding drainCount and drainedAt. The rules
// are re-checked at write time on what was just read — only root blobs, only age ≥ TTL — and a blob that changed
// or vanished since it was listed is skipped, never resurrected. Once ctx is cancelled (or StopAfterFailures
// blobs failed in a row) no further blob is touched; the ones not reached come back cancelled.
func Drain(ctx context.Context, c store.Container, cfg Config, targets []DrainTarget, o DrainOptions) ([]Result, error) {
	if o.ReadOnly {
		return nil, ErrReadOnly
	}
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.Name
	}
	r := &runner{concurrency: o.Concurrency, progress: o.Progress, stopAfter: o.StopAfterFailures}
	id := newActionID()
	return r.run(ctx, names, func(ctx context.Context, i int) Result { return drainOne(ctx, c, cfg, targets[i], o, id) }), nil
}

func drainOne(ctx context.Context, c store.Container, cfg Config, want DrainTarget, o DrainOptions, id string) Result {
	r, skip := leaveAlone(cfg, want, o)
	if skip {
		return r
	}
	b, err := c.Read(ctx, want.Name, store.MaxBlobBytes)
	if err != nil {
		return readFailed(ctx, r, err, OutcomeGone)
	}
	if want.ETag != "" && b.ETag != want.ETag {
		r.Outcome, r.Reason = OutcomeChanged, Reason{Kind: ReasonChangedSinceListed}
		return r
	}
	now, err := serviceNow(ctx, c, b)
	if err != nil {
		r.Outcome, r.Reason = OutcomeFailed, failed(err)
		return r
	}
	if want.QuarantineTwin && !o.IncludeHandled {
		// Judged on the bytes about to be re-uploaded, with the same rule the listing uses.
		it := cfg.MakeItem(b.BlobInfo, now)
		s := cfg.Summarize(b.Name, ParsePayload(b.Body))
		it.Summary, it.QuarantineTwin = &s, true
		if a := cfg.AlertsOf(&it, now); a.Handled {
			return handledResult(r, a.HandledBy)
		}
	}
	if age := now.Sub(b.LastModified); age < cfg.TTL {
		r.Outcome, r.Reason = OutcomeYoung, Reason{Kind: ReasonYoung, Age: age, TTL: cfg.TTL}
		return r
	}
	if depth := cfg.crashDepthOf(b); depth > 0 && !o.Force {
		// Judged on the bytes about to be re-uploaded: the listing may not have read them.
		return crashResult(r, depth)
	}
	if o.DryRun {
		r.Outcome = OutcomeDrained
		return r
	}
	if ctx.Err() != nil {
		r.Outcome = OutcomeCancelled
		return r
	}
	return rewrite(ctx, c, b, now, r, id)
}

// crashDepthOf is how deep a blob's payload nests past what the replay function serializes (0: it does not crash).
// A payload shorter than the depth that crashes cannot nest that deep (every level opens with a byte), so most
// blobs are not parsed at all.
func (c Config) crashDepthOf(b store.Blob) int {
	if safe, _ := c.stackBand(); len(b.Body) <= safe || !IsRoot(b.Name) {
		return 0
	}
	return c.Summarize(b.Name, ParsePayload(b.Body)).CrashDepth
}

// crashResult is the outcome of a blob the replay function crashes on, left by a drain that was not forced.
func crashResult(r Result, depth int) Result {
	r.Outcome, r.Reason = OutcomeCrash, Reason{Kind: ReasonCrash, Depth: depth, Forceable: true}
	return r
}

// handledResult is the outcome of a blob the replay already handled.
func handledResult(r Result, by string) Result {
	r.Outcome, r.Reason = OutcomeHandled, Reason{Kind: ReasonHandled, Name: by}
	return r
}

// rewrite is the drain's one write: the same bytes If-Match the ETag read, with the drain stamped in metadata —
// its count, its time, and the id of this drain (id), by which a write whose answer was lost is known for ours.
// The write is not tied to ctx: once started it completes, so a cancel never leaves a half-made request.
func rewrite(ctx context.Context, c store.Container, b store.Blob, now time.Time, r Result, id string) Result {
	count := MarksOf(b.Metadata).Drains()
	meta := withDrainMark(b.Metadata, now, id)
	ct := b.ContentType
	if ct == "" {
		ct = "application/json"
	}
	wctx := context.WithoutCancel(ctx)
	written, err := c.Write(wctx, b.Name, b.Body, store.WriteOptions{IfMatch: b.ETag, ContentType: ct, Metadata: meta})
	switch {
	case err == nil:
		r.Outcome, r.NewETag = OutcomeDrained, written.ETag
	case errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrNotFound):
		r.Outcome = OutcomeChanged
		cur, serr := c.Stat(wctx, b.Name)
		switch {
		case errors.Is(serr, store.ErrNotFound):
			r.Outcome = OutcomeGone
		case serr == nil && isOurDrain(cur, id, count+1, len(b.Body)):
			// The write landed but its answer was lost; the SDK's retry then met our own new ETag.
			r.Outcome, r.NewETag = OutcomeDrained, cur.ETag
		}
	default:
		r.Outcome, r.Reason = OutcomeFailed, failed(err)
		// A connection that broke after the request went out leaves the write's fate unknown: look.
		if cur, serr := c.Stat(wctx, b.Name); serr == nil && isOurDrain(cur, id, count+1, len(b.Body)) {
			r.Outcome, r.Reason, r.NewETag = OutcomeDrained, Reason{}, cur.ETag
		}
	}
	return r
}

// isOurDrain reports whether a blob is the one this drain wrote: its id, the count it wrote and the size. Two
// drains of one blob in the same second (Azure's clock has no finer grain) carry different ids, so only the one
// whose write landed says drained.
func isOurDrain(bi store.BlobInfo, id string, count, size int) bool {
	m := MarksOf(bi.Metadata)
	return m.DrainID == id && m.DrainCount == strconv.Itoa(count) && bi.Size == int64(size)
}

// serviceNow is the service's clock as of a read, asking the service when the read carried none.
func serviceNow(ctx context.Context, c store.Container, b store.Blob) (time.Time, error) {
	if !b.ServiceTime.IsZero() {
		return b.ServiceTime, nil
	}
	return c.Now(ctx)
}
