package replay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/deadletter/deadletter/store"
)

// MetaRepairedFrom records which blob a repaired payload replaces ("" for a resubmit that replaces none).
const MetaRepairedFrom = "repairedFrom"

// Original is the blob a repair replaces, as the operator opened it: what they edited, and the ETag that says
// whether it is still that blob when the repair is written.
type Original struct {
	Name         string
	ETag         string
	LastModified time.Time
	Body         []byte
	// Live: a root blob younger than the TTL — its own trigger may still arrive and consume it.
	Live bool
}

// OriginalOf is the blob b as a repair's original, judged live or not against now.
func (c Config) OriginalOf(b store.Blob, now time.Time) *Original {
	return &Original{Name: b.Name, ETag: b.ETag, LastModified: b.LastModified, Body: b.Body,
		Live: c.Classify(b.Name, now.Sub(b.LastModified)) == PaneLive}
}

// Counted is an event whose id, as the operator left it, still carries a replay attempt.
type Counted struct {
	Index   int
	ID      string
	Attempt Attempt
	// Capped: the attempt is at or over the cap, so the replay quarantines the event on sight.
	Capped bool
}

// RepairPlan is what writing an edited payload back as a new root dead letter will do, judged with the same rules
// as show: what the replay will do with the edited bytes (After) beside what it would have done with the
// original's bytes at the root (Before), the name it is written under, what is retired once it has landed, and
// why it is refused without --force.
type RepairPlan struct {
	// Original is the blob replaced; nil for a resubmit that replaces none.
	Original *Original
	// Target is the new root blob's name (RepairTarget, or the next free alternative).
	Target string
	// Body is what is written: the edited bytes exactly as the operator left them.
	Body    []byte
	Payload *Payload
	After   Preview
	// Before is the original's bytes judged at the same root name (nil without an original).
	Before *Preview
	// Counted lists the events whose id still carries an attempt count (written as they are).
	Counted []Counted
	// Undiagnosed counts the edited events without Event Grid's deadLetterReason where the original's events all
	// had one: the edit dropped the diagnostics that say why they dead-lettered (written as it stands).
	Undiagnosed int
	// Retire: the original is deleted (If-Match its ETag) once the new blob has landed — a quarantine copy or a
	// root blob; an archived record never is.
	Retire bool
	// Refusal says why the repair is refused (Forceable: --force writes it anyway).
	Refusal Reason

	base string
	alt  int
}

// Refused reports whether the plan refuses the repair without --force.
func (rp RepairPlan) Refused() bool { return rp.Refusal.Kind != ReasonNone }

// PlanRepair judges body as the replacement of orig. The new blob is named after the original (RepairTarget), in
// its subscription and hour folder; where that name holds a different body, the next free alternative.
func (c Config) PlanRepair(ctx context.Context, st store.Container, orig *Original, body []byte) (RepairPlan, error) {
	rp := RepairPlan{Original: orig, Body: body, Retire: !strings.HasPrefix(orig.Name, ArchivedPrefix)}
	target, err := RepairTarget(orig.Name, orig.LastModified)
	if err != nil {
		rp.judge(c, orig.Name)
		rp.Refusal = Reason{Kind: ReasonNoTarget, Err: err.Error()}
		return rp, nil
	}
	before := c.Plan(target, orig.Body, ParsePayload(orig.Body))
	rp.Before = &before
	return rp, rp.finish(ctx, c, st, target)
}

// PlanResubmit judges body, fixed elsewhere, as a new dead letter of subscription written at now: named after its
// content in now's hour folder, so a retry of the same file within the hour finds what it wrote.
func (c Config) PlanResubmit(ctx context.Context, st store.Container, subscription string, body []byte, now time.Time) (RepairPlan, error) {
	sum := sha256.Sum256(body)
	rp := RepairPlan{Body: body}
	return rp, rp.finish(ctx, c, st, DeadLetterName(subscription, now, "resubmitted-"+hex.EncodeToString(sum[:16])))
}

// finish judges the body at target and settles the name it will really take, as the write will.
func (rp *RepairPlan) finish(ctx context.Context, c Config, st store.Container, target string) error {
	rp.Target, rp.base = target, target
	rp.judge(c, target)
	var why Reason
	switch err := restorable(st, target); {
	case Untriggerable(target):
		why = Reason{Kind: ReasonUntriggerableTarget, Name: target}
	case err != nil:
		why = Reason{Kind: ReasonCannotHold, Err: err.Error()}
	}
	if why.Kind != ReasonNone {
		rp.Target, rp.Refusal = "", why
		return nil
	}
	name, n, err := place(ctx, st, placement{base: target, body: rp.Body}, true)
	var unfit nameUnfit
	switch {
	case errors.As(err, &unfit):
		rp.Target, rp.Refusal = "", unfit.reason()
	case err != nil:
		return err
	default:
		rp.Target, rp.alt = name, n
	}
	return nil
}

