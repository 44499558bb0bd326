// Package output is every format deadletter prints, in one place: the JSON documents of docs/json.md (each a
// typed value, untrusted text escaped as it is written), the Markdown of the incident report, and the printer that
// writes a command's answer in the format it was asked for. Domain types carry no json tags: everything written
// goes through these. Scripts depend on these names; tests assert them.
package output

import (
	"encoding/json"
	"time"

	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/twin"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
)

// contextListJSON is context list -o json: every context, and which is current.
type ContextListJSON struct {
	Current  Text              `json:"current"`
	Contexts []ContextLineJSON `json:"contexts"`
}

type ContextLineJSON struct {
	Name    Text    `json:"name"`
	Current bool    `json:"current"`
	Where   Text    `json:"where,omitempty"`
	Error   OptText `json:"error,omitempty"`
}

// contextJSON is context show -o json: a context's settings as the file gives them (a SAS scrubbed).
type ContextJSON struct {
	Name    Text            `json:"name"`
	Config  Text            `json:"config"`
	Line    int             `json:"line"`
	Current bool            `json:"current"`
	Values  map[string]Text `json:"values"`
}

// contextsJSON is --all-contexts' answer: each context's own document, by name.
type ContextsJSON struct {
	Contexts map[string]json.RawMessage `json:"contexts"`
}

type LogJSON struct {
	Estate  Text            `json:"estate"`
	Local   Text            `json:"local"`
	Shared  OptText         `json:"shared"`
	Records []LogRecordJSON `json:"records"`
	// Skipped are the record's lines that could not be read (a newer build's, a cut or planted line): each its
	// file, line and why — the rest of the record is read.
	Skipped []Text `json:"skipped,omitempty"`
	// Rehearsal: the estate is a twin, its service times the twin's clock.
	Rehearsal bool `json:"rehearsal,omitempty"`
}

type LogRecordJSON struct {
	ID          string        `json:"id"`
	Action      Text          `json:"action"`
	State       string        `json:"state"`
	Wall        string        `json:"wall"`
	ServiceTime OptText       `json:"serviceTime"`
	Ended       OptText       `json:"ended"`
	Who         LogWhoJSON    `json:"who"`
	Mine        bool          `json:"mine"`
	Estate      LogEstateJSON `json:"estate"`
	Via         Text          `json:"via"`
	Detail      OptText       `json:"detail"`
	Error       OptText       `json:"error"`
	Shared      bool          `json:"shared"`
	IntentGone  bool          `json:"intentGone"`
	// PartsMissing counts the lines of an action written in parts that were not read (0: it is whole).
	PartsMissing int           `json:"partsMissing"`
	Blobs        []LogBlobJSON `json:"blobs"`
}

type LogWhoJSON struct {
	User      Text    `json:"user"`
	Host      Text    `json:"host"`
	Principal OptText `json:"principal"`
}

type LogEstateJSON struct {
	Context   OptText `json:"context"`
	Where     Text    `json:"where"`
	Account   OptText `json:"account"`
	Directory OptText `json:"directory"`
	Container OptText `json:"container"`
}

type LogBlobJSON struct {
	Name      Text    `json:"name"`
	ETag      OptText `json:"etag"`
	Target    OptText `json:"target"`
	ETagAfter OptText `json:"etagAfter"`
	Outcome   OptText `json:"outcome"`
	Reason    OptText `json:"reason"`
	Retired   OptText `json:"retired"`
	// Now is what became of it since, from the container as it is now.
	Now LogNowJSON `json:"now"`
	// Events are its events' journeys (log --events, report).
	Events []JourneyJSON `json:"events,omitempty"`
	// EventsSince say, a line an event, what became of its events since the action (the report's Markdown).
	EventsSince []string `json:"-"`
}

type LogNowJSON struct {
	Where string  `json:"where"`
	Name  OptText `json:"name"`
	At    OptText `json:"at"`
	Fate  Text    `json:"fate"`
}

// reportRecordJSON is the record in a report: where it was read, whether only locally, and every action.
type ReportRecordJSON struct {
	Local     Text            `json:"local"`
	Shared    OptText         `json:"shared"`
	LocalOnly bool            `json:"localOnly"`
	Actions   []LogRecordJSON `json:"actions"`
	// Error says why the record could not be read (the actions are then unknown, not none).
	Error OptText `json:"error,omitempty"`
	// Skipped are its lines that could not be read, each said (the actions are the rest).
	Skipped []Text `json:"skipped,omitempty"`
}

type TwinSpanJSON struct {
	From       string       `json:"from"`
	To         string       `json:"to"`
	Span       twin.Totals  `json:"span"`
	Account    twin.Account `json:"account"`
	Violations []string     `json:"violations"`
	// Repaired says what opening the twin repaired: its last process stopped mid-step.
	Repaired string `json:"repaired,omitempty"`
}

type TwinStatusJSON struct {
	Scenario string       `json:"scenario"`
	Source   string       `json:"source,omitempty"`
	Clock    string       `json:"clock"`
	Start    string       `json:"start"`
	Script   []WindowJSON `json:"script"`
	// Starts are the Function App's starts in the script, run or to come.
	Starts     []AppStartRunJSON `json:"starts"`
	Totals     twin.Totals       `json:"totals"`
	Account    twin.Account      `json:"account"`
	Violations []string          `json:"violations"`
	Repaired   string            `json:"repaired,omitempty"`
}

