package replay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// PlanRepair judges body as the replacement of orig. The new blob is named after the original (RepairTarget), in
// its subscription and hour folder; where that name holds a different body, the next free alternative.
//
// A root blob a repair wrote, given the very bytes it holds, is that repair retried after it landed (its original
// retired since, so its GUID or its name now finds the repair): nothing to write or retire — never a repair of
// the repair. (Once the replay took it, it is no dead letter waiting: judged as any blob.)
func PlanRepair(ctx context.Context, st store.Container, c rules.Config, orig *rules.Original, body []byte) (rules.RepairPlan, error) {
	if orig.RepairedFrom != "" && rules.IsRoot(orig.Name) && bytes.Equal(body, orig.Body) {
		rp := rules.RepairPlan{Original: orig, Body: body, Landed: true, Target: orig.Name, Base: orig.Name}
		rp.Judge(c, orig.Name)
		rp.Refusal, rp.Also = rules.Reason{}, nil
		return rp, nil
	}
	rp := rules.RepairPlan{Original: orig, Body: body, Retire: !strings.HasPrefix(orig.Name, rules.ArchivedPrefix)}
	target, err := rules.RepairTarget(orig.Name, orig.LastModified)
	if err != nil {
		rp.Judge(c, orig.Name)
		rp.Refusal = rules.Reason{Kind: rules.ReasonNoTarget, Err: err.Error()}
		return rp, nil
	}
	before := c.Plan(target, orig.Body, rules.ParsePayload(orig.Body))
	rp.Before = &before
	return rp, finishRepair(ctx, &rp, c, st, target)
}

// PlanResubmit judges body, fixed elsewhere, as a new dead letter of subscription: named after its content, so the
// name does not depend on the clock — a retry finds what it wrote in whichever hour folder it went to, and writes
// nothing again. A new one goes to now's hour folder. One the replay has handled since (its archived/ or
// quarantine/ copy holds the same name) is refused unless forced: its events would go out a second time.
func PlanResubmit(ctx context.Context, st store.Container, c rules.Config, subscription string, body []byte, now time.Time) (rules.RepairPlan, error) {
	sum := sha256.Sum256(body)
	file := "resubmitted-" + hex.EncodeToString(sum[:16]) + ".json"
	rp := rules.RepairPlan{Body: body}
	root, handled, err := findResubmitted(ctx, st, subscription, file)
	if err != nil {
		return rp, err
	}
	target := root
	if target == "" {
		target = rules.DeadLetterName(subscription, now, strings.TrimSuffix(file, ".json"))
	}
	if err := finishRepair(ctx, &rp, c, st, target); err != nil {
		return rp, err
	}
	if root == "" && handled != "" && rp.Refusal.Kind == rules.ReasonNone {
		rp.Refusal = rules.Reason{Kind: rules.ReasonAlreadyReplayed, Name: handled, Forceable: true}
	}
	return rp, nil
}

// findResubmitted finds an earlier resubmit of the same content to the subscription: at the root (waiting for the
// replay: the retry's own blob), else a copy the replay made of it (handled).
func findResubmitted(ctx context.Context, st store.Container, subscription, file string) (root, handled string, err error) {
	sub := strings.ToUpper(subscription) + "/"
	for _, prefix := range []string{"", rules.ArchivedPrefix, rules.QuarantinePrefix} {
		err := st.List(ctx, prefix+sub, func(p store.Page) error {
			for _, b := range p.Blobs {
				if rules.FileOf(b.Name) != file {
					continue
				}
				if prefix == "" && root == "" {
					root = b.Name
				} else if prefix != "" && handled == "" {
					handled = b.Name
				}
			}
			return nil
		})
		if err != nil {
			return "", "", err
		}
		if root != "" {
			return root, "", nil
		}
	}
	return "", handled, nil
}

