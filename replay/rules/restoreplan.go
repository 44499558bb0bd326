package rules

import (
	"time"
)

// Resuming is an event a restore will start moving again.
type Resuming struct {
	Index     int
	ID        string
	EventType string
}

// RestorePlan is what restoring a quarantine blob will do, judged with the same bars the replay function will
// apply to the restored copy.
type RestorePlan struct {
	Malformed bool
	// Resume holds the events the replay will republish (the ones the cap stopped).
	Resume []Resuming
	// Requarantine holds the events the replay will quarantine again on sight.
	Requarantine []Quarantined
	// Unknown counts events whose fate needs --handlers.
	Unknown int
	// Target is the root name the restored copy gets (RestoreTarget: the same for every retry).
	Target string
	// Refusal says why restore refuses without --force (Kind ReasonNone when it goes ahead).
	Refusal Reason
	// Body is the restored copy: the quarantined bytes unchanged when no id carries a count; otherwise
	// JSON.stringify of the elements as the estate re-serializes them (see Preview.QuarantineBody), every id
	// without its count.
	Body []byte
	// Crash is set when the payload nests too deep for the replay function: restored, it would crash on it at
	// the root (Refusal says so). MayCrash is the depth when that depends on the estate's runtime (a warning).
	Crash    *Crash
	MayCrash int
	// Stripped counts ids that still carried a count and were stripped.
	Stripped int
	// Base is the name RestoreTarget gives, and Alt which of its alternatives Target is (0 or 1: Base itself):
	// the restore starts where the plan found a free name, and moves on from Base, never from an alternative.
	Base string
	Alt  int
	// Lingers names the copy's original when it still lingers at the root (Refusal then says why that refuses
	// the restore): forced anyway, its events are at the root twice.
	Lingers string
}

// PlanRestore predicts a restore of quarantine blob name with body parsed as p. The restored copy's events are
// judged exactly as the replay function will judge them at the root: at attempt 0, after stripping.
func (c Config) PlanRestore(name string, body []byte, p *Payload, copyModified time.Time) RestorePlan {
	rp := RestorePlan{Resume: []Resuming{}, Requarantine: []Quarantined{}, Body: body}
	target, err := RestoreTarget(name, copyModified)
	if err != nil {
		rp.Refusal = Reason{Kind: ReasonNoTarget, Err: err.Error()}
		return rp
	}
	if Untriggerable(target) {
		rp.Refusal = Reason{Kind: ReasonUntriggerableTarget, Name: target}
		return rp
	}
	rp.Target, rp.Base = target, target
	if p.Malformed() {
		rp.Malformed = true
		rp.Refusal = Reason{Kind: ReasonMalformed, Err: p.Err.Error(), Forceable: true}
		return rp
	}
	originals := make([]string, len(p.Events))
	js := make([]Judgement, len(p.Events))
	for i, ev := range p.Events {
		id := ParseID(ev.ID, c.Separator)
		originals[i] = id.Original
		if id.Original != ev.ID {
			rp.Stripped++
		}
		j := c.Judge(id.Original, ev.EventType)
		js[i] = j
		switch {
		case j.Replayable():
			rp.Resume = append(rp.Resume, Resuming{Index: ev.Index, ID: id.Original, EventType: ev.EventType})
		case !j.Known():
			rp.Unknown++
		default:
			rp.Requarantine = append(rp.Requarantine, Quarantined{Index: ev.Index, ID: id.Original, EventType: ev.EventType, Verdicts: j.Verdicts})
		}
	}
	if rp.Stripped > 0 {
		// JSON.stringify of the elements as the estate re-serializes them, each id without its count.
		vals := elementValues(body, p)
		b := make([]byte, 0, len(body)+16)
		b = append(b, '[')
		for i := range p.Events {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendElement(b, vals[i], originals[i])
		}
		rp.Body = append(b, ']')
	}
	crash, may := c.crashOf(p, js)
	rp.MayCrash = may
	switch {
	case crash != nil:
		rp.Crash = crash
		rp.Refusal = Reason{Kind: ReasonCrash, Depth: crash.Depth, Forceable: true}
	case len(p.Events) == 0:
		rp.Refusal = Reason{Kind: ReasonNoEvents, Forceable: true}
	case len(rp.Resume) == 0 && rp.Unknown == 0:
		rp.Refusal = Reason{Kind: ReasonNothingResumes, Count: len(rp.Requarantine), Verdicts: Primaries(rp.Requarantine), Forceable: true}
	}
	return rp
}

// Refused reports whether the plan refuses the restore without --force.
func (rp RestorePlan) Refused() bool { return rp.Refusal.Kind != ReasonNone }

// Primaries counts refused events by the verdict the replay acts on.
func Primaries(q []Quarantined) VerdictCounts {
	var vc VerdictCounts
	for _, e := range q {
		vc[e.Verdicts.Primary()]++
	}
	return vc
}

// RefusedWith says whether the plan is refused, and why: with force, only where there is no name to restore to.
func (rp RestorePlan) RefusedWith(force bool) (why Reason, refused bool) {
	switch {
	case rp.Target == "":
		why = rp.Refusal
		why.Forceable = false
		return why, true
	case rp.Refused() && !force:
		why = rp.Refusal
		why.Forceable = true
		return why, true
	}
	return Reason{}, false
}
