package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deadletter/deadletter/store"
)

// Outcome is what an action did to one blob.
type Outcome string

// Outcomes of drain and restore (SPEC §4), plus cancelled for blobs a cancel reached before they were touched.
const (
	OutcomeDrained   Outcome = "drained"
	OutcomeYoung     Outcome = "young"
	OutcomeExcluded  Outcome = "excluded"
	OutcomeChanged   Outcome = "changed"
	OutcomeGone      Outcome = "gone"
	OutcomeFailed    Outcome = "failed"
	OutcomeRestored  Outcome = "restored"
	OutcomeRefused   Outcome = "refused"
	OutcomeCancelled Outcome = "cancelled"
)

// Outcomes lists every outcome in the order reports give them: what was done, what was left and why, failures.
var Outcomes = []Outcome{OutcomeDrained, OutcomeRestored, OutcomeYoung, OutcomeExcluded, OutcomeChanged, OutcomeGone,
	OutcomeRefused, OutcomeCancelled, OutcomeFailed}

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

// String is the one-line account of a run: "12 drained, 1 gone, 2 cancelled".
func (t Tally) String() string {
	var parts []string
	for _, o := range Outcomes {
		if t[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", t[o], o))
		}
	}
	return strings.Join(parts, ", ")
}

// ErrReadOnly is returned by every action in read-only mode, before anything is touched.
var ErrReadOnly = errors.New("read-only mode: drain and restore are disabled")

// Result is one blob's outcome.
type Result struct {
	Name    string  `json:"name"`
	Outcome Outcome `json:"outcome"`
	// Target is the restored copy's name.
	Target string `json:"target,omitempty"`
	// Error says why a blob failed or was refused, or warns about what was left.
	Error string `json:"error,omitempty"`
	// Resume is how many events a restore sets moving again.
	Resume int `json:"resume,omitempty"`
}

// ActionOptions control drain and restore.
type ActionOptions struct {
	DryRun bool
	// Force lets restore proceed where nothing would resume.
	Force bool
	// ReadOnly refuses the action before any call to the container.
	ReadOnly bool
	// Concurrency bounds parallel blobs (drain; default 16).
	Concurrency int
	// Progress is called once per blob as it finishes, from any goroutine.
	Progress func(Result)
}

// Metadata a drain adds to the blob it re-uploads.
const (
	MetaDrainCount = "drainCount"
	MetaDrainedAt  = "drainedAt"
	// MetaRestoredFrom records which quarantine copy a restored blob came from.
	MetaRestoredFrom = "restoredFrom"
)

// DrainTargets lists the blobs a drain with no names would take: every stranded blob of the snapshot.
func DrainTargets(s *Snapshot) []store.BlobInfo {
	var out []store.BlobInfo
	for _, it := range s.InPane(PaneStranded) {
		out = append(out, it.BlobInfo)
	}
	return out
}

// serviceNow is the service's clock as of a read, asking the service when the read carried none.
func serviceNow(ctx context.Context, c store.Container, b store.Blob) (time.Time, error) {
	if !b.ServiceTime.IsZero() {
		return b.ServiceTime, nil
	}
	return c.Now(ctx)
}

// Drain re-uploads stranded blobs so a fresh BlobCreated reaches the replay: the identical bytes, to the same
// name, If-Match the ETag read, keeping content type and metadata and adding drainCount and drainedAt. The rules
// are re-checked at write time on what was just read — only root blobs, only age ≥ TTL — and a blob that changed
// or vanished since it was listed is skipped, never resurrected. Targets with an ETag are held to it; targets
// without one (named on the command line) are taken as they are read. Once ctx is cancelled no further blob is
// touched; the ones not reached come back cancelled.
func Drain(ctx context.Context, c store.Container, cfg Config, targets []store.BlobInfo, o ActionOptions) ([]Result, error) {
	if o.ReadOnly {
		return nil, ErrReadOnly
	}
	return forEach(ctx, targets, o, func(bi store.BlobInfo) Result { return drainOne(ctx, c, cfg, bi, o) }), nil
}