// twinScenarioJSON is twin start's answer for a scenario's twin.
type TwinScenarioJSON struct {
	Dir      string       `json:"dir"`
	Scenario string       `json:"scenario"`
	Clock    string       `json:"clock"`
	Totals   twin.Totals  `json:"totals"`
	Script   []WindowJSON `json:"script"`
}

// twinScriptJSON is twin script show's answer, and twin script set's (with the subscription changed).
type TwinScriptJSON struct {
	Clock   string       `json:"clock"`
	Changed string       `json:"changed,omitempty"`
	Script  []WindowJSON `json:"script"`
	// Starts are the Function App's starts in the script, run or to come.
	Starts []AppStartRunJSON `json:"starts"`
}

// AppStartRunJSON is one start of the Function App in a twin's script: when, what kind, how many workers, why,
// and — once it ran — what its workers' drains re-uploaded (null when the twin no longer remembers).
type AppStartRunJSON struct {
	At           string `json:"at"`
	Kind         string `json:"kind"` // start, restart or scale-out
	Workers      int    `json:"workers"`
	Why          string `json:"why"`
	ListingFails bool   `json:"listingFails"`
	Ran          bool   `json:"ran"`
	Reuploaded   *int   `json:"reuploaded"`
	Raced        *int   `json:"raced"`
	Handled      *int   `json:"handled"`
}

type WindowJSON struct {
	Who  string `json:"who"`
	From string `json:"from"`
	// To is empty for a window until further notice.
	To      string `json:"to"`
	Now     bool   `json:"now"` // the twin's clock is inside it
	Outcome string `json:"outcome"`
	Status  int    `json:"status,omitempty"`
	Why     string `json:"why"`
}

type TwinStartJSON struct {
	Dir    string       `json:"dir"`
	Source string       `json:"source"`
	Blobs  int          `json:"blobs"`
	Bytes  int64        `json:"bytes"`
	Clock  string       `json:"clock"`
	Script []WindowJSON `json:"script"`
}

// diffJSON is twin diff's answer: per blob of the snapshot the twin opened on, what became of it.
type DiffJSON struct {
	Clock  string         `json:"clock"`
	Opened string         `json:"opened"`
	Blobs  []DiffBlobJSON `json:"blobs"`
	Counts map[string]int `json:"counts"`
}

type DiffBlobJSON struct {
	Name Text `json:"name"`
	// Kind is the fate in a word: here (where it was, not stranded), stranded, replayed, quarantined, restored,
	// lost (the lifecycle rule deleted it), gone (deleted otherwise).
	Kind    string `json:"kind"`
	Fate    Text   `json:"fate"`
	Where   Text   `json:"where,omitempty"`
	At      string `json:"at,omitempty"`
	Changed bool   `json:"changed"`
	// Actions are the operator's actions that led there, as their runs stamped the blob (drain, restore).
	Actions []Text `json:"actions"`
	// Events are its events' journeys (twin diff --events); EventsSince the same, a line an event, for text.
	Events      []JourneyJSON `json:"events,omitempty"`
	EventsSince []string      `json:"-"`
}

type BlobJSON struct {
	Name             Text       `json:"name"`
	Pane             rules.Pane `json:"pane"`
	Size             int64      `json:"size"`
	LastModified     string     `json:"lastModified"`
	AgeSeconds       int64      `json:"ageSeconds"`
	ExpiresAt        string     `json:"expiresAt"`
	Events           int        `json:"events"`
	Malformed        bool       `json:"malformed"`
	Error            OptText    `json:"error"`
	MaxReplayAttempt Attempt    `json:"maxReplayAttempt"`
	// MaxReplayAttemptAtLeast: a quarantine copy whose ids the replay stripped, stopped by the cap: its events
	// got at least maxReplayAttempt (the cap) — never 0 beside a cap.
	MaxReplayAttemptAtLeast bool          `json:"maxReplayAttemptAtLeast"`
	Reasons                 Counts        `json:"reasons"`
	Outcomes                Counts        `json:"outcomes"`
	Verdicts                VerdictCounts `json:"verdicts"`
	Expiring                bool          `json:"expiring"`
	Stalled                 bool          `json:"stalled"`
	Handled                 bool          `json:"handled"`
	HandledBy               Text          `json:"handledBy,omitempty"`
	// Untriggerable: a root blob the replay subscription's filter never delivers (docs/estate.md).
	Untriggerable bool       `json:"untriggerable"`
	Crash         *CrashJSON `json:"crash,omitempty"`
	// MayCrash: what the replay serializes nests where the estate's runtime decides (a warning).
	MayCrash *CrashJSON `json:"mayCrash,omitempty"`
	Ack      *AckJSON   `json:"ack,omitempty"`
}

type CrashJSON struct {
	Depth int `json:"depth"`
	// Stage is where the replay throws: "quarantine" (before writing anything) or "publish" (after the
	// quarantine copy); only in a preview.
	Stage  string `json:"stage,omitempty"`
	Reason string `json:"reason"`
}

func StageName(s rules.CrashStage) string {
	switch s {
	case rules.StageQuarantine:
		return "quarantine"
	case rules.StagePublish:
		return "publish"
	}
	return ""
}

type AckJSON struct {
	By     Text   `json:"by"`
	At     string `json:"at"`
	Until  string `json:"until"`
	Note   Text   `json:"note,omitempty"`
	Active bool   `json:"active"`
}