// finishRepair judges the body at target and settles the name it will really take, as the write will.
func finishRepair(ctx context.Context, rp *rules.RepairPlan, c rules.Config, st store.Container, target string) error {
	rp.Target, rp.Base = target, target
	rp.Judge(c, target)
	var why rules.Reason
	switch err := restorable(st, target); {
	case rules.Untriggerable(target):
		why = rules.Reason{Kind: rules.ReasonUntriggerableTarget, Name: target}
	case err != nil:
		why = rules.Reason{Kind: rules.ReasonCannotHold, Err: err.Error()}
	}
	if why.Kind != rules.ReasonNone {
		rp.Target, rp.Refusal = "", why
		return nil
	}
	name, n, err := place(ctx, st, placement{base: target, body: rp.Body, found: &rp.Landed}, true)
	var unfit nameUnfit
	switch {
	case errors.As(err, &unfit):
		rp.Target, rp.Refusal = "", unfit.reason()
	case err != nil:
		return err
	default:
		rp.Target, rp.Alt = name, n
	}
	return nil
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
func Repair(ctx context.Context, c store.Container, rp rules.RepairPlan, o RepairOptions) (rules.Result, error) {
	if o.ReadOnly {
		return rules.Result{}, ErrReadOnly
	}
	r := rules.Result{Name: rp.Target, Target: rp.Target}
	orig := rp.Original
	if orig != nil {
		r.Name = orig.Name
	}
	if rp.Refused() && (!o.Force || !rp.Refusal.Forceable || rp.Target == "") {
		r.Outcome, r.Reason, r.Target = rules.OutcomeRefused, rp.Refusal, ""
		return r, nil
	}
	meta := map[string]string{}
	leaseID := ""
	if orig != nil {
		meta[rules.MetaRepairedFrom] = orig.Name
		var err error
		if leaseID, err = holdOriginal(ctx, c, rp, o); err != nil {
			if changed(err) {
				if st, serr := standing(ctx, c, rp.Target, rp.Body); serr == nil && st == landed {
					r.Outcome, r.Reason = rules.OutcomeRepaired, rules.Reason{Kind: rules.ReasonOriginalLeft}
					return r, nil // (a retry: this repair had landed, and the original moved on since)
				}
				r.Outcome, r.Reason, r.Target = rules.OutcomeChanged, rules.Reason{Kind: rules.ReasonChangedSinceOpened}, ""
				return r, nil
			}
			return readFailed(ctx, r, err, rules.OutcomeGone), nil
		}
	}
	wctx := context.WithoutCancel(ctx) // once a repair writes, it finishes: never a new blob with the original half-retired
	retired := false
	defer func() {
		if !retired && leaseID != "" {
			giveLease(wctx, c, orig.Name, leaseID)
		}
	}()
	var found bool
	target, _, err := place(wctx, c, placement{base: rp.Base, alt: rp.Alt, body: rp.Body, contentType: "application/json", meta: meta, found: &found}, o.DryRun)
	r.Target = target
	var unfit nameUnfit
	switch {
	case errors.As(err, &unfit):
		r.Outcome, r.Reason = rules.OutcomeRefused, unfit.reason()
		return r, nil
	case err != nil:
		r.Outcome, r.Reason = rules.OutcomeFailed, rules.Failure(err)
		return r, nil
	}
	r.Outcome = rules.OutcomeRepaired
	if found {
		r.Reason = rules.Reason{Kind: rules.ReasonAlreadyWritten, Name: target}
	}
	if o.DryRun || orig == nil || !rp.Retire {
		return r, nil
	}
	r = retire(wctx, c, orig, leaseID, r)
	retired = r.Retired != ""
	return r, nil
}

// holdOriginal makes sure the original is still what the repair opened, and — where the store leases and the
// repair will retire it — keeps it so until its delete: its lease, taken If-Match the ETag opened at, so no drain
// can re-upload it between this check and the new blob's write (its events would be at the root twice). It
// returns the lease's id ("" for none); an original changed or gone is ErrConditionFailed or ErrNotFound.
func holdOriginal(ctx context.Context, c store.Container, rp rules.RepairPlan, o RepairOptions) (string, error) {
	orig := rp.Original
	if rp.Retire && !o.DryRun {
		if id, err := takeLease(ctx, c, orig.Name, orig.ETag); err != nil || id != "" {
			return id, err
		}
	}
	bi, err := c.Stat(ctx, orig.Name)
	if err == nil && bi.ETag != orig.ETag {
		err = store.OpError("stat", orig.Name, store.ErrConditionFailed)
	}
	return "", err
}

// changed reports whether an error says a blob changed or vanished since it was read.
func changed(err error) bool {
	return errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrNotFound)
}

// retire deletes a repair's original once the new blob has landed — only now may it go — If-Match the ETag it was
// opened at: one that changed or vanished meanwhile is left, and said.
func retire(wctx context.Context, c store.Container, orig *rules.Original, leaseID string, r rules.Result) rules.Result {
	target := r.Target
	switch err := deleteHeld(wctx, c, orig.Name, orig.ETag, leaseID); {
	case err == nil:
		r.Retired = orig.Name
	case errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrNotFound):
		r.Reason = rules.Reason{Kind: rules.ReasonOriginalLeft}
	default:
		r.Outcome, r.Reason = rules.OutcomeFailed, rules.Reason{Kind: rules.ReasonWrittenNotRetired, Name: target, Err: err.Error()}
	}
	return r
}