// forEach runs one action per target with bounded concurrency, results in target order.
func forEach(ctx context.Context, targets []store.BlobInfo, o ActionOptions, do func(store.BlobInfo) Result) []Result {
	n := o.Concurrency
	if n <= 0 {
		n = 16
	}
	results := make([]Result, len(targets))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < n && w < len(targets); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				r := Result{Name: targets[i].Name, Outcome: OutcomeCancelled}
				if ctx.Err() == nil {
					r = do(targets[i])
				}
				results[i] = r
				if o.Progress != nil {
					o.Progress(r)
				}
			}
		}()
	}
	for i := range targets {
		work <- i
	}
	close(work)
	wg.Wait()
	return results
}

func drainOne(ctx context.Context, c store.Container, cfg Config, want store.BlobInfo, o ActionOptions) Result {
	r := Result{Name: want.Name}
	if !IsRoot(want.Name) {
		r.Outcome, r.Error = OutcomeExcluded, "only root blobs are drained: archived/ and quarantine/ are the replay's own records"
		return r
	}
	b, err := c.Read(ctx, want.Name, store.MaxBlobBytes)
	switch {
	case errors.Is(err, store.ErrNotFound):
		r.Outcome = OutcomeGone
		return r
	case err != nil && ctx.Err() != nil:
		r.Outcome = OutcomeCancelled
		return r
	case err != nil:
		r.Outcome, r.Error = OutcomeFailed, err.Error()
		return r
	}
	if want.ETag != "" && b.ETag != want.ETag {
		r.Outcome, r.Error = OutcomeChanged, "rewritten since it was listed"
		return r
	}
	now, err := serviceNow(ctx, c, b)
	if err != nil {
		r.Outcome, r.Error = OutcomeFailed, err.Error()
		return r
	}
	if age := now.Sub(b.LastModified); age < cfg.TTL {
		r.Outcome, r.Error = OutcomeYoung, fmt.Sprintf("age %s is under the TTL %s: its own trigger may still arrive", HumanDuration(age), cfg.TTL)
		return r
	}
	if o.DryRun {
		r.Outcome = OutcomeDrained
		return r
	}
	if ctx.Err() != nil {
		r.Outcome = OutcomeCancelled
		return r
	}
	n, _ := store.MetaGet(b.Metadata, MetaDrainCount)
	count, _ := strconv.Atoi(n)
	stamp := now.UTC().Format(time.RFC3339Nano)
	meta := store.MetaWith(store.MetaWith(b.Metadata, MetaDrainCount, strconv.Itoa(count+1)), MetaDrainedAt, stamp)
	ct := b.ContentType
	if ct == "" {
		ct = "application/json"
	}
	// The write is not tied to ctx: once started it completes, so a cancel never leaves a half-made request.
	_, err = c.Write(context.WithoutCancel(ctx), b.Name, b.Body, store.WriteOptions{IfMatch: b.ETag, ContentType: ct, Metadata: meta})
	switch {
	case err == nil:
		r.Outcome = OutcomeDrained
	case errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrNotFound):
		r.Outcome = OutcomeChanged
		cur, serr := c.Stat(ctx, b.Name)
		switch {
		case errors.Is(serr, store.ErrNotFound):
			r.Outcome = OutcomeGone
		case serr == nil && isOurDrain(cur, stamp, count+1, len(b.Body)):
			// The write landed but its answer was lost; the SDK's retry then met our own new ETag.
			r.Outcome = OutcomeDrained
		}
	default:
		r.Outcome, r.Error = OutcomeFailed, err.Error()
		// A connection that broke after the request went out leaves the write's fate unknown: look.
		if cur, serr := c.Stat(context.WithoutCancel(ctx), b.Name); serr == nil && isOurDrain(cur, stamp, count+1, len(b.Body)) {
			r.Outcome, r.Error = OutcomeDrained, ""
		}
	}
	return r
}