func ToBlobJSON(cfg rules.Config, it *rules.Item, now time.Time) BlobJSON {
	a := cfg.AlertsOf(it, now)
	b := BlobJSON{Name: Text(it.Name), Pane: it.Pane, Size: it.Size, LastModified: RFC3339(it.LastModified), AgeSeconds: int64(it.Age / time.Second),
		ExpiresAt: RFC3339(a.ExpiresAt), Reasons: Counts{}, Outcomes: Counts{}, Expiring: a.Expiring, Stalled: a.Stalled,
		Handled: a.Handled, HandledBy: Text(a.HandledBy), Untriggerable: a.Untriggerable}
	if s := it.Summary; s != nil {
		b.Events, b.Malformed, b.MaxReplayAttempt = s.Events, s.Malformed, Attempt(s.MaxReplayAttempt)
		if it.Pane == rules.PaneQuarantine && s.Verdicts.Of(rules.VerdictCap) > 0 && s.MaxReplayAttempt < rules.Attempt(cfg.MaxReplays) {
			b.MaxReplayAttempt, b.MaxReplayAttemptAtLeast = Attempt(cfg.MaxReplays), true
		}
		b.Reasons, b.Outcomes, b.Verdicts = Counts(s.Reasons), Counts(s.Outcomes), VerdictCounts(s.Verdicts)
		b.Error = OptText(s.Error)
		if a.Crash {
			b.Crash = &CrashJSON{Depth: s.CrashDepth, Reason: present.CrashReason(s.CrashDepth)}
		}
		if a.MayCrash {
			b.MayCrash = &CrashJSON{Depth: s.MayCrash, Reason: present.MayCrashNote(s.MayCrash)}
		}
	}
	if it.ReadErr != "" {
		b.Error = OptText(it.ReadErr)
	}
	if ack := a.Ack; ack != nil {
		b.Ack = &AckJSON{By: Text(ack.By), At: RFC3339(ack.At), Until: RFC3339(ack.Until), Note: Text(ack.Note), Active: a.Acked}
	}
	return b
}

type EventJSON struct {
	Index      int  `json:"index"`
	ID         Text `json:"id"`
	OriginalID Text `json:"originalId"`
	// ReplayAttempt is how far the event had got: its id's count, or in a quarantine copy (which strips it) at least
	// the cap (AttemptAtLeast) when the cap stopped it, and null when nothing says (CountReset: the copy no longer
	// carries it; a restore resumes at 0).
	ReplayAttempt           *Attempt `json:"replayAttempt"`
	AttemptAtLeast          bool     `json:"attemptAtLeast"`
	CountReset              bool     `json:"countReset"`
	EventType               Text     `json:"eventType"`
	Subject                 Text     `json:"subject"`
	DeadLetterReason        Text     `json:"deadLetterReason"`
	DeliveryAttempts        *int64   `json:"deliveryAttempts"`
	LastDeliveryOutcome     Text     `json:"lastDeliveryOutcome"`
	LastHTTPStatusCode      *int64   `json:"lastHttpStatusCode"`
	PublishTime             Text     `json:"publishTime"`
	LastDeliveryAttemptTime Text     `json:"lastDeliveryAttemptTime"`
	Verdicts                []string `json:"verdicts"`
	Uncountable             bool     `json:"uncountable"`
}

type RepublishJSON struct {
	Index     int  `json:"index"`
	ID        Text `json:"id"`
	EventType Text `json:"eventType"`
}

type QuarantinedJSON struct {
	Index     int      `json:"index"`
	ID        Text     `json:"id"`
	EventType Text     `json:"eventType"`
	Verdicts  []string `json:"verdicts"`
}

type PublishRequestJSON struct {
	First  int `json:"first"`
	Last   int `json:"last"`
	Events int `json:"events"`
	Bytes  int `json:"bytes"`
}

type PreviewJSON struct {
	Malformed       bool                 `json:"malformed"`
	Republish       []RepublishJSON      `json:"republish"`
	Quarantine      []QuarantinedJSON    `json:"quarantine"`
	Unknown         int                  `json:"unknown,omitempty"`
	PublishRequests []PublishRequestJSON `json:"publishRequests"`
	QuarantineName  Text                 `json:"quarantineName,omitempty"`
	ArchiveName     Text                 `json:"archiveName,omitempty"`
	DeleteOriginal  bool                 `json:"deleteOriginal"`
}

// crashPreviewJSON is the preview of a blob the replay function throws on: nothing republished or archived, the
// original stays; at the publish stage the quarantine copy of its refused events is still written.
type CrashPreviewJSON struct {
	Crash          CrashJSON         `json:"crash"`
	Quarantine     []QuarantinedJSON `json:"quarantine"`
	QuarantineName Text              `json:"quarantineName,omitempty"`
	DeleteOriginal bool              `json:"deleteOriginal"`
}

type RestoreJSON struct {
	Malformed    bool              `json:"malformed"`
	Resume       []RepublishJSON   `json:"resume"`
	Requarantine []QuarantinedJSON `json:"requarantine"`
	Unknown      int               `json:"unknown,omitempty"`
	Target       Text              `json:"target"`
	Stripped     int               `json:"stripped"`
	Refusal      Text              `json:"refusal,omitempty"`
}

