package output

import (
	"time"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
)

// TraceJSON is trace's document (docs/json.md): each event's journey, pass by pass.
type TraceJSON struct {
	Asked Text    `json:"asked"`
	Blob  OptText `json:"blob"`
	// Gone: the blob asked for is not in the container; Actions are what the record says of it.
	Gone    bool          `json:"gone"`
	Actions []TouchJSON   `json:"actions,omitempty"`
	Events  []JourneyJSON `json:"events"`
	// Read is how many payloads were read to find them.
	Read      int  `json:"read"`
	Rehearsal bool `json:"rehearsal,omitempty"`
}

type JourneyJSON struct {
	ID    Text    `json:"id"`
	State string  `json:"state"`
	Since OptText `json:"since"`
	// Until: a delivering event counts as delivered from then, if no dead letter of it comes.
	Until OptText `json:"until"`
	// Resumes: a quarantined event a restore would give another pass.
	Resumes  bool       `json:"resumes"`
	Verdicts []string   `json:"verdicts"`
	Passes   []PassJSON `json:"passes"`
}

type PassJSON struct {
	Blob Text    `json:"blob"`
	From OptText `json:"from"`
	Via  OptText `json:"via"`
	// Attempt is the count the event arrived with (null when its copy stripped it and nothing says how far it
	// got); AtLeast: at least that (a quarantine copy stopped by the cap); Reset: the copy no longer carries it.
	Attempt      *Attempt    `json:"attempt"`
	AtLeast      bool        `json:"atLeast"`
	Reset        bool        `json:"countReset"`
	Copies       int         `json:"copies"`
	DeadLettered OptText     `json:"deadLettered"`
	Reason       Text        `json:"deadLetterReason"`
	Outcome      Text        `json:"lastDeliveryOutcome"`
	Status       *int64      `json:"lastHttpStatusCode"`
	Drains       int         `json:"drains"`
	DrainedAt    OptText     `json:"drainedAt"`
	Fate         string      `json:"fate"`
	At           OptText     `json:"at"`
	Where        Text        `json:"where"`
	Verdicts     []string    `json:"verdicts"`
	Malformed    bool        `json:"malformed"`
	Actions      []TouchJSON `json:"actions"`
}

type TouchJSON struct {
	Action  string  `json:"action"`
	Blob    Text    `json:"blob"`
	Target  OptText `json:"target"`
	At      string  `json:"at"`
	By      Text    `json:"by"`
	Outcome Text    `json:"outcome"`
}

func optTime(t time.Time) OptText { return OptTime(&t) }

func verdictNames(vs rules.VerdictSet) []string {
	out := []string{}
	for _, v := range vs.List() {
		out = append(out, v.String())
	}
	return out
}

func touchesJSON(ts []rules.Touch) []TouchJSON {
	out := []TouchJSON{}
	for _, t := range ts {
		out = append(out, TouchJSON{Action: t.Action, Blob: Text(t.Blob), Target: OptText(t.Target), At: RFC3339(t.At), By: Text(t.By), Outcome: Text(t.Outcome)})
	}
	return out
}

// ToTraceJSON is a trace as its document.
func ToTraceJSON(t *replay.Traced) TraceJSON {
	out := TraceJSON{Asked: Text(t.Asked), Blob: OptText(t.Blob), Gone: t.Gone, Read: t.Read, Events: []JourneyJSON{}}
	if t.Gone {
		out.Actions = touchesJSON(t.Touches)
	}
	out.Events = JourneysJSON(t.Journeys)
	return out
}

// TwinTruthJSON is twin truth's document: what really became of each event.
type TwinTruthJSON struct {
	Clock  string      `json:"clock"`
	Events []TruthJSON `json:"events"`
}

type TruthJSON struct {
	ID      Text    `json:"id"`
	State   string  `json:"state"`
	Attempt Attempt `json:"attempt"`
	Blobs   []Text  `json:"blobs"`
}

// JourneysJSON are journeys as their documents (trace's events, log --events).
func JourneysJSON(js []rules.Journey) []JourneyJSON {
	out := []JourneyJSON{}
	for _, j := range js {
		jj := JourneyJSON{ID: Text(j.Original), State: j.State.String(), Since: optTime(j.Since), Until: optTime(j.Until),
			Resumes: j.Resumes, Verdicts: verdictNames(j.Verdicts), Passes: []PassJSON{}}
		for _, p := range j.Passes {
			pj := PassJSON{Blob: Text(p.Blob), From: OptText(p.From), AtLeast: p.Reached.AtLeast, Reset: p.Reached.Reset,
				Copies: p.Copies, DeadLettered: optTime(p.DeadLettered), Reason: Text(p.Reason), Outcome: Text(p.Outcome),
				Status: p.Status, Drains: p.Drains, DrainedAt: OptText(p.DrainedAt), Fate: p.Fate.String(), At: optTime(p.At),
				Where: Text(p.Where), Verdicts: verdictNames(p.Verdicts), Malformed: p.Malformed, Actions: touchesJSON(p.Touches)}
			if p.Via != 0 {
				pj.Via = OptText(p.Via.String())
			}
			if !p.Reached.Unknown {
				a := Attempt(p.Reached.Attempt)
				pj.Attempt = &a
			}
			jj.Passes = append(jj.Passes, pj)
		}
		out = append(out, jj)
	}
	return out
}