// isOurDrain reports whether a blob is the one this drain wrote (same stamp, count and size).
func isOurDrain(bi store.BlobInfo, stamp string, count, size int) bool {
	at, _ := store.MetaGet(bi.Metadata, MetaDrainedAt)
	n, _ := store.MetaGet(bi.Metadata, MetaDrainCount)
	return at == stamp && n == strconv.Itoa(count) && bi.Size == int64(size)
}

// Restore moves quarantine blobs back to the root under a new name so the replay picks them up: ids stripped of
// any count, written with If-None-Match "*" to a name where neither it nor its archived/ or quarantine/ copy
// exists, then the quarantine copy deleted If-Match the ETag read. A blob where nothing would resume is refused
// unless o.Force. The quarantine copy is never deleted before the new copy has landed.
func Restore(ctx context.Context, c store.Container, cfg Config, names []string, o ActionOptions) ([]Result, error) {
	if o.ReadOnly {
		return nil, ErrReadOnly
	}
	targets := make([]store.BlobInfo, len(names))
	for i, n := range names {
		targets[i] = store.BlobInfo{Name: n}
	}
	o.Concurrency = 1 // restores are few and deliberate; one at a time keeps their targets apart
	return forEach(ctx, targets, o, func(bi store.BlobInfo) Result { return restoreOne(ctx, c, cfg, bi.Name, o) }), nil
}

func restoreOne(ctx context.Context, c store.Container, cfg Config, name string, o ActionOptions) Result {
	r := Result{Name: name}
	if !strings.HasPrefix(name, QuarantinePrefix) {
		r.Outcome, r.Error = OutcomeRefused, "not a quarantine blob: only quarantine/ blobs are restored"
		return r
	}
	b, err := c.Read(ctx, name, store.MaxBlobBytes)
	if err != nil {
		r.Outcome, r.Error = OutcomeFailed, err.Error()
		if errors.Is(err, store.ErrNotFound) {
			r.Error = "gone: nothing to restore"
		}
		return r
	}
	now, err := serviceNow(ctx, c, b)
	if err != nil {
		r.Outcome, r.Error = OutcomeFailed, err.Error()
		return r
	}
	plan := cfg.PlanRestore(name, b.Body, ParsePayload(b.Body), now)
	r.Resume = len(plan.Resume)
	if plan.Target == "" || plan.Refusal != "" && !o.Force {
		r.Outcome, r.Error = OutcomeRefused, plan.Refusal
		if plan.Target != "" {
			r.Error += " (--force restores it anyway)"
		}
		return r
	}
	meta := store.MetaWith(b.Metadata, MetaRestoredFrom, name)
	ct := b.ContentType
	if ct == "" {
		ct = "application/json"
	}
	for n := 1; n <= 100; n++ {
		target := plan.Target
		if n > 1 {
			target = AlternateTarget(plan.Target, n)
		}
		free, err := nameFree(ctx, c, target)
		if err != nil {
			r.Outcome, r.Error = OutcomeFailed, err.Error()
			return r
		}
		if !free {
			continue
		}
		r.Target = target
		if o.DryRun {
			r.Outcome = OutcomeRestored
			return r
		}
		wctx := context.WithoutCancel(ctx)
		_, err = c.Write(wctx, target, plan.Body, store.WriteOptions{IfNoneMatchAny: true, ContentType: ct, Metadata: meta})
		if err != nil {
			// The write may have landed with its answer lost (the SDK's retry then meets our own copy, or the
			// connection broke after the request went out): if the copy there is ours, it is in place.
			cur, serr := c.Stat(wctx, target)
			switch {
			case serr == nil && isOurRestore(cur, name, len(plan.Body)):
				err = nil
			case errors.Is(err, store.ErrAlreadyExists):
				continue // someone took the name between the check and the write
			}
		}
		if err != nil {
			r.Outcome, r.Error = OutcomeFailed, err.Error()
			return r
		}
		// The copy has landed; only now may the quarantine copy go.
		switch err := c.Delete(wctx, name, b.ETag); {
		case err == nil:
			r.Outcome = OutcomeRestored
		case errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrNotFound):
			r.Outcome, r.Error = OutcomeRestored, "the quarantine copy changed or vanished after it was read; it was left as it is"
		default:
			r.Outcome, r.Error = OutcomeFailed, fmt.Sprintf("copied to %s but the quarantine copy could not be deleted (restoring again is safe): %v", target, err)
		}
		return r
	}
	r.Outcome, r.Error = OutcomeFailed, "no free restore name after 100 tries"
	return r
}