// showJSON is the ls fields with the event list as "events" (a field of the outer struct wins over the embedded
// count of the same name) and the count as "eventCount".
type ShowJSON struct {
	BlobJSON
	EventCount int          `json:"eventCount"`
	EventList  []EventJSON  `json:"events"`
	Preview    any          `json:"preview,omitempty"`
	Restore    *RestoreJSON `json:"restore,omitempty"`
	// Advice is what to do about the blob, the sentences show and the dashboard's detail print (present.Advice).
	Advice []Text `json:"advice"`
	// MissedByStart says the Function App's last start (by the activity log, read with --function-app or on a
	// twin) should have re-uploaded this stranded blob and did not: "young" (younger than the TTL then; its
	// trigger ran out after) or "listed" (a TTL old already: that start's drain did not take it). Absent when not
	// missed or not known.
	MissedByStart string `json:"missedByStart,omitempty"`
	// Rehearsal: the blob is a twin's, its age the twin's clock.
	Rehearsal bool `json:"rehearsal,omitempty"`
}

func QuarantinedOf(q []rules.Quarantined) []QuarantinedJSON {
	out := make([]QuarantinedJSON, 0, len(q))
	for _, e := range q {
		out = append(out, QuarantinedJSON{Index: e.Index, ID: Text(e.ID), EventType: Text(e.EventType), Verdicts: VerdictNames(e.Verdicts)})
	}
	return out
}

func ToShowJSON(cfg rules.Config, d *replay.Detail) ShowJSON {
	out := ShowJSON{BlobJSON: ToBlobJSON(cfg, &d.Item, d.Now), EventList: []EventJSON{}, Advice: []Text{}}
	out.EventCount = out.Events
	for i, ev := range d.Payload.Events {
		e := EventJSON{Index: ev.Index, ID: Text(ev.ID), EventType: Text(ev.EventType), Subject: Text(ev.Subject), DeadLetterReason: Text(ev.DeadLetterReason),
			DeliveryAttempts: ev.DeliveryAttempts, LastDeliveryOutcome: Text(ev.LastDeliveryOutcome), LastHTTPStatusCode: ev.LastHTTPStatusCode,
			PublishTime: Text(ev.PublishTime), LastDeliveryAttemptTime: Text(ev.LastDeliveryAttemptTime)}
		if i < len(d.Judgements) {
			j := d.Judgements[i]
			a := Attempt(j.Attempt)
			e.OriginalID, e.ReplayAttempt, e.Uncountable = Text(j.Original), &a, j.Uncountable
		}
		if i < len(d.Reached) {
			r := d.Reached[i]
			a := Attempt(r.Attempt)
			e.ReplayAttempt, e.AttemptAtLeast, e.CountReset = &a, r.AtLeast, r.Reset
			if r.Unknown {
				e.ReplayAttempt = nil
			}
		}
		vs, _ := d.EventVerdicts(i)
		e.Verdicts = VerdictNames(vs)
		out.EventList = append(out.EventList, e)
	}
	if pv := d.Preview; pv != nil {
		out.Preview = ToPreviewJSON(pv)
	}
	if rp := d.Restore; rp != nil {
		r := &RestoreJSON{Malformed: rp.Malformed, Resume: []RepublishJSON{}, Requarantine: QuarantinedOf(rp.Requarantine), Unknown: rp.Unknown,
			Target: Text(rp.Target), Stripped: rp.Stripped, Refusal: Text(present.Reason(rp.Refusal, present.ForceFlag))}
		for _, e := range rp.Resume {
			r.Resume = append(r.Resume, RepublishJSON{Index: e.Index, ID: Text(e.ID), EventType: Text(e.EventType)})
		}
		out.Restore = r
	}
	return out
}

// toPreviewJSON is what the replay does with a root blob, as show --json says it: previewJSON, or
// crashPreviewJSON for a blob it throws on.
func ToPreviewJSON(pv *rules.Preview) any {
	if pv.Crash != nil {
		return CrashPreviewJSON{Crash: CrashJSON{Depth: pv.Crash.Depth, Stage: StageName(pv.Crash.Stage), Reason: present.CrashReason(pv.Crash.Depth)},
			Quarantine: QuarantinedOf(pv.Quarantine), QuarantineName: Text(pv.QuarantineName)}
	}
	p := PreviewJSON{Malformed: pv.Malformed, Republish: []RepublishJSON{}, Quarantine: QuarantinedOf(pv.Quarantine), Unknown: pv.Unknown,
		PublishRequests: []PublishRequestJSON{}, QuarantineName: Text(pv.QuarantineName), ArchiveName: Text(pv.ArchiveName), DeleteOriginal: pv.DeleteOriginal}
	for _, r := range pv.Republish {
		p.Republish = append(p.Republish, RepublishJSON{Index: r.Index, ID: Text(r.ID), EventType: Text(r.EventType)})
	}
	for _, r := range pv.PublishRequests {
		p.PublishRequests = append(p.PublishRequests, PublishRequestJSON(r))
	}
	return p
}

// repairJSON is what edit and resubmit did (or, with --dry-run, would do): the new blob written, the original
// retired, the previews beside each other, and the file an edit that was not written was kept in.
type RepairJSON struct {
	DryRun bool `json:"dryRun"`
	// Estate is the container written to (with its context).
	Estate Text `json:"estate"`
	// Rehearsal: the container is a twin, its time the twin's clock (as check, drain, restore and ack say).
	Rehearsal bool          `json:"rehearsal,omitempty"`
	Original  Text          `json:"original,omitempty"`
	Outcome   rules.Outcome `json:"outcome"`
	// Written is the new root dead letter; Retired the original deleted after it landed.
	Written Text `json:"written,omitempty"`
	// AlreadyThere is the blob that holds this very payload already — an earlier repair or resubmit of it
	// wrote it — when a retry writes nothing (Written is then absent).
	AlreadyThere Text `json:"alreadyThere,omitempty"`
	Retired      Text `json:"retired,omitempty"`
	Error        Text `json:"error,omitempty"`
	// Kept is the file an edit that was not written was kept in.
	Kept Text `json:"kept,omitempty"`
	// Before is the original's bytes judged at the root; After the edited ones (show's preview format).
	Before any `json:"before,omitempty"`
	After  any `json:"after"`
	// Malformed is why the edited payload fails the schema (absent when it passes).
	Malformed Text          `json:"malformed,omitempty"`
	Counted   []CountedJSON `json:"counted"`
	// Undiagnosed counts edited events that lost Event Grid's deadLetterReason the original's events had.
	Undiagnosed int `json:"undiagnosed"`
}