// judge works out what the replay will do with the edited bytes at the root name target, and the refusals --force
// lifts: nothing changed, still malformed, a crash, no events, events still quarantined, a live original.
func (rp *RepairPlan) judge(c Config, target string) {
	rp.Payload = ParsePayload(rp.Body)
	rp.After = c.Plan(target, rp.Body, rp.Payload)
	if !rp.Payload.Malformed() {
		for _, ev := range rp.Payload.Events {
			if id := ParseID(ev.ID, c.Separator); id.Original != ev.ID {
				rp.Counted = append(rp.Counted, Counted{Index: ev.Index, ID: ev.ID, Attempt: id.Attempt, Capped: id.Attempt.AtLeast(c.MaxReplays)})
			}
		}
	}
	if rp.Original != nil && !rp.Payload.Malformed() && diagnosed(ParsePayload(rp.Original.Body)) {
		for _, ev := range rp.Payload.Events {
			if ev.DeadLetterReason == "" {
				rp.Undiagnosed++
			}
		}
	}
	a := &rp.After
	switch {
	case rp.Original != nil && bytes.Equal(rp.Body, rp.Original.Body):
		rp.Refusal = Reason{Kind: ReasonUnchanged, Forceable: true}
	case a.Malformed:
		rp.Refusal = Reason{Kind: ReasonMalformed, Err: rp.Payload.Err.Error(), Forceable: true}
	case a.Crash != nil:
		rp.Refusal = Reason{Kind: ReasonCrash, Depth: a.Crash.Depth, Forceable: true}
	case len(rp.Payload.Events) == 0:
		rp.Refusal = Reason{Kind: ReasonNoEvents, Forceable: true}
	case len(a.Quarantine) > 0:
		rp.Refusal = Reason{Kind: ReasonStillQuarantined, Count: len(a.Quarantine), Verdicts: Primaries(a.Quarantine), Forceable: true}
	case rp.Original != nil && rp.Original.Live:
		rp.Refusal = Reason{Kind: ReasonLiveOriginal, Forceable: true}
	}
}

// RepairOptions control a repair.
type RepairOptions struct {
	// Force writes a repair its plan refuses where --force may lift the refusal.
	Force bool
	// DryRun says what would be written, and writes nothing.
	DryRun bool
	// ReadOnly refuses the repair before any call to the container.
	ReadOnly bool
}

// Repair writes the plan's payload as a new root dead letter — If-None-Match "*", so the write raises the
// BlobCreated the replay is triggered by — and only after it has landed retires the original, If-Match the ETag
// it was opened at. An original that changed or vanished since it was opened stops the repair before anything is
// written (changed), unless this very repair had already landed (a retry after a lost answer: nothing is written
// twice, which would republish its events twice). A write cut short is never retried under another name.
func Repair(ctx context.Context, c store.Container, rp RepairPlan, o RepairOptions) (Result, error) {
	if o.ReadOnly {
		return Result{}, ErrReadOnly
	}
	r := Result{Name: rp.Target, Target: rp.Target}
	orig := rp.Original
	if orig != nil {
		r.Name = orig.Name
	}
	if rp.Refused() && (!o.Force || !rp.Refusal.Forceable || rp.Target == "") {
		r.Outcome, r.Reason, r.Target = OutcomeRefused, rp.Refusal, ""
		return r, nil
	}
	meta := map[string]string{}
	if orig != nil {
		meta[MetaRepairedFrom] = orig.Name
		bi, err := c.Stat(ctx, orig.Name)
		switch {
		case err == nil && bi.ETag == orig.ETag:
		case err == nil || errors.Is(err, store.ErrNotFound):
			if st, serr := standing(ctx, c, rp.Target, rp.Body); serr == nil && st == landed {
				r.Outcome, r.Reason = OutcomeRepaired, Reason{Kind: ReasonOriginalLeft}
				return r, nil // (a retry: this repair had landed, and the original moved on since)
			}
			r.Outcome, r.Reason, r.Target = OutcomeChanged, Reason{Kind: ReasonChangedSinceOpened}, ""
			return r, nil
		default:
			return readFailed(ctx, r, err, OutcomeGone), nil
		}
	}
	wctx := context.WithoutCancel(ctx) // once a repair writes, it finishes: never a new blob with the original half-retired
	target, _, err := place(wctx, c, placement{base: rp.base, alt: rp.alt, body: rp.Body, contentType: "application/json", meta: meta}, o.DryRun)
	r.Target = target
	var unfit nameUnfit
	switch {
	case errors.As(err, &unfit):
		r.Outcome, r.Reason = OutcomeRefused, unfit.reason()
		return r, nil
	case err != nil:
		r.Outcome, r.Reason = OutcomeFailed, failed(err)
		return r, nil
	}
	r.Outcome = OutcomeRepaired
	if o.DryRun || orig == nil || !rp.Retire {
		return r, nil
	}
	// The new blob has landed; only now may the original go.
	switch err := c.Delete(wctx, orig.Name, orig.ETag); {
	case err == nil:
		r.Retired = orig.Name
	case errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrNotFound):
		r.Reason = Reason{Kind: ReasonOriginalLeft}
	default:
		r.Outcome, r.Reason = OutcomeFailed, Reason{Kind: ReasonWrittenNotRetired, Name: target, Err: err.Error()}
	}
	return r, nil
}

// diagnosed reports whether every event of p carries Event Grid's deadLetterReason.
func diagnosed(p *Payload) bool {
	for _, ev := range p.Events {
		if ev.DeadLetterReason == "" {
			return false
		}
	}
	return len(p.Events) > 0
}
