package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// RestoreOptions control a restore.
type RestoreOptions struct {
	DryRun bool
	// Force restores blobs where nothing would resume (the replay re-quarantines them on sight).
	Force bool
	// ReadOnly refuses the restore before any call to the container.
	ReadOnly bool
	// Concurrency bounds parallel blobs (DefaultConcurrency when ≤ 0).
	Concurrency int
	// StopAfterFailures as for a drain.
	StopAfterFailures int
	// Progress is called once per blob as it finishes, from any goroutine.
	Progress func(rules.Result)
	// Previewed holds the ETag each quarantine copy had when its restore was previewed (by name): a copy
	// rewritten since is skipped as changed, so what is restored is what the operator was shown. A name not in
	// it is taken as it is read.
	Previewed map[string]string
}

// maxRestoreNames is how many alternative names a restore tries before giving up.
const maxRestoreNames = 100

// Restore moves quarantine blobs back to the root so the replay picks them up: ids stripped of any count,
// written with If-None-Match "*" to RestoreTarget — a name fixed by the quarantine copy's Last-Modified, so every
// retry and every concurrent restore of one copy aims at the same name — then the quarantine copy is deleted
// If-Match the ETag read. Where that name (or its archived/ or quarantine/ copy) already holds this restore's
// body, the restore already landed: nothing is written again, only the delete is done. Only a different body
// moves the name on (-2, -3…). The quarantine copy is never deleted before the new copy has landed. A blob
// where nothing would resume is refused unless o.Force.
func Restore(ctx context.Context, c store.Container, cfg rules.Config, names []string, o RestoreOptions) ([]rules.Result, error) {
	if o.ReadOnly {
		return nil, ErrReadOnly
	}
	r := &runner{concurrency: o.Concurrency, progress: o.Progress, stopAfter: o.StopAfterFailures}
	id := newActionID()
	return r.run(ctx, names, func(ctx context.Context, i int) rules.Result { return restoreOne(ctx, c, cfg, names[i], o, id) }), nil
}

func restoreOne(ctx context.Context, c store.Container, cfg rules.Config, name string, o RestoreOptions, id string) rules.Result {
	r := rules.Result{Name: name}
	if !strings.HasPrefix(name, rules.QuarantinePrefix) {
		r.Outcome, r.Reason = rules.OutcomeRefused, rules.Reason{Kind: rules.ReasonNotQuarantine}
		return r
	}
	b, err := c.Read(ctx, name, store.MaxBlobBytes)
	if err != nil {
		return UnreadRestore(ctx, name, err)
	}
	if want := o.Previewed[name]; want != "" && b.ETag != want {
		r.Outcome, r.Reason = rules.OutcomeChanged, rules.Reason{Kind: rules.ReasonChangedSincePreview}
		return r
	}
	plan, err := PlanRestoreIn(ctx, c, cfg, name, b.Body, rules.ParsePayload(b.Body), b.LastModified)
	if err != nil {
		return readFailed(ctx, r, err, rules.OutcomeFailed)
	}
	r.Resume = len(plan.Resume)
	if why, refused := plan.RefusedWith(o.Force); refused {
		r.Outcome, r.Reason = rules.OutcomeRefused, why
		return r
	}
	wctx := context.WithoutCancel(ctx) // once a restore writes, it finishes: a copy is never left half-done
	leaseID := ""
	if !o.DryRun {
		// The quarantine copy is held from here to its delete (takeLease): no repair of it can write its own new
		// blob meanwhile, nor another restore a second copy.
		var left rules.Result
		if leaseID, left = holdCopy(ctx, c, r, b); left.Outcome != "" {
			return left
		}
		defer giveLease(wctx, c, name, leaseID) // (nothing once the copy is deleted: its lease went with it)
	}
	mine := false
	target, _, err := placeCopy(wctx, c, name, b, plan, o.DryRun, id, &mine)
	r.Target = target
	var unfit nameUnfit
	switch {
	case errors.As(err, &unfit):
		r.Outcome, r.Reason = rules.OutcomeRefused, unfit.reason()
		return r
	case err != nil:
		r.Outcome, r.Reason = rules.OutcomeFailed, rules.Failure(err)
		return r
	case o.DryRun:
		r.Outcome = rules.OutcomeRestored
		return r
	}
	// The copy has landed; only now may the quarantine copy go.
	switch err := deleteHeld(wctx, c, name, b.ETag, leaseID); {
	case err == nil:
		r.Outcome = rules.OutcomeRestored
	case !mine && (errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConditionFailed)) && isGone(wctx, c, name):
		// Another restore wrote the copy and took the quarantine copy away: it restored it, not this one.
		r.Outcome = rules.OutcomeGone
	case errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrNotFound):
		r.Outcome, r.Reason = rules.OutcomeRestored, rules.Reason{Kind: rules.ReasonCopyLeft}
	default:
		r.Outcome, r.Reason = rules.OutcomeFailed, rules.Reason{Kind: rules.ReasonCopiedNotDeleted, Name: target, Err: err.Error()}
	}
	return r
}