// countedJSON is an event whose id still carries a replay attempt.
type CountedJSON struct {
	Index   int     `json:"index"`
	ID      Text    `json:"id"`
	Attempt Attempt `json:"attempt"`
	Capped  bool    `json:"capped"`
}

func ToRepairJSON(estate string, rp *rules.RepairPlan, r rules.Result, dryRun bool, kept string) RepairJSON {
	outcome := r.Outcome
	if would, ok := DryRunOutcomes[outcome]; ok && dryRun {
		outcome = would
	}
	out := RepairJSON{DryRun: dryRun, Estate: Text(estate), Outcome: outcome, Written: Text(r.Target), Retired: Text(r.Retired),
		Error: Text(present.Reason(r.Reason, present.ForceRepair)), Kept: Text(kept), After: ToPreviewJSON(&rp.After), Counted: []CountedJSON{}}
	if !r.Outcome.Done() {
		out.Written = ""
	}
	if r.Reason.Kind == rules.ReasonAlreadyWritten {
		out.Written, out.AlreadyThere = "", Text(r.Target)
	}
	if r.Outcome == rules.OutcomeRefused && len(rp.Also) > 0 && r.Reason.Kind == rp.Refusal.Kind { // every reason, as the preview said
		out.Error = Text(present.RepairRefused(rp, present.ForceRepair))
	}
	if rp.Original != nil {
		out.Original = Text(rp.Original.Name)
	}
	if rp.Before != nil {
		out.Before = ToPreviewJSON(rp.Before)
	}
	if rp.Payload.Malformed() {
		out.Malformed = Text(rp.Payload.Err.Error())
	}
	out.Undiagnosed = rp.Undiagnosed
	for _, c := range rp.Counted {
		out.Counted = append(out.Counted, CountedJSON{Index: c.Index, ID: Text(c.ID), Attempt: Attempt(c.Attempt), Capped: c.Capped})
	}
	return out
}

type ExportedJSON struct {
	Name Text  `json:"name"`
	Size int64 `json:"size"`
}

type ExportRefusedJSON struct {
	Name  Text `json:"name"`
	Error Text `json:"error"`
}

// exportTotalsJSON counts what export wrote and did not (refused includes the names not found).
type ExportTotalsJSON struct {
	Written int   `json:"written"`
	Bytes   int64 `json:"bytes"`
	Refused int   `json:"refused"`
}

type ResultJSON struct {
	Name    Text          `json:"name"`
	Outcome rules.Outcome `json:"outcome"`
	Target  Text          `json:"target,omitempty"`
	Error   Text          `json:"error,omitempty"`
	Resume  int           `json:"resume,omitempty"`
}

type ResultsJSON struct {
	DryRun  bool         `json:"dryRun"`
	Results []ResultJSON `json:"results"`
	// Estate is the container the action wrote to, as a person reads it: its context, account or directory and
	// container; Rehearsal, that its time was a twin's clock.
	Estate    Text `json:"estate,omitempty"`
	Rehearsal bool `json:"rehearsal,omitempty"`
	// Readiness (drain only) is, per subscription the drain takes, whether its handler still failed within the
	// TTL: drained now, those events would most likely dead-letter again.
	Readiness []ReadinessJSON `json:"readiness,omitempty"`
	// EventGrid (drain only, when a witness is configured) is what Event Grid's witness read: when, and what it
	// could not.
	EventGrid *WitnessJSON `json:"eventGrid,omitempty"`
	// Warnings (restore only, additive) are the warnings said before the question: each subscription Event
	// Grid says is failing now whose events the restored copies resume.
	Warnings []Text `json:"warnings,omitempty"`
	// AppStart (drain only) is what the estate's own drain would re-upload if a worker of the Function App
	// started now, of the whole container.
	AppStart *AppStartJSON `json:"appStart,omitempty"`
}

// AppStartJSON is what a worker start's drain would re-upload now (SPEC §4), in its three parts: the stranded
// blobs it is for, the handled blobs that linger (their events republished a second time) and the blobs the
// replay crashes on (it throws again); and the root blobs no trigger reaches (re-uploaded to no effect).
type AppStartJSON struct {
	Takes         int    `json:"takes"`
	Stranded      int    `json:"stranded"`
	Handled       []Text `json:"handled"`
	HandledEvents int    `json:"handledEvents"`
	Crash         []Text `json:"crash"`
	Untriggerable int    `json:"untriggerable"`
	Repeats       bool   `json:"repeats"`
}

// ToAppStartJSON is what a worker start would re-upload, as JSON.
func ToAppStartJSON(a rules.AppStart) *AppStartJSON {
	return &AppStartJSON{Takes: a.Takes(), Stranded: len(a.Stranded), Handled: Texts(a.Handled), HandledEvents: a.HandledEvents,
		Crash: Texts(a.Crash), Untriggerable: len(a.Untriggerable), Repeats: a.Repeats()}
}

