package replay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"golang.org/x/time/rate"
)

// newActionID is a fresh id for one drain or restore run: 64 random bits, hex.
func newActionID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// DrainAsPlanned drains as planned: every blob the plan was made for, in order — the ones it leaves reported as Left says,
// the others re-uploaded under the ETag listed (and judged again on what is read then). run gives what belongs
// to the run, not the plan: DryRun, ReadOnly, Concurrency, StopAfterFailures, Progress.
func DrainAsPlanned(ctx context.Context, c store.Container, cfg rules.Config, p *rules.DrainPlan, run rules.DrainOptions) ([]rules.Result, error) {
	run.IncludeHandled, run.Force = p.Options.IncludeHandled, p.Options.Force
	return Drain(ctx, c, cfg, p.Every(), run)
}

// Drain re-uploads stranded blobs so a fresh BlobCreated reaches the replay: the identical bytes, to the same
// name, If-Match the ETag read, keeping content type and metadata and adding drainCount and drainedAt. The rules
// are re-checked at write time on what was just read — only root blobs, only age ≥ TTL — and a blob that changed
// or vanished since it was listed is skipped, never resurrected. Once ctx is cancelled (or StopAfterFailures
// blobs failed in a row) no further blob is touched; the ones not reached come back cancelled.
func Drain(ctx context.Context, c store.Container, cfg rules.Config, targets []rules.DrainTarget, o rules.DrainOptions) ([]rules.Result, error) {
	if o.ReadOnly {
		return nil, ErrReadOnly
	}
	id := newActionID()
	r := &runner{concurrency: o.Concurrency, progress: o.Progress, stopAfter: o.StopAfterFailures}
	if o.Rate > 0 {
		r.pace = rate.NewLimiter(rate.Limit(o.Rate), 1)
	}
	wave := o.Wave
	if wave <= 0 || o.Check == nil {
		wave = len(targets)
	}
	var results []rules.Result
	stopped := map[string]string{} // subscription (upper case) → why its handler is said to fail again
	for start := 0; start < len(targets); start += wave {
		part := targets[start:min(start+wave, len(targets))]
		take, left := part, map[int]rules.Result{} // (nothing stopped: the wave as it is, no copy of it)
		if len(stopped) > 0 {
			take = nil
			for i, t := range part {
				if why, ok := stopped[strings.ToUpper(rules.ParseBlobName(t.Name).Subscription)]; ok {
					left[i] = rules.Result{Name: t.Name, Outcome: rules.OutcomeHeld,
						Reason: rules.Reason{Kind: rules.ReasonHandlerFailing, Name: rules.ParseBlobName(t.Name).Subscription, Err: why}}
					if o.Progress != nil {
						o.Progress(left[i])
					}
					continue
				}
				take = append(take, t)
			}
		}
		done := r.run(ctx, namesOf(take), func(ctx context.Context, i int) rules.Result { return drainOne(ctx, c, cfg, take[i], o, id) })
		if len(part) == len(targets) {
			return done, nil // one wave, nothing held: its results are the drain's (no copy of a million)
		}
		if results == nil {
			results = make([]rules.Result, 0, len(targets))
		}
		for i, k := 0, 0; i < len(part); i++ {
			if res, ok := left[i]; ok {
				results = append(results, res)
				continue
			}
			results = append(results, done[k])
			k++
		}
		if start+wave < len(targets) && o.Check != nil && ctx.Err() == nil {
			for sub, why := range o.Check(ctx) {
				stopped[strings.ToUpper(sub)] = why
			}
		}
	}
	if results == nil {
		results = []rules.Result{}
	}
	return results, nil
}

// namesOf are the targets' names, in order.
func namesOf(targets []rules.DrainTarget) []string {
	names := make([]string, len(targets))
	for i := range targets {
		names[i] = targets[i].Name
	}
	return names
}

