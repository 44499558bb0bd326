package replay

import (
	"encoding/json"
	"fmt"
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
	// Refusal says why restore refuses without --force ("" when it goes ahead).
	Refusal string
	// Body is the restored copy: the quarantined bytes with every id's count stripped.
	Body []byte
	// Stripped counts ids that still carried a count and were stripped.
	Stripped int
}

// PlanRestore predicts a restore of quarantine blob name with body parsed as p. The restored copy's events are
// judged exactly as the replay function will judge them at the root: at attempt 0, after stripping.
func (c Config) PlanRestore(name string, body []byte, p *Payload, copyModified time.Time) RestorePlan {
	rp := RestorePlan{Resume: []Resuming{}, Requarantine: []Quarantined{}, Body: body}
	target, err := RestoreTarget(name, copyModified)
	if err != nil {
		rp.Refusal = err.Error()
		return rp
	}
	rp.Target = target
	if p.Malformed() {
		rp.Malformed = true
		rp.Refusal = "the payload is malformed (" + p.Err.Error() + "): the replay quarantines it again on sight"
		return rp
	}
	stripped := make([]json.RawMessage, len(p.Events))
	for i, ev := range p.Events {
		id := ParseID(ev.ID, c.Separator)
		stripped[i] = ev.Raw
		if id.Original != ev.ID {
			rp.Stripped++
			stripped[i] = withID(ev.Raw, id.Original)
		}
		j := c.Judge(id.Original, ev.EventType)
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
		rp.Body = jsonArray(stripped)
	}
	switch {
	case len(p.Events) == 0:
		rp.Refusal = "the blob holds no events"
	case len(rp.Resume) == 0 && rp.Unknown == 0:
		rp.Refusal = fmt.Sprintf("no event would resume: all %d would be quarantined again (%s)", len(rp.Requarantine), Primaries(rp.Requarantine))
	}
	return rp
}

// Primaries counts refused events by the verdict the replay acts on.
func Primaries(q []Quarantined) VerdictCounts {
	var vc VerdictCounts
	for _, e := range q {
		vc[e.Verdicts.Primary()]++
	}
	return vc
}