// Texts are names as JSON text, escaped as every name is; never nil (an empty list is [], not null).
func Texts(names []string) []Text {
	out := make([]Text, len(names))
	for i, n := range names {
		out[i] = Text(n)
	}
	return out
}

type ReadinessJSON struct {
	Subscription     Text   `json:"subscription"`
	NewestDeadLetter string `json:"newestDeadLetter,omitempty"`
	// LastHour counts the dead letters written within the last TTL window (an hour, by the estate's TTL).
	LastHour int  `json:"lastHour"`
	Failing  bool `json:"failing"`
	// EventGrid is the second witness's verdict on the subscription, when a witness is configured.
	EventGrid *HandlerJSON `json:"eventGrid,omitempty"`
	// Container repeats the container's witness under its name (failing, newestDeadLetter, lastHour above are
	// the same facts, kept for scripts that read them); Verdict combines both witnesses by rules.HandlerNow and
	// VerdictBy names the one that decided (docs/json.md).
	Container ContainerWitnessJSON `json:"container"`
	Verdict   string               `json:"verdict"`
	VerdictBy string               `json:"verdictBy"`
}

// ContainerWitnessJSON is what the container says of a subscription's handler: a TTL behind.
type ContainerWitnessJSON struct {
	Failing          bool   `json:"failing"`
	NewestDeadLetter string `json:"newestDeadLetter,omitempty"`
	LastHour         int    `json:"lastHour"`
}

// handlerJSON is Event Grid's witness on one subscription: its verdict and the counts behind it.
type HandlerJSON struct {
	Subscription Text             `json:"subscription"`
	Topic        Text             `json:"topic,omitempty"`
	Verdict      string           `json:"verdict"` // failing, recovering, healthy, noDeliveries, unknown
	Failed       int64            `json:"failed"`
	FailedBy     map[string]int64 `json:"failedBy,omitempty"`
	Succeeded    int64            `json:"succeeded"`
	DeadLettered int64            `json:"deadLettered"`
	Dropped      int64            `json:"dropped"`
	LastFailure  string           `json:"lastFailure,omitempty"`
	LastSuccess  string           `json:"lastSuccess,omitempty"`
}

// witnessJSON is what a witness read: as of when, over what window, and what it could not read.
type WitnessJSON struct {
	Source        string        `json:"source,omitempty"`
	AsOf          string        `json:"asOf,omitempty"`
	WindowSeconds int64         `json:"windowSeconds,omitempty"`
	Problems      []Text        `json:"problems,omitempty"`
	None          Text          `json:"none,omitempty"`
	ReplayDropped []HandlerJSON `json:"replayDropped,omitempty"`
}

func ToHandlerJSON(h rules.HandlerHealth) HandlerJSON {
	j := HandlerJSON{Subscription: Text(h.Subscription), Topic: Text(h.Topic), Verdict: h.Verdict.String(), Failed: h.Failed,
		Succeeded: h.Succeeded, DeadLettered: h.DeadLettered, Dropped: h.Dropped}
	if len(h.FailedBy) > 0 {
		j.FailedBy = h.FailedBy
	}
	if !h.LastFailure.IsZero() {
		j.LastFailure = RFC3339(h.LastFailure)
	}
	if !h.LastSuccess.IsZero() {
		j.LastSuccess = RFC3339(h.LastSuccess)
	}
	return j
}

// toWitnessJSON is nil when no witness is configured.
func ToWitnessJSON(w rules.WitnessReport) *WitnessJSON {
	if !present.HasWitness(w) {
		return nil
	}
	j := &WitnessJSON{Source: w.Source, None: Text(w.None), WindowSeconds: int64(w.Window.Seconds())}
	if !w.AsOf.IsZero() {
		j.AsOf = RFC3339(w.AsOf)
	}
	for _, p := range w.Problems {
		j.Problems = append(j.Problems, Text(present.Problem(p)))
	}
	for _, h := range w.Dropping() {
		j.ReplayDropped = append(j.ReplayDropped, ToHandlerJSON(h))
	}
	return j
}

// toReadinessJSON is the container's witness per subscription, with Event Grid's beside it when one is
// configured (unknown when it has no word on the subscription).
func ToReadinessJSON(rs []rules.Readiness, w rules.WitnessReport) []ReadinessJSON {
	out := make([]ReadinessJSON, 0, len(rs))
	for _, r := range rs {
		j := ReadinessJSON{Subscription: Text(r.Subscription), LastHour: r.LastWindow, Failing: r.Failing}
		if !r.NewestDeadLetter.IsZero() {
			j.NewestDeadLetter = RFC3339(r.NewestDeadLetter)
		}
		j.Container = ContainerWitnessJSON{Failing: r.Failing, NewestDeadLetter: j.NewestDeadLetter, LastHour: r.LastWindow}
		v := rules.HandlerUnknown
		if present.HasWitness(w) {
			h, ok := w.HandlerOf(r.Subscription)
			if !ok {
				h = rules.HandlerHealth{Subscription: r.Subscription}
			}
			hj := ToHandlerJSON(h)
			j.EventGrid = &hj
			v = h.Verdict
		}
		j.Verdict, j.VerdictBy = rules.HandlerNow(r, v)
		out = append(out, j)
	}
	return out
}