// holdCopy takes the lease of the quarantine copy b, If-Match its ETag as read: its id, or the result of a copy
// gone (another restore or a repair took it away meanwhile), changed, or that could not be leased.
func holdCopy(ctx context.Context, c store.Container, r rules.Result, b store.Blob) (string, rules.Result) {
	id, err := takeLease(ctx, c, b.Name, b.ETag)
	switch {
	case err == nil:
		return id, rules.Result{}
	case changed(err) && isGone(context.WithoutCancel(ctx), c, b.Name):
		r.Outcome = rules.OutcomeGone
	case changed(err):
		r.Outcome, r.Reason = rules.OutcomeChanged, rules.Reason{Kind: rules.ReasonChangedSincePreview}
	default:
		r = readFailed(ctx, r, err, rules.OutcomeFailed)
	}
	return "", r
}

// UnreadRestore is the result of restoring a quarantine blob that could not be read: not found, cancelled, or
// failed with the error. A restore's question, which reads every plan first, reports it the same way.
func UnreadRestore(ctx context.Context, name string, err error) rules.Result {
	return readFailed(ctx, rules.Result{Name: name}, err, rules.OutcomeNotFound)
}

// PlanRestoreIn is PlanRestore refused as the restore itself refuses, in the container: a copy whose original
// still lingers at the root too. The detail, the dashboard's dialog, restore's question and the restore itself all
// plan with it.
func PlanRestoreIn(ctx context.Context, st store.Container, c rules.Config, name string, body []byte, p *rules.Payload, copyModified time.Time) (rules.RestorePlan, error) {
	rp := c.PlanRestore(name, body, p, copyModified)
	if rp.Target != "" {
		if err := restorable(st, rp.Target); err != nil {
			rp.Target, rp.Refusal = "", rules.Reason{Kind: rules.ReasonCannotHold, Err: err.Error()}
		}
	}
	if rp.Target != "" {
		// The name the restore will really take: the planned one, or — where that holds a different body — the
		// next free one, which must fit too. Worked out as the restore does it, without writing.
		target, n, err := placeCopy(ctx, st, name, store.Blob{Body: body}, rp, true, "", nil)
		var unfit nameUnfit
		switch {
		case errors.As(err, &unfit):
			rp.Target, rp.Refusal = "", unfit.reason()
		case err != nil:
			return rp, err
		default:
			rp.Target, rp.Alt = target, n
		}
	}
	if rp.Refusal.Kind == rules.ReasonNone {
		orig, lingers, err := OriginalLingers(ctx, st, name)
		if err != nil {
			return rp, err
		}
		if lingers {
			rp.Refusal, rp.Lingers = rules.Reason{Kind: rules.ReasonLingers, Name: orig}, orig
		}
	}
	return rp, nil
}

// OriginalLingers reports whether the root original of a quarantine copy still exists — the replay quarantined
// its events and could not delete it — and names it. Restoring the copy then would put the same events at the
// root twice, and the original, no longer shown as handled once its copy is gone, would be drained again.
func OriginalLingers(ctx context.Context, c store.Container, quarantined string) (string, bool, error) {
	orig := strings.TrimPrefix(quarantined, rules.QuarantinePrefix)
	_, err := c.Stat(ctx, orig)
	switch {
	case err == nil:
		return orig, true, nil
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalidName):
		return orig, false, nil
	}
	return orig, false, err
}

// placeCopy puts the restored body at the first of the restore's names that is free or already holds it, and
// returns that name. It writes only where nothing stands.
// restorable reports why a restored copy cannot be written under target in the container (nil when it can): the
// container's own name limits (a directory's), for it and for the replay's quarantine/ copy of it.
func restorable(st store.Container, target string) error {
	v, ok := st.(store.NameValidator)
	if !ok {
		return nil
	}
	for _, n := range []string{target, rules.QuarantinePrefix + target} {
		if err := v.ValidateName(n); err != nil {
			return err
		}
	}
	return nil
}

// nameUnfit is a restore whose planned name holds a different body and whose next name does not fit.
type nameUnfit struct{ taken, next, why string }

func (n nameUnfit) Error() string {
	return fmt.Sprintf("%s holds a different body, and the next name, %s, %s: move this copy by hand", n.taken, n.next, n.why)
}

func (n nameUnfit) reason() rules.Reason {
	return rules.Reason{Kind: rules.ReasonNameTaken, Name: n.next, Err: n.why}
}