func drainOne(ctx context.Context, c store.Container, cfg rules.Config, want rules.DrainTarget, o rules.DrainOptions, id string) rules.Result {
	r, skip := rules.LeaveAlone(cfg, want, o)
	if skip {
		return r
	}
	b, err := c.Read(ctx, want.Name, store.MaxBlobBytes)
	if err != nil {
		return readFailed(ctx, r, err, rules.OutcomeGone)
	}
	if want.ETag != "" && b.ETag != want.ETag {
		r.Outcome, r.Reason = rules.OutcomeChanged, rules.Reason{Kind: rules.ReasonChangedSinceListed}
		return r
	}
	now, err := serviceNow(ctx, c, b)
	if err != nil {
		r.Outcome, r.Reason = rules.OutcomeFailed, rules.Failure(err)
		return r
	}
	if want.QuarantineTwin && !o.IncludeHandled {
		// Judged on the bytes about to be re-uploaded, with the same rule the listing uses.
		it := cfg.MakeItem(b.BlobInfo, now)
		s := cfg.Summarize(b.Name, rules.ParsePayload(b.Body))
		it.Summary, it.QuarantineTwin = &s, true
		if a := cfg.AlertsOf(&it, now); a.Handled {
			return rules.HandledResult(r, a.HandledBy)
		}
	}
	if age := now.Sub(b.LastModified); age < cfg.TTL {
		r.Outcome, r.Reason = rules.OutcomeYoung, rules.Reason{Kind: rules.ReasonYoung, Age: age, TTL: cfg.TTL}
		return r
	}
	if depth := cfg.CrashDepthOf(b.Name, b.Body); depth > 0 && !o.Force {
		// Judged on the bytes about to be re-uploaded: the listing may not have read them.
		return rules.CrashResult(r, depth)
	}
	if o.DryRun {
		r.Outcome = rules.OutcomeDrained
		return r
	}
	if ctx.Err() != nil {
		r.Outcome = rules.OutcomeCancelled
		return r
	}
	return rewrite(ctx, c, b, now, r, id)
}

// rewrite is the drain's one write: the same bytes If-Match the ETag read, with the drain stamped in metadata —
// its count, its time, and the id of this drain (id), by which a write whose answer was lost is known for ours.
// The write is not tied to ctx: once started it completes, so a cancel never leaves a half-made request.
func rewrite(ctx context.Context, c store.Container, b store.Blob, now time.Time, r rules.Result, id string) rules.Result {
	count := rules.MarksOf(b.Metadata).Drains()
	meta := rules.WithDrainMark(b.Metadata, now, id)
	ct := b.ContentType
	if ct == "" {
		ct = "application/json"
	}
	wctx := context.WithoutCancel(ctx)
	written, err := c.Write(wctx, b.Name, b.Body, store.WriteOptions{IfMatch: b.ETag, ContentType: ct, Metadata: meta})
	switch {
	case err == nil:
		r.Outcome, r.NewETag = rules.OutcomeDrained, written.ETag
	case errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrNotFound):
		r.Outcome = rules.OutcomeChanged
		cur, serr := c.Stat(wctx, b.Name)
		switch {
		case errors.Is(serr, store.ErrNotFound):
			r.Outcome = rules.OutcomeGone
		case serr == nil && isOurDrain(cur, id, count+1, len(b.Body)):
			// The write landed but its answer was lost; the SDK's retry then met our own new ETag.
			r.Outcome, r.NewETag = rules.OutcomeDrained, cur.ETag
		}
	default:
		r.Outcome, r.Reason = rules.OutcomeFailed, rules.Failure(err)
		// A connection that broke after the request went out leaves the write's fate unknown: look.
		if cur, serr := c.Stat(wctx, b.Name); serr == nil && isOurDrain(cur, id, count+1, len(b.Body)) {
			r.Outcome, r.Reason, r.NewETag = rules.OutcomeDrained, rules.Reason{}, cur.ETag
		}
	}
	return r
}

// isOurDrain reports whether a blob is the one this drain wrote: its id, the count it wrote and the size. Two
// drains of one blob in the same second (Azure's clock has no finer grain) carry different ids, so only the one
// whose write landed says drained.
func isOurDrain(bi store.BlobInfo, id string, count, size int) bool {
	m := rules.MarksOf(bi.Metadata)
	return m.DrainID == id && m.DrainCount == strconv.Itoa(count) && bi.Size == int64(size)
}

// serviceNow is the service's clock as of a read, asking the service when the read carried none.
func serviceNow(ctx context.Context, c store.Container, b store.Blob) (time.Time, error) {
	if !b.ServiceTime.IsZero() {
		return b.ServiceTime, nil
	}
	return c.Now(ctx)
}