// toResultsJSON is an action's results as JSON; force is how the command lifts a refusal. A dry run's outcomes
// say what would be done (wouldDrain, wouldRestore), never that it was.
func ToResultsJSON(dryRun bool, rs []rules.Result, force present.Force) ResultsJSON {
	out := ResultsJSON{DryRun: dryRun, Results: []ResultJSON{}}
	for _, r := range rs {
		outcome := r.Outcome
		if would, ok := DryRunOutcomes[outcome]; ok && dryRun {
			outcome = would
		}
		out.Results = append(out.Results, ResultJSON{Name: Text(r.Name), Outcome: outcome, Target: Text(r.Target),
			Error: Text(present.Reason(r.Reason, force)), Resume: r.Resume})
	}
	return out
}

// dryRunOutcomes are the outcomes a dry run reports instead of the ones only a real run can have.
var DryRunOutcomes = map[rules.Outcome]rules.Outcome{rules.OutcomeDrained: "wouldDrain", rules.OutcomeRestored: "wouldRestore",
	rules.OutcomeRepaired: "wouldRepair", rules.OutcomeAcked: "wouldAck", rules.OutcomeCleared: "wouldClear"}

// maxFindingNames is how many blob names check prints per finding; the rest are counted.
const MaxFindingNames = 10

type FindingJSON struct {
	Kind    rules.FindingKind `json:"kind"`
	Count   int               `json:"count"`
	Oldest  string            `json:"oldest,omitempty"`
	Message Text              `json:"message,omitempty"`
	Names   []Text            `json:"names"`
	More    int               `json:"more"`
	// Acked lists the acknowledged blobs of the kind: silenced (not in count) for stranded, quarantine and
	// replayStalled; still counted for the others.
	Acked     []AckedJSON `json:"acked"`
	AckedMore int         `json:"ackedMore"`
}

type AckedJSON struct {
	Name  Text   `json:"name"`
	By    Text   `json:"by"`
	Until string `json:"until"`
	Note  Text   `json:"note,omitempty"`
}

type SuspiciousJSON struct {
	Name Text `json:"name"`
	Why  Text `json:"why"`
}

type CheckJSON struct {
	Healthy  bool               `json:"healthy"`
	Counts   map[rules.Pane]int `json:"counts"`
	Findings []FindingJSON      `json:"findings"`
	// Acknowledged are the kinds whose every blob is acknowledged (no finding raises them).
	Acknowledged []FindingJSON `json:"acknowledged"`
	Handled      int           `json:"handled"`
	Acked        int           `json:"acked"`
	// SuspiciousAcks are blobs whose ack tags were ignored (forged, broken, too long).
	SuspiciousAcks []SuspiciousJSON `json:"suspiciousAcks"`
	Suspicious     int              `json:"suspicious"`
	// EventGrid is what Event Grid's witness read (when one is configured): the handlerFailing and
	// replayDropping findings' evidence, and what could not be read.
	EventGrid *EventGridJSON `json:"eventGrid,omitempty"`
	// Rehearsal: the container's time is a twin's clock, not the service's (a directory deadletter made a twin).
	Rehearsal bool `json:"rehearsal,omitempty"`
	// AppStart is what a worker start of the Function App would re-upload now (SPEC §4), counted.
	AppStart AppStartCountsJSON `json:"appStart"`
}

// AppStartCountsJSON is what a worker start's drain would re-upload now, as counts: the stranded blobs it is
// for, the handled ones (their events republished a second time), the crash ones (the replay throws again) and the
// untriggerable ones (re-uploaded to no effect).
type AppStartCountsJSON struct {
	Takes         int  `json:"takes"`
	Stranded      int  `json:"stranded"`
	Handled       int  `json:"handled"`
	HandledEvents int  `json:"handledEvents"`
	Crash         int  `json:"crash"`
	Untriggerable int  `json:"untriggerable"`
	Repeats       bool `json:"repeats"`
}

// eventGridJSON is the witness as check and watch give it: when, what could not be read, every subscription.
type EventGridJSON struct {
	WitnessJSON
	Handlers []HandlerJSON `json:"handlers"`
}

func ToEventGridJSON(w rules.WitnessReport) *EventGridJSON {
	wj := ToWitnessJSON(w)
	if wj == nil {
		return nil
	}
	out := &EventGridJSON{WitnessJSON: *wj, Handlers: []HandlerJSON{}}
	for _, h := range w.Handlers {
		out.Handlers = append(out.Handlers, ToHandlerJSON(h))
	}
	return out
}

type CheckErrorJSON struct {
	Healthy bool `json:"healthy"`
	Error   Text `json:"error"`
}

func ToCheckJSON(cfg rules.Config, r rules.Report) CheckJSON {
	out := CheckJSON{Healthy: r.Healthy, Counts: r.Counts, Findings: []FindingJSON{}, Acknowledged: []FindingJSON{}, Handled: r.Handled,
		Acked: r.Acked, SuspiciousAcks: []SuspiciousJSON{}, Suspicious: r.SuspiciousCount}
	for _, f := range r.Findings {
		out.Findings = append(out.Findings, ToFindingJSON(f, Text(present.ReportFindingMessage(f, cfg, r))))
	}
	for _, f := range r.Acknowledged {
		out.Acknowledged = append(out.Acknowledged, ToFindingJSON(f, ""))
	}
	for _, s := range r.Suspicious {
		out.SuspiciousAcks = append(out.SuspiciousAcks, SuspiciousJSON{Name: Text(s.Name), Why: Text(s.Why)})
	}
	out.EventGrid = ToEventGridJSON(r.Witness)
	a := r.AppStart
	out.AppStart = AppStartCountsJSON{Takes: a.Takes(), Stranded: a.Stranded, Handled: a.Handled, HandledEvents: a.HandledEvents, Crash: a.Crash,
		Untriggerable: a.Untriggerable, Repeats: a.Repeats()}
	return out
}

