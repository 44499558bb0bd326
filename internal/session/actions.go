package session

import (
	"context"
	"fmt"
	"time"

	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// DrainPreview is a drain before it runs, made once from a listing (PreviewDrain): its plan, Event Grid's word
// read for its question, and what it says (Said: present words it; the command line prints it, the dialog styles
// it). Drain carries it out as it stands.
type DrainPreview struct {
	*rules.DrainPlan
	Witness rules.WitnessReport
	Said    present.Said
}

// PreviewDrain plans a drain of items listed in snap (with o's IncludeHandled and Force), with the witness read
// for its question; force says how the front end lets an operator lift a refusal.
func (s *Session) PreviewDrain(snap *rules.Snapshot, items []rules.Item, o rules.DrainOptions, wit rules.WitnessReport, force present.Force) *DrainPreview {
	cfg := s.Config()
	p := cfg.PlanDrain(snap, items, o)
	return &DrainPreview{DrainPlan: p, Witness: wit, Said: present.DrainSaid(cfg, p, wit, force)}
}

// Drain carries a drain out as previewed: every blob it was made for, in order — the ones it leaves reported as
// the preview said, the others re-uploaded under the ETag listed and judged again on what is read then — between
// its intent and its outcome in the record.
func (s *Session) Drain(ctx context.Context, p *DrainPreview, run Run) (Done, error) {
	var intent []store.BlobInfo // (a dry run records nothing: no copy of a backlog's listing for it)
	if !run.DryRun {
		intent = make([]store.BlobInfo, len(p.Items))
		for i := range p.Items {
			intent[i] = p.Items[i].Info
		}
	}
	o := rules.DrainOptions{DryRun: run.DryRun, ReadOnly: s.spec.ReadOnly && !run.DryRun, Concurrency: run.concurrency(), Progress: run.Progress}
	if run.Rate > 0 && !run.DryRun {
		o.Rate, o.Wave = run.Rate, run.Wave
		if o.Wave <= 0 {
			o.Wave = WaveOf(run.Rate)
		}
		o.Check = s.failingAgain(s.Now(ctx))
	}
	return s.recorded(ctx, record.ActDrain, run, intent, "", func(ctx context.Context) ([]rules.Result, error) {
		return replay.DrainAsPlanned(ctx, s.Container(), s.Config(), p.DrainPlan, o)
	})
}

// WaveOf is how many blobs a drain paced at rate sends between two looks at the handlers: ten seconds' worth,
// at least one.
func WaveOf(rate float64) int { return max(1, int(rate*10)) }

// failingAgain is a paced drain's look between waves: the subscriptions whose handler Event Grid's witness says
// is failing, with a failure at or after since (the drain's start, to the minute: the counts are per minute).
// With no witness it says nothing, and the drain runs its course at its pace.
func (s *Session) failingAgain(since time.Time) func(ctx context.Context) map[string]string {
	since = since.Truncate(time.Minute)
	return func(ctx context.Context) map[string]string {
		rep := s.ReadWitness(ctx, s.Now(ctx))
		out := map[string]string{}
		for _, h := range rep.Handlers {
			if h.Verdict == rules.HandlerFailing && !h.LastFailure.Before(since) {
				out[h.Subscription] = fmt.Sprintf("%s: %d failed attempt(s), none delivered since %s", rep.Source, h.Failed, textfmt.Time(h.LastFailure))
			}
		}
		return out
	}
}

// RestorePreview is a restore before it runs: each quarantine copy's plan read from its bytes, with Event Grid's
// warnings for the handlers its resumed events go to.
type RestorePreview struct {
	*replay.RestorePreview
	// Warnings: per subscription whose handler Event Grid says is failing now, that the copies restored resume
	// events into it.
	Warnings []string
	witness  rules.WitnessReport
}

// PreviewRestore reads the restore plan of each quarantine copy (listed in snap, or by name alone), forced or
// not; keep, when set, keeps only the copies it says (restore --all's filters on what is read).
func (s *Session) PreviewRestore(ctx context.Context, snap *rules.Snapshot, names []string, force bool, wit rules.WitnessReport, keep func(*replay.Detail) bool) *RestorePreview {
	blobs := make([]store.BlobInfo, len(names))
	for i, n := range names {
		blobs[i] = store.BlobInfo{Name: n}
		if j, ok := snap.Lookup(n); ok {
			blobs[i] = snap.Items[j].Info
		}
	}
	p := s.loader.PreviewRestore(ctx, blobs, force)
	if keep != nil {
		p.Keep(keep)
	}
	return &RestorePreview{RestorePreview: p, Warnings: present.RestoreWitnessWarnings(wit, p.Resuming()), witness: wit}
}

// SetForce forces the restore of the copies it refuses (or stops forcing), keeping their plans: what it warns of
// follows what now resumes.
func (p *RestorePreview) SetForce(force bool) {
	p.RestorePreview.SetForce(force)
	p.Warnings = present.RestoreWitnessWarnings(p.witness, p.Resuming())
}

// Restore restores the copies the preview writes, each held to the ETag its plan was read at (a copy rewritten
// since is skipped as changed, never restored unseen), between its intent and its outcome in the record; the
// copies it leaves are reported first, as the preview found them.
func (s *Session) Restore(ctx context.Context, p *RestorePreview, snap *rules.Snapshot, run Run) (Done, error) {
	done, err := s.RestoreNames(ctx, p.Writes(), p.Previewed(), p.Force, snap, run)
	done.Results = append(p.Left(), done.Results...)
	return done, err
}

// RestoreNames restores the named quarantine copies with no preview read (restore NAME --json --yes): each held to
// the ETag previewed holds for it, if any.
func (s *Session) RestoreNames(ctx context.Context, names []string, previewed map[string]string, force bool, snap *rules.Snapshot, run Run) (Done, error) {
	intent := make([]store.BlobInfo, len(names))
	for i, n := range names {
		intent[i] = store.BlobInfo{Name: n, ETag: previewed[n]}
		if j, ok := snap.Lookup(n); ok && intent[i].ETag == "" {
			intent[i] = snap.Items[j].Info
		}
	}
	return s.recorded(ctx, record.ActRestore, run, intent, "", func(ctx context.Context) ([]rules.Result, error) {
		return replay.Restore(ctx, s.Container(), s.Config(), names, replay.RestoreOptions{DryRun: run.DryRun, Force: force,
			ReadOnly: s.spec.ReadOnly && !run.DryRun, Concurrency: run.concurrency(), Progress: run.Progress, Previewed: previewed})
	})
}

// Ack is an acknowledgement asked for: how long, what is being done, by whom — or its clearing.
type Ack struct {
	For      time.Duration
	Note, By string
	Clear    bool
	// Now is the service time the blobs were listed at, plus the local time since (the ack's start).
	Now time.Time
}

// PreviewAck is what an acknowledgement of items will write and leave (the same rules for every front end).
func (s *Session) PreviewAck(items []rules.Item, now time.Time) rules.AckPreview {
	return s.Config().PreviewAck(items, now)
}

// Acknowledge writes (or clears) the acknowledgement on the preview's targets, between its intent and its
// outcome in the record; a dry run says what it would write (acked, cleared) and writes nothing.
func (s *Session) Acknowledge(ctx context.Context, p rules.AckPreview, a Ack, run Run) (Done, error) {
	// The record says how long; who is the operator it names — never --by's value, a flag's value like any other
	// (the ack's own tags carry it, where the operator put it).
	act, detail := record.ActAck, "for "+textfmt.Duration(a.For)
	if a.Clear {
		act, detail = record.ActClear, ""
	}
	if run.DryRun {
		return Done{Results: wouldAck(p.Targets, a.Clear)}, nil
	}
	if len(p.Targets) == 0 {
		return Done{}, nil
	}
	return s.recorded(ctx, act, run, p.Targets, detail, func(ctx context.Context) ([]rules.Result, error) {
		return replay.Acknowledge(ctx, s.Container(), p.Targets, replay.AckOptions{For: a.For, Max: s.Config().AckLimit(), Now: a.Now,
			By: a.By, Note: a.Note, Clear: a.Clear, ReadOnly: s.spec.ReadOnly, Progress: run.Progress})
	})
}

// wouldAck is a dry run's result for each target: acked (or cleared), written nowhere.
func wouldAck(targets []store.BlobInfo, clear bool) []rules.Result {
	res := make([]rules.Result, 0, len(targets))
	for _, t := range targets {
		r := rules.Result{Name: t.Name, Outcome: rules.OutcomeAcked}
		if clear {
			r.Outcome = rules.OutcomeCleared
		}
		res = append(res, r)
	}
	return res
}

// Repair is how a repair was asked: forced or not, and which action the record names it (record.ActEdit,
// record.ActResubmit).
type Repair struct {
	Force  bool
	Action string
}

// Repair carries a repair plan out as it stands: refused (and not forced, or not forceable), it writes nothing
// and says why; a retry of a repair that landed, with no original to retire, finds its own blob and has nothing
// to do or record; otherwise it writes the new blob and retires the original, recorded — the original with its
// ETag before, the new blob and the original retired after.
func (s *Session) Repair(ctx context.Context, rp *rules.RepairPlan, o Repair, run Run) (rules.Result, []string, error) {
	switch {
	case rp.Refused() && (!o.Force || !rp.Refusal.Forceable || rp.Target == ""):
		r, err := replay.Repair(ctx, s.Container(), *rp, replay.RepairOptions{Force: o.Force, DryRun: true}) // (refused: writes nothing)
		return r, nil, err
	case RepairLanded(rp):
		r := rules.Result{Name: rp.Target, Target: rp.Target, Outcome: rules.OutcomeRepaired, Reason: rules.Reason{Kind: rules.ReasonAlreadyWritten, Name: rp.Target}}
		if rp.Original != nil {
			r.Name = rp.Original.Name
		}
		return r, nil, nil
	}
	intent := []store.BlobInfo{{Name: rp.Target}}
	if rp.Original != nil {
		intent = []store.BlobInfo{{Name: rp.Original.Name, ETag: rp.Original.ETag}}
	}
	var r rules.Result
	done, err := s.recorded(ctx, o.Action, run, intent, "new blob "+rp.Target, func(ctx context.Context) ([]rules.Result, error) {
		var err error
		r, err = replay.Repair(ctx, s.Container(), *rp, replay.RepairOptions{Force: o.Force, DryRun: run.DryRun, ReadOnly: s.spec.ReadOnly && !run.DryRun})
		res := r
		if rp.Original != nil {
			res.Name = rp.Original.Name
		}
		return []rules.Result{res}, err
	})
	return r, done.Warnings, err
}

// RepairLanded says a repair plan finds its own blob already written, with no original left to retire: a retry of
// one that landed, with nothing to ask, do or record.
func RepairLanded(rp *rules.RepairPlan) bool { return rp.Landed && (rp.Original == nil || !rp.Retire) }

// AsksRepair says a repair plan, forced or not, has something to confirm before it writes.
func AsksRepair(rp *rules.RepairPlan, force bool) bool {
	return !RepairLanded(rp) && !(rp.Refused() && (!force || !rp.Refusal.Forceable || rp.Target == ""))
}