// placeCopy writes the restored copy under the plan's name, or — where a name holds a different body — the next
// alternative of the plan's base name, starting from the one the plan found free; it returns the name and which
// alternative it is. A dry run stops at the name it would write. The copy carries the restore run's id (id), and
// *mine (when given) is set when this run's write put it there — its write answered, or, its answer lost, the
// copy carries the id — rather than finding it already there (another restore's, or an earlier run's that
// stopped before its delete).
func placeCopy(ctx context.Context, c store.Container, from string, b store.Blob, plan rules.RestorePlan, dryRun bool, id string, mine *bool) (string, int, error) {
	base := plan.Base
	if base == "" {
		base = plan.Target
	}
	meta := rules.WithRestoreMark(b.Metadata, from, id)
	return place(ctx, c, placement{base: base, alt: plan.Alt, body: plan.Body, contentType: b.ContentType, meta: meta, id: id, mine: mine}, dryRun)
}

// placement is a new root blob written under a name fixed in advance (a restore's, a repair's): base, or the
// alternative alt of it, holding body.
type placement struct {
	base        string
	alt         int
	body        []byte
	contentType string
	meta        map[string]string
	// id, when set, is the run's id the write carries in MetaRestoreID; mine, when given, is set when this
	// write put the blob there.
	id   string
	mine *bool
	// found, when given, is set when the name already held the body (an earlier write of it landed).
	found *bool
}

// place writes p.body under the first of p's names that is free or already holds it (the write already landed),
// and returns that name and which alternative it is. It writes only where nothing stands (If-None-Match "*").
func place(ctx context.Context, c store.Container, p placement, dryRun bool) (string, int, error) {
	ct := p.contentType
	if ct == "" {
		ct = "application/json"
	}
	base := p.base
	for n := max(1, p.alt); n <= maxRestoreNames; n++ {
		target := base
		if n > 1 {
			target = rules.AlternateTarget(base, n)
			// A longer name must still fit, with the replay's quarantine/ copy of it: said here, not by a write
			// that fails (a dry run says it too).
			if utf8.RuneCountInString(rules.QuarantinePrefix+target) > rules.MaxNameLength {
				return "", n, nameUnfit{base, target, fmt.Sprintf("is over the %d characters a blob name may have", rules.MaxNameLength)}
			}
			if err := restorable(c, target); err != nil {
				return "", n, nameUnfit{base, target, "cannot be written here: " + err.Error()}
			}
		}
		for attempt := 0; attempt < 2; attempt++ {
			st, err := standing(ctx, c, target, p.body)
			if err != nil {
				return target, n, err
			}
			switch {
			case st == landed:
				p.landed()
				return target, n, nil
			case st == taken:
				attempt = 2 // a different body: the next name
				continue
			case dryRun:
				return target, n, nil
			}
			_, err = c.Write(ctx, target, p.body, store.WriteOptions{IfNoneMatchAny: true, ContentType: ct, Metadata: p.meta})
			if err == nil {
				p.wrote()
				return target, n, nil
			}
			// The answer may be lost with the write done (ErrAlreadyExists: the SDK's retry met our own write):
			// the blob is ours when it carries this run's id.
			if cur, serr := c.Stat(ctx, target); serr == nil && p.id != "" {
				if rules.MarksOf(cur.Metadata).RestoreID == p.id {
					p.wrote()
					return target, n, nil
				}
			}
			if !errors.Is(err, store.ErrAlreadyExists) {
				// The answer may be lost with the write done: look once more before calling it failed.
				if st, serr := standing(ctx, c, target, p.body); serr == nil && st == landed {
					return target, n, nil // (our own write, its answer lost)
				}
				return target, n, err
			}
			// Someone wrote the name between the look and the write (a concurrent restore of this copy, most
			// likely): look again at what is there now.
		}
	}
	return "", maxRestoreNames, fmt.Errorf("no free restore name after %d tries", maxRestoreNames)
}

// wrote marks the placement as this run's write.
func (p placement) wrote() {
	if p.mine != nil {
		*p.mine = true
	}
}

// landed marks the placement as found already written.
func (p placement) landed() {
	if p.found != nil {
		*p.found = true
	}
}

// isGone reports whether a blob is gone now (a delete under If-Match fails on a missing blob as a condition on
// some services, as not found on others).
func isGone(ctx context.Context, c store.Container, name string) bool {
	_, err := c.Stat(ctx, name)
	return errors.Is(err, store.ErrNotFound)
}

type nameState int

const (
	free nameState = iota
	landed
	taken
)

// standing says what a restore name holds: nothing (free), this restore's body under the name itself or under
// the replay's copies of it (landed — the replay may already have consumed the restored copy), or something else.
func standing(ctx context.Context, c store.Container, target string, body []byte) (nameState, error) {
	a, q := rules.Twins(target)
	st := free
	for _, n := range [...]string{target, a, q} {
		blob, err := c.Read(ctx, n, int64(len(body)))
		switch {
		case errors.Is(err, store.ErrNameTaken) && n == target:
			st = taken // (a directory's folder holds the name: it cannot be written)
		case errors.Is(err, store.ErrNotFound):
			continue
		case errors.Is(err, store.ErrTooLarge):
			st = taken
		case err != nil:
			return free, err
		case bytes.Equal(blob.Body, body):
			return landed, nil
		default:
			st = taken
		}
	}
	return st, nil
}
