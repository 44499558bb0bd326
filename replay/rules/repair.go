package rules

import (
	"bytes"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
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
	// RepairedFrom is the blob this one was written to replace (its MetaRepairedFrom; "" for any other blob).
	RepairedFrom string
}

// OriginalOf is the blob b, read as body, as a repair's original, judged live or not against now.
func (c Config) OriginalOf(b blob.Info, body []byte, now time.Time) *Original {
	return &Original{Name: b.Name, ETag: b.ETag, LastModified: b.LastModified, Body: body,
		Live: c.Classify(b.Name, now.Sub(b.LastModified)) == PaneLive, RepairedFrom: MarksOf(b.Metadata).RepairedFrom}
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
	// Refusal says why the repair is refused (Forceable: --force writes it anyway); Also, the other forceable
	// reasons that hold too — --force lifts them all, so all are said.
	Refusal Reason
	Also    []Reason
	// Base is the name the repair is written under when it is free, and Alt which of its alternatives Target is
	// (as RestorePlan's).
	Base string
	Alt  int
	// Landed: Target already holds these very bytes — an earlier repair or resubmit of them landed (a retry
	// after the new blob was written): nothing is written again, and there is only the original left to retire.
	Landed bool
}

// Refused reports whether the plan refuses the repair without --force.
func (rp RepairPlan) Refused() bool { return rp.Refusal.Kind != ReasonNone }

// Judge works out what the replay will do with the edited bytes at the root name target, and the refusals --force
// lifts: nothing changed, still malformed, a crash, no events, events still quarantined, a live original.
func (rp *RepairPlan) Judge(c Config, target string) {
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
	var why []Reason
	if rp.Original != nil && bytes.Equal(rp.Body, rp.Original.Body) {
		why = append(why, Reason{Kind: ReasonUnchanged, Forceable: true})
	}
	switch {
	case a.Malformed:
		why = append(why, Reason{Kind: ReasonMalformed, Err: rp.Payload.Err.Error(), Forceable: true})
	case a.Crash != nil:
		why = append(why, Reason{Kind: ReasonCrash, Depth: a.Crash.Depth, Forceable: true})
	case len(rp.Payload.Events) == 0:
		why = append(why, Reason{Kind: ReasonNoEvents, Forceable: true})
	case len(a.Quarantine) > 0:
		why = append(why, Reason{Kind: ReasonStillQuarantined, Count: len(a.Quarantine), Verdicts: Primaries(a.Quarantine), Forceable: true})
	}
	if rp.Original != nil && rp.Original.Live {
		why = append(why, Reason{Kind: ReasonLiveOriginal, Forceable: true})
	}
	rp.Refusal, rp.Also = Reason{}, nil
	if len(why) > 0 {
		rp.Refusal, rp.Also = why[0], why[1:]
	}
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

// BeyondRepair counts, of evs, the events no repair makes replayable whatever it fixes: the replay refuses them by
// their event type — no handler routes it, or its handler is not idempotent — so a repaired payload still has
// them quarantined, and a repair is refused without --force (ReasonStillQuarantined). The cap is not counted: a
// repair lifts it by writing the id without its attempt. Judged on the events as the payload reads (a malformed
// payload's best-effort events), so the advice can say it before the operator edits anything.
func (c Config) BeyondRepair(evs []Event) VerdictCounts {
	var out VerdictCounts
	for _, ev := range evs {
		switch j := c.Judge(ev.ID, ev.EventType); {
		case j.Verdicts.Has(VerdictUnroutable):
			out[VerdictUnroutable]++
		case j.Verdicts.Has(VerdictNotIdempotent):
			out[VerdictNotIdempotent]++
		}
	}
	return out
}