func ToFindingJSON(f rules.Finding, message Text) FindingJSON {
	fj := FindingJSON{Kind: f.Kind, Count: f.Count, Message: message, Names: Texts(f.Names[:min(len(f.Names), MaxFindingNames)]), Acked: []AckedJSON{}}
	if !f.Oldest.IsZero() {
		fj.Oldest = RFC3339(f.Oldest)
	}
	fj.More = f.Count - len(fj.Names)
	for _, a := range f.Acked[:min(len(f.Acked), MaxFindingNames)] {
		fj.Acked = append(fj.Acked, AckedJSON{Name: Text(a.Name), By: Text(a.Ack.By), Until: RFC3339(a.Ack.Until), Note: Text(a.Ack.Note)})
	}
	fj.AckedMore = len(f.Acked) - len(fj.Acked)
	return fj
}

type ChangeJSON struct {
	Time    string            `json:"time"`
	Kind    rules.FindingKind `json:"kind"`
	Event   rules.ChangeEvent `json:"event"`
	Count   int               `json:"count"`
	Total   int               `json:"total"`
	Names   []Text            `json:"names"`
	More    int               `json:"more"`
	Message Text              `json:"message"`
	// Context is the config file's context the change is of (watch --all-contexts), else absent.
	Context Text `json:"context,omitempty"`
}

func ToChangeJSON(c rules.Change) ChangeJSON {
	return ChangeJSON{Time: RFC3339(c.Time), Kind: c.Kind, Event: c.Event, Count: c.Count, Total: c.Total, Names: Texts(c.Names), More: c.More,
		Message: Text(present.ChangeMessage(c))}
}

// reportJSON is the report's facts (the README documents the shape).
type ReportJSON struct {
	Container Text `json:"container"`
	// Rehearsal: the container is a twin and its time the twin's clock — a rehearsal, not an incident.
	Rehearsal   bool               `json:"rehearsal,omitempty"`
	Now         string             `json:"now"`
	Since       string             `json:"since"`
	WindowHours int                `json:"windowHours"`
	Counts      map[rules.Pane]int `json:"counts"`
	Blobs       int                `json:"blobs"`
	Events      int                `json:"events"`
	Handled     int                `json:"handled"`
	Unread      int                `json:"unread"`
	// Unreadable counts blobs whose payload could not be read; the report is then not healthy.
	Unreadable      int                `json:"unreadable"`
	FirstUnreadable Text               `json:"firstUnreadable,omitempty"`
	BurstStart      *string            `json:"burstStart"`
	Timeline        []HourJSON         `json:"timeline"`
	Before          int                `json:"eventsBeforeWindow"`
	Subscriptions   []SubscriptionJSON `json:"subscriptions"`
	Loss            []LossJSON         `json:"loss"`
	Healthy         bool               `json:"healthy"`
	Findings        []FindingJSON      `json:"findings"`
	// AppStart is what a worker start of the Function App would re-upload now (as check gives it).
	AppStart AppStartCountsJSON `json:"appStart"`
	Drains   []DrainJSON        `json:"drains"`
	Restores []RestoredJSON     `json:"restores"`
	// Readiness is every subscription's: has its handler recovered (see resultsJSON).
	Readiness []ReadinessJSON `json:"readiness"`
	// EventGrid is what Event Grid's witness read, when one is configured.
	EventGrid *EventGridJSON `json:"eventGrid,omitempty"`
	// Record is the record's actions on this estate (record.go, log.go), when it was read.
	Record *ReportRecordJSON `json:"record,omitempty"`
}

type HourJSON struct {
	Hour           string         `json:"hour"`
	Events         int            `json:"events"`
	BySubscription map[string]int `json:"bySubscription"`
}

type SubscriptionJSON struct {
	Name    Text           `json:"name"`
	Events  int            `json:"events"`
	Reasons []ReasonJSON   `json:"reasons"`
	Fates   map[string]int `json:"fates"`
}

type ReasonJSON struct {
	Reason  Text `json:"reason"`
	Events  int  `json:"events"`
	Outcome Text `json:"lastDeliveryOutcome"`
}

type LossJSON struct {
	WithinHours int `json:"withinHours"`
	Blobs       int `json:"blobs"`
	Events      int `json:"events"`
	Unread      int `json:"unread"`
}

type DrainJSON struct {
	Name       Text `json:"name"`
	DrainCount Text `json:"drainCount"`
	DrainedAt  Text `json:"drainedAt"`
}

type RestoredJSON struct {
	Name Text `json:"name"`
	From Text `json:"restoredFrom"`
}

// versionJSON is `version --json`: where the binary came from (commit empty when the build recorded none).
type VersionJSON struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

// ViewListJSON is view list -o json: the saved views the context in force sees.
type ViewListJSON struct {
	Config  Text           `json:"config"`
	Context Text           `json:"context"`
	Views   []ViewLineJSON `json:"views"`
}

// ViewLineJSON is one saved view; Context is "" for a view of every context.
type ViewLineJSON struct {
	Name    Text `json:"name"`
	Filter  Text `json:"filter"`
	Sort    Text `json:"sort"`
	Context Text `json:"context"`
}