// isOurRestore reports whether a blob is a copy of quarantine blob name with this restore's body size.
func isOurRestore(bi store.BlobInfo, name string, size int) bool {
	from, _ := store.MetaGet(bi.Metadata, MetaRestoredFrom)
	return from == name && bi.Size == int64(size)
}

// nameFree reports whether neither name nor its archived/ or quarantine/ copy exists.
func nameFree(ctx context.Context, c store.Container, name string) (bool, error) {
	for _, n := range []string{name, ArchivedPrefix + name, QuarantinePrefix + name} {
		_, err := c.Stat(ctx, n)
		if err == nil {
			return false, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
	}
	return true, nil
}

// Publisher is the Event Grid publisher the replay function republishes through.
type Publisher interface {
	// Publish sends one request of serialized events.
	Publish(ctx context.Context, events []json.RawMessage) error
}

// Handled is what one run of the replay function did.
type Handled struct {
	// Ignored is set when the blob is one of the replay's own copies (the handler's prefix guard).
	Ignored bool
	// Missing is set when the blob was gone: a prior delivery already finished it.
	Missing       bool
	Preview       Preview
	Quarantined   bool
	Published     int
	Archived      bool
	Deleted       bool
	BestEffortErr error
}

// Handle is the estate's ReplayDeadLetterEvent function as executable Go, following the same Plan that show
// predicts: quarantine copy first (If-None-Match "*"), then the sequential republish (fatal on error, so Event
// Grid would redeliver), then the best-effort archive and delete. It exists so tests can prove that what the
// tool predicts is what the estate does.
func Handle(ctx context.Context, c store.Container, cfg Config, name string, pub Publisher) (Handled, error) {
	var h Handled
	if !IsRoot(name) {
		h.Ignored = true
		return h, nil
	}
	if cfg.Handlers == nil {
		return h, errors.New("the replay function needs the handler register")
	}
	b, err := c.Read(ctx, name, store.MaxBlobBytes)
	if errors.Is(err, store.ErrNotFound) {
		h.Missing = true
		return h, nil
	}
	if err != nil {
		return h, err
	}
	h.Preview = cfg.Plan(name, b.Body, ParsePayload(b.Body))
	pv := h.Preview
	if pv.QuarantineName != "" {
		_, err := c.Write(ctx, pv.QuarantineName, pv.QuarantineBody, store.WriteOptions{IfNoneMatchAny: true, ContentType: "application/json"})
		if err != nil && !errors.Is(err, store.ErrAlreadyExists) {
			return h, err
		}
		h.Quarantined = true
	}
	if len(pv.Republish) == 0 {
		if err := c.Delete(ctx, name, b.ETag); err != nil && !errors.Is(err, store.ErrConditionFailed) {
			return h, err
		}
		h.Deleted = true
		return h, nil
	}
	for _, req := range pv.PublishRequests {
		batch := make([]json.RawMessage, 0, req.Events)
		for _, e := range pv.Republish[req.First : req.Last+1] {
			batch = append(batch, e.Body)
		}
		if err := pub.Publish(ctx, batch); err != nil {
			return h, fmt.Errorf("ReplayDeadLetterEvent failed: %w", err)
		}
		h.Published += len(batch)
	}
	if _, err := c.Write(ctx, pv.ArchiveName, b.Body, store.WriteOptions{IfNoneMatchAny: true, ContentType: "application/json"}); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
		h.BestEffortErr = err
		return h, nil
	}
	h.Archived = true
	if err := c.Delete(ctx, name, b.ETag); err != nil {
		h.BestEffortErr = err
		return h, nil
	}
	h.Deleted = true
	return h, nil
}
