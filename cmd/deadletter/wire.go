package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
)

// The JSON formats of docs/json.md, in one place. Scripts depend on these names; tests assert them.
// Domain types carry no json tags: everything written goes through these.

// text is untrusted text in JSON: escaped so that no control character, C1 control, DEL, bidirectional override
// or line separator reaches a terminal that prints the JSON, and a lone surrogate the estate keeps is \udXXX.
type text string

func (t text) MarshalJSON() ([]byte, error) { return textfmt.AppendJSON(nil, string(t)), nil }

// optText is text that is null when empty.
type optText string

func (t optText) MarshalJSON() ([]byte, error) {
	if t == "" {
		return []byte("null"), nil
	}
	return textfmt.AppendJSON(nil, string(t)), nil
}

// counts is a multiset of untrusted values as a JSON object (its keys escaped like text).
type counts rules.Counts

func (c counts) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, x := range c {
		if i > 0 {
			b = append(b, ',')
		}
		b = textfmt.AppendJSON(b, x.Value)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(x.N), 10)
	}
	return append(b, '}'), nil
}

// verdictCounts is a verdict count as {"replay": 3, "cap": 1}, non-zero counts only.
type verdictCounts rules.VerdictCounts

func (vc verdictCounts) MarshalJSON() ([]byte, error) {
	m := map[string]int{}
	for _, v := range rules.AllVerdicts {
		if n := rules.VerdictCounts(vc).Of(v); n > 0 {
			m[v.String()] = n
		}
	}
	return json.Marshal(m)
}

// attempt is a replay attempt as the estate sees it: a JSON number (1e+21 past the integers), null for Infinity.
type attempt rules.Attempt

func (a attempt) MarshalJSON() ([]byte, error) {
	if !rules.Attempt(a).Finite() {
		return []byte("null"), nil
	}
	return []byte(rules.Attempt(a).String()), nil
}

func verdictNames(vs rules.VerdictSet) []string {
	out := []string{}
	for _, v := range vs.List() {
		out = append(out, v.String())
	}
	return out
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

type blobJSON struct {
	Name             text          `json:"name"`
	Pane             rules.Pane    `json:"pane"`
	Size             int64         `json:"size"`
	LastModified     string        `json:"lastModified"`
	AgeSeconds       int64         `json:"ageSeconds"`
	ExpiresAt        string        `json:"expiresAt"`
	Events           int           `json:"events"`
	Malformed        bool          `json:"malformed"`
	Error            optText       `json:"error"`
	MaxReplayAttempt attempt       `json:"maxReplayAttempt"`
	Reasons          counts        `json:"reasons"`
	Outcomes         counts        `json:"outcomes"`
	Verdicts         verdictCounts `json:"verdicts"`
	Expiring         bool          `json:"expiring"`
	Stalled          bool          `json:"stalled"`
	Handled          bool          `json:"handled"`
	HandledBy        text          `json:"handledBy,omitempty"`
	// Untriggerable: a root blob the replay subscription's filter never delivers (docs/estate.md).
	Untriggerable bool       `json:"untriggerable"`
	Crash         *crashJSON `json:"crash,omitempty"`
	// MayCrash: what the replay serializes nests where the estate's runtime decides (a warning).
	MayCrash *crashJSON `json:"mayCrash,omitempty"`
	Ack      *ackJSON   `json:"ack,omitempty"`
}

type crashJSON struct {
	Depth int `json:"depth"`
	// Stage is where the replay throws: "quarantine" (before writing anything) or "publish" (after the
	// quarantine copy); only in a preview.
	Stage  string `json:"stage,omitempty"`
	Reason string `json:"reason"`
}

func stageName(s rules.CrashStage) string {
	switch s {
	case rules.StageQuarantine:
		return "quarantine"
	case rules.StagePublish:
		return "publish"
	}
	return ""
}

type ackJSON struct {
	By     text   `json:"by"`
	At     string `json:"at"`
	Until  string `json:"until"`
	Note   text   `json:"note,omitempty"`
	Active bool   `json:"active"`
}

func toBlobJSON(cfg rules.Config, it *rules.Item, now time.Time) blobJSON {
	a := cfg.AlertsOf(it, now)
	b := blobJSON{Name: text(it.Name), Pane: it.Pane, Size: it.Size, LastModified: rfc3339(it.LastModified), AgeSeconds: int64(it.Age / time.Second),
		ExpiresAt: rfc3339(a.ExpiresAt), Reasons: counts{}, Outcomes: counts{}, Expiring: a.Expiring, Stalled: a.Stalled,
		Handled: a.Handled, HandledBy: text(a.HandledBy), Untriggerable: a.Untriggerable}
	if s := it.Summary; s != nil {
		b.Events, b.Malformed, b.MaxReplayAttempt = s.Events, s.Malformed, attempt(s.MaxReplayAttempt)
		b.Reasons, b.Outcomes, b.Verdicts = counts(s.Reasons), counts(s.Outcomes), verdictCounts(s.Verdicts)
		b.Error = optText(s.Error)
		if a.Crash {
			b.Crash = &crashJSON{Depth: s.CrashDepth, Reason: present.CrashReason(s.CrashDepth)}
		}
		if a.MayCrash {
			b.MayCrash = &crashJSON{Depth: s.MayCrash, Reason: present.MayCrashNote(s.MayCrash)}
		}
	}
	if it.ReadErr != "" {
		b.Error = optText(it.ReadErr)
	}
	if ack := a.Ack; ack != nil {
		b.Ack = &ackJSON{By: text(ack.By), At: rfc3339(ack.At), Until: rfc3339(ack.Until), Note: text(ack.Note), Active: a.Acked}
	}
	return b
}

type eventJSON struct {
	Index                   int      `json:"index"`
	ID                      text     `json:"id"`
	OriginalID              text     `json:"originalId"`
	ReplayAttempt           attempt  `json:"replayAttempt"`
	EventType               text     `json:"eventType"`
	Subject                 text     `json:"subject"`
	DeadLetterReason        text     `json:"deadLetterReason"`
	DeliveryAttempts        *int64   `json:"deliveryAttempts"`
	LastDeliveryOutcome     text     `json:"lastDeliveryOutcome"`
	LastHTTPStatusCode      *int64   `json:"lastHttpStatusCode"`
	PublishTime             text     `json:"publishTime"`
	LastDeliveryAttemptTime text     `json:"lastDeliveryAttemptTime"`
	Verdicts                []string `json:"verdicts"`
	Uncountable             bool     `json:"uncountable"`
}

type republishJSON struct {
	Index     int  `json:"index"`
	ID        text `json:"id"`
	EventType text `json:"eventType"`
}

type quarantinedJSON struct {
	Index     int      `json:"index"`
	ID        text     `json:"id"`
	EventType text     `json:"eventType"`
	Verdicts  []string `json:"verdicts"`
}

type publishRequestJSON struct {
	First  int `json:"first"`
	Last   int `json:"last"`
	Events int `json:"events"`
	Bytes  int `json:"bytes"`
}

type previewJSON struct {
	Malformed       bool                 `json:"malformed"`
	Republish       []republishJSON      `json:"republish"`
	Quarantine      []quarantinedJSON    `json:"quarantine"`
	Unknown         int                  `json:"unknown,omitempty"`
	PublishRequests []publishRequestJSON `json:"publishRequests"`
	QuarantineName  text                 `json:"quarantineName,omitempty"`
	ArchiveName     text                 `json:"archiveName,omitempty"`
	DeleteOriginal  bool                 `json:"deleteOriginal"`
}

// crashPreviewJSON is the preview of a blob the replay function throws on: nothing republished or archived, the
// original stays; at the publish stage the quarantine copy of its refused events is still written.
type crashPreviewJSON struct {
	Crash          crashJSON         `json:"crash"`
	Quarantine     []quarantinedJSON `json:"quarantine"`
	QuarantineName text              `json:"quarantineName,omitempty"`
	DeleteOriginal bool              `json:"deleteOriginal"`
}

type restoreJSON struct {
	Malformed    bool              `json:"malformed"`
	Resume       []republishJSON   `json:"resume"`
	Requarantine []quarantinedJSON `json:"requarantine"`
	Unknown      int               `json:"unknown,omitempty"`
	Target       text              `json:"target"`
	Stripped     int               `json:"stripped"`
	Refusal      text              `json:"refusal,omitempty"`
}

// showJSON is the ls fields with the event list as "events" (a field of the outer struct wins over the embedded
// count of the same name) and the count as "eventCount".
type showJSON struct {
	blobJSON
	EventCount int          `json:"eventCount"`
	EventList  []eventJSON  `json:"events"`
	Preview    any          `json:"preview,omitempty"`
	Restore    *restoreJSON `json:"restore,omitempty"`
	// Rehearsal: the blob is a twin's, its age the twin's clock.
	Rehearsal bool `json:"rehearsal,omitempty"`
}

func quarantinedOf(q []rules.Quarantined) []quarantinedJSON {
	out := make([]quarantinedJSON, 0, len(q))
	for _, e := range q {
		out = append(out, quarantinedJSON{Index: e.Index, ID: text(e.ID), EventType: text(e.EventType), Verdicts: verdictNames(e.Verdicts)})
	}
	return out
}

func toShowJSON(cfg rules.Config, d *replay.Detail) showJSON {
	out := showJSON{blobJSON: toBlobJSON(cfg, &d.Item, d.Now), EventList: []eventJSON{}}
	out.EventCount = out.Events
	for i, ev := range d.Payload.Events {
		e := eventJSON{Index: ev.Index, ID: text(ev.ID), EventType: text(ev.EventType), Subject: text(ev.Subject), DeadLetterReason: text(ev.DeadLetterReason),
			DeliveryAttempts: ev.DeliveryAttempts, LastDeliveryOutcome: text(ev.LastDeliveryOutcome), LastHTTPStatusCode: ev.LastHTTPStatusCode,
			PublishTime: text(ev.PublishTime), LastDeliveryAttemptTime: text(ev.LastDeliveryAttemptTime)}
		if i < len(d.Judgements) {
			j := d.Judgements[i]
			e.OriginalID, e.ReplayAttempt, e.Uncountable = text(j.Original), attempt(j.Attempt), j.Uncountable
		}
		vs, _ := d.EventVerdicts(i)
		e.Verdicts = verdictNames(vs)
		out.EventList = append(out.EventList, e)
	}
	if pv := d.Preview; pv != nil {
		out.Preview = toPreviewJSON(pv)
	}
	if rp := d.Restore; rp != nil {
		r := &restoreJSON{Malformed: rp.Malformed, Resume: []republishJSON{}, Requarantine: quarantinedOf(rp.Requarantine), Unknown: rp.Unknown,
			Target: text(rp.Target), Stripped: rp.Stripped, Refusal: text(present.Reason(rp.Refusal, present.ForceFlag))}
		for _, e := range rp.Resume {
			r.Resume = append(r.Resume, republishJSON{Index: e.Index, ID: text(e.ID), EventType: text(e.EventType)})
		}
		out.Restore = r
	}
	return out
}

// toPreviewJSON is what the replay does with a root blob, as show --json says it: previewJSON, or
// crashPreviewJSON for a blob it throws on.
func toPreviewJSON(pv *rules.Preview) any {
	if pv.Crash != nil {
		return crashPreviewJSON{Crash: crashJSON{Depth: pv.Crash.Depth, Stage: stageName(pv.Crash.Stage), Reason: present.CrashReason(pv.Crash.Depth)},
			Quarantine: quarantinedOf(pv.Quarantine), QuarantineName: text(pv.QuarantineName)}
	}
	p := previewJSON{Malformed: pv.Malformed, Republish: []republishJSON{}, Quarantine: quarantinedOf(pv.Quarantine), Unknown: pv.Unknown,
		PublishRequests: []publishRequestJSON{}, QuarantineName: text(pv.QuarantineName), ArchiveName: text(pv.ArchiveName), DeleteOriginal: pv.DeleteOriginal}
	for _, r := range pv.Republish {
		p.Republish = append(p.Republish, republishJSON{Index: r.Index, ID: text(r.ID), EventType: text(r.EventType)})
	}
	for _, r := range pv.PublishRequests {
		p.PublishRequests = append(p.PublishRequests, publishRequestJSON(r))
	}
	return p
}

// repairJSON is what edit and resubmit did (or, with --dry-run, would do): the new blob written, the original
// retired, the previews beside each other, and the file an edit that was not written was kept in.
type repairJSON struct {
	DryRun bool `json:"dryRun"`
	// Estate is the container written to (with its context).
	Estate text `json:"estate"`
	// Rehearsal: the container is a twin, its time the twin's clock (as check, drain, restore and ack say).
	Rehearsal bool          `json:"rehearsal,omitempty"`
	Original  text          `json:"original,omitempty"`
	Outcome   rules.Outcome `json:"outcome"`
	// Written is the new root dead letter; Retired the original deleted after it landed.
	Written text `json:"written,omitempty"`
	// AlreadyThere is the blob that holds this very payload already — an earlier repair or resubmit of it
	// wrote it — when a retry writes nothing (Written is then absent).
	AlreadyThere text `json:"alreadyThere,omitempty"`
	Retired      text `json:"retired,omitempty"`
	Error        text `json:"error,omitempty"`
	// Kept is the file an edit that was not written was kept in.
	Kept text `json:"kept,omitempty"`
	// Before is the original's bytes judged at the root; After the edited ones (show's preview format).
	Before any `json:"before,omitempty"`
	After  any `json:"after"`
	// Malformed is why the edited payload fails the schema (absent when it passes).
	Malformed text          `json:"malformed,omitempty"`
	Counted   []countedJSON `json:"counted"`
	// Undiagnosed counts edited events that lost Event Grid's deadLetterReason the original's events had.
	Undiagnosed int `json:"undiagnosed"`
}

// countedJSON is an event whose id still carries a replay attempt.
type countedJSON struct {
	Index   int     `json:"index"`
	ID      text    `json:"id"`
	Attempt attempt `json:"attempt"`
	Capped  bool    `json:"capped"`
}

func toRepairJSON(estate string, rp *rules.RepairPlan, r rules.Result, dryRun bool, kept string) repairJSON {
	outcome := r.Outcome
	if would, ok := dryRunOutcomes[outcome]; ok && dryRun {
		outcome = would
	}
	out := repairJSON{DryRun: dryRun, Estate: text(estate), Outcome: outcome, Written: text(r.Target), Retired: text(r.Retired),
		Error: text(present.Reason(r.Reason, present.ForceRepair)), Kept: text(kept), After: toPreviewJSON(&rp.After), Counted: []countedJSON{}}
	if !r.Outcome.Done() {
		out.Written = ""
	}
	if r.Reason.Kind == rules.ReasonAlreadyWritten {
		out.Written, out.AlreadyThere = "", text(r.Target)
	}
	if r.Outcome == rules.OutcomeRefused && len(rp.Also) > 0 && r.Reason.Kind == rp.Refusal.Kind { // every reason, as the preview said
		out.Error = text(present.RepairRefused(rp, present.ForceRepair))
	}
	if rp.Original != nil {
		out.Original = text(rp.Original.Name)
	}
	if rp.Before != nil {
		out.Before = toPreviewJSON(rp.Before)
	}
	if rp.Payload.Malformed() {
		out.Malformed = text(rp.Payload.Err.Error())
	}
	out.Undiagnosed = rp.Undiagnosed
	for _, c := range rp.Counted {
		out.Counted = append(out.Counted, countedJSON{Index: c.Index, ID: text(c.ID), Attempt: attempt(c.Attempt), Capped: c.Capped})
	}
	return out
}

// export --json is {"estate", "to", "written": [exportedJSON], "refused": [exportRefusedJSON], "totals",
// "error"?}: exportReport streams it, a million blobs without holding them.

type exportedJSON struct {
	Name text  `json:"name"`
	Size int64 `json:"size"`
}

type exportRefusedJSON struct {
	Name  text `json:"name"`
	Error text `json:"error"`
}

// exportTotalsJSON counts what export wrote and did not (refused includes the names not found).
type exportTotalsJSON struct {
	Written int   `json:"written"`
	Bytes   int64 `json:"bytes"`
	Refused int   `json:"refused"`
}

type resultJSON struct {
	Name    text          `json:"name"`
	Outcome rules.Outcome `json:"outcome"`
	Target  text          `json:"target,omitempty"`
	Error   text          `json:"error,omitempty"`
	Resume  int           `json:"resume,omitempty"`
}

type resultsJSON struct {
	DryRun  bool         `json:"dryRun"`
	Results []resultJSON `json:"results"`
	// Estate is the container the action wrote to, as a person reads it: its context, account or directory and
	// container; Rehearsal, that its time was a twin's clock.
	Estate    text `json:"estate,omitempty"`
	Rehearsal bool `json:"rehearsal,omitempty"`
	// Readiness (drain only) is, per subscription the drain takes, whether its handler still failed within the
	// TTL: drained now, those events would most likely dead-letter again.
	Readiness []readinessJSON `json:"readiness,omitempty"`
	// EventGrid (drain only, when a witness is configured) is what Event Grid's witness read: when, and what it
	// could not.
	EventGrid *witnessJSON `json:"eventGrid,omitempty"`
	// Warnings (restore only, additive) are the warnings said before the question: each subscription Event
	// Grid says is failing now whose events the restored copies resume.
	Warnings []text `json:"warnings,omitempty"`
}

type readinessJSON struct {
	Subscription     text   `json:"subscription"`
	NewestDeadLetter string `json:"newestDeadLetter,omitempty"`
	// LastHour counts the dead letters written within the last TTL window (an hour, by the estate's TTL).
	LastHour int  `json:"lastHour"`
	Failing  bool `json:"failing"`
	// EventGrid is the second witness's verdict on the subscription, when a witness is configured.
	EventGrid *handlerJSON `json:"eventGrid,omitempty"`
}

// handlerJSON is Event Grid's witness on one subscription: its verdict and the counts behind it.
type handlerJSON struct {
	Subscription text             `json:"subscription"`
	Topic        text             `json:"topic,omitempty"`
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
type witnessJSON struct {
	Source        string        `json:"source,omitempty"`
	AsOf          string        `json:"asOf,omitempty"`
	WindowSeconds int64         `json:"windowSeconds,omitempty"`
	Problems      []text        `json:"problems,omitempty"`
	None          text          `json:"none,omitempty"`
	ReplayDropped []handlerJSON `json:"replayDropped,omitempty"`
}

func toHandlerJSON(h rules.HandlerHealth) handlerJSON {
	j := handlerJSON{Subscription: text(h.Subscription), Topic: text(h.Topic), Verdict: h.Verdict.String(), Failed: h.Failed,
		Succeeded: h.Succeeded, DeadLettered: h.DeadLettered, Dropped: h.Dropped}
	if len(h.FailedBy) > 0 {
		j.FailedBy = h.FailedBy
	}
	if !h.LastFailure.IsZero() {
		j.LastFailure = rfc3339(h.LastFailure)
	}
	if !h.LastSuccess.IsZero() {
		j.LastSuccess = rfc3339(h.LastSuccess)
	}
	return j
}

// toWitnessJSON is nil when no witness is configured.
func toWitnessJSON(w rules.WitnessReport) *witnessJSON {
	if !present.HasWitness(w) {
		return nil
	}
	j := &witnessJSON{Source: w.Source, None: text(w.None), WindowSeconds: int64(w.Window.Seconds())}
	if !w.AsOf.IsZero() {
		j.AsOf = rfc3339(w.AsOf)
	}
	for _, p := range w.Problems {
		j.Problems = append(j.Problems, text(present.Problem(p)))
	}
	for _, h := range w.Dropping() {
		j.ReplayDropped = append(j.ReplayDropped, toHandlerJSON(h))
	}
	return j
}

// toReadinessJSON is the container's witness per subscription, with Event Grid's beside it when one is
// configured (unknown when it has no word on the subscription).
func toReadinessJSON(rs []rules.Readiness, w rules.WitnessReport) []readinessJSON {
	out := make([]readinessJSON, 0, len(rs))
	for _, r := range rs {
		j := readinessJSON{Subscription: text(r.Subscription), LastHour: r.LastWindow, Failing: r.Failing}
		if !r.NewestDeadLetter.IsZero() {
			j.NewestDeadLetter = rfc3339(r.NewestDeadLetter)
		}
		if present.HasWitness(w) {
			h, ok := w.HandlerOf(r.Subscription)
			if !ok {
				h = rules.HandlerHealth{Subscription: r.Subscription}
			}
			hj := toHandlerJSON(h)
			j.EventGrid = &hj
		}
		out = append(out, j)
	}
	return out
}

// toResultsJSON is an action's results as JSON; force is how the command lifts a refusal. A dry run's outcomes
// say what would be done (wouldDrain, wouldRestore), never that it was.
func toResultsJSON(dryRun bool, rs []rules.Result, force present.Force) resultsJSON {
	out := resultsJSON{DryRun: dryRun, Results: []resultJSON{}}
	for _, r := range rs {
		outcome := r.Outcome
		if would, ok := dryRunOutcomes[outcome]; ok && dryRun {
			outcome = would
		}
		out.Results = append(out.Results, resultJSON{Name: text(r.Name), Outcome: outcome, Target: text(r.Target),
			Error: text(present.Reason(r.Reason, force)), Resume: r.Resume})
	}
	return out
}

// dryRunOutcomes are the outcomes a dry run reports instead of the ones only a real run can have.
var dryRunOutcomes = map[rules.Outcome]rules.Outcome{rules.OutcomeDrained: "wouldDrain", rules.OutcomeRestored: "wouldRestore",
	rules.OutcomeRepaired: "wouldRepair", rules.OutcomeAcked: "wouldAck", rules.OutcomeCleared: "wouldClear"}

// maxFindingNames is how many blob names check prints per finding; the rest are counted.
const maxFindingNames = 10

type findingJSON struct {
	Kind    rules.FindingKind `json:"kind"`
	Count   int               `json:"count"`
	Oldest  string            `json:"oldest,omitempty"`
	Message text              `json:"message,omitempty"`
	Names   []text            `json:"names"`
	More    int               `json:"more"`
	// Acked lists the acknowledged blobs of the kind: silenced (not in count) for stranded, quarantine and
	// replayStalled; still counted for the others.
	Acked     []ackedJSON `json:"acked"`
	AckedMore int         `json:"ackedMore"`
}

type ackedJSON struct {
	Name  text   `json:"name"`
	By    text   `json:"by"`
	Until string `json:"until"`
	Note  text   `json:"note,omitempty"`
}

type suspiciousJSON struct {
	Name text `json:"name"`
	Why  text `json:"why"`
}

type checkJSON struct {
	Healthy  bool               `json:"healthy"`
	Counts   map[rules.Pane]int `json:"counts"`
	Findings []findingJSON      `json:"findings"`
	// Acknowledged are the kinds whose every blob is acknowledged (no finding raises them).
	Acknowledged []findingJSON `json:"acknowledged"`
	Handled      int           `json:"handled"`
	Acked        int           `json:"acked"`
	// SuspiciousAcks are blobs whose ack tags were ignored (forged, broken, too long).
	SuspiciousAcks []suspiciousJSON `json:"suspiciousAcks"`
	Suspicious     int              `json:"suspicious"`
	// EventGrid is what Event Grid's witness read (when one is configured): the handlerFailing and
	// replayDropping findings' evidence, and what could not be read.
	EventGrid *eventGridJSON `json:"eventGrid,omitempty"`
	// Rehearsal: the container's time is a twin's clock, not the service's (a directory deadletter made a twin).
	Rehearsal bool `json:"rehearsal,omitempty"`
}

// eventGridJSON is the witness as check and watch give it: when, what could not be read, every subscription.
type eventGridJSON struct {
	witnessJSON
	Handlers []handlerJSON `json:"handlers"`
}

func toEventGridJSON(w rules.WitnessReport) *eventGridJSON {
	wj := toWitnessJSON(w)
	if wj == nil {
		return nil
	}
	out := &eventGridJSON{witnessJSON: *wj, Handlers: []handlerJSON{}}
	for _, h := range w.Handlers {
		out.Handlers = append(out.Handlers, toHandlerJSON(h))
	}
	return out
}

type checkErrorJSON struct {
	Healthy bool `json:"healthy"`
	Error   text `json:"error"`
}

func toCheckJSON(cfg rules.Config, r rules.Report) checkJSON {
	out := checkJSON{Healthy: r.Healthy, Counts: r.Counts, Findings: []findingJSON{}, Acknowledged: []findingJSON{}, Handled: r.Handled,
		Acked: r.Acked, SuspiciousAcks: []suspiciousJSON{}, Suspicious: r.SuspiciousCount}
	for _, f := range r.Findings {
		out.Findings = append(out.Findings, toFindingJSON(f, text(present.FindingMessage(f, cfg, r.Now))))
	}
	for _, f := range r.Acknowledged {
		out.Acknowledged = append(out.Acknowledged, toFindingJSON(f, ""))
	}
	for _, s := range r.Suspicious {
		out.SuspiciousAcks = append(out.SuspiciousAcks, suspiciousJSON{Name: text(s.Name), Why: text(s.Why)})
	}
	out.EventGrid = toEventGridJSON(r.Witness)
	return out
}

func toFindingJSON(f rules.Finding, message text) findingJSON {
	fj := findingJSON{Kind: f.Kind, Count: f.Count, Message: message, Names: []text{}, Acked: []ackedJSON{}}
	if !f.Oldest.IsZero() {
		fj.Oldest = rfc3339(f.Oldest)
	}
	for _, n := range f.Names[:min(len(f.Names), maxFindingNames)] {
		fj.Names = append(fj.Names, text(n))
	}
	fj.More = f.Count - len(fj.Names)
	for _, a := range f.Acked[:min(len(f.Acked), maxFindingNames)] {
		fj.Acked = append(fj.Acked, ackedJSON{Name: text(a.Name), By: text(a.Ack.By), Until: rfc3339(a.Ack.Until), Note: text(a.Ack.Note)})
	}
	fj.AckedMore = len(f.Acked) - len(fj.Acked)
	return fj
}

type changeJSON struct {
	Time    string            `json:"time"`
	Kind    rules.FindingKind `json:"kind"`
	Event   rules.ChangeEvent `json:"event"`
	Count   int               `json:"count"`
	Total   int               `json:"total"`
	Names   []text            `json:"names"`
	More    int               `json:"more"`
	Message text              `json:"message"`
	// Context is the config file's context the change is of (watch --all-contexts), else absent.
	Context text `json:"context,omitempty"`
}

func toChangeJSON(c rules.Change) changeJSON {
	out := changeJSON{Time: rfc3339(c.Time), Kind: c.Kind, Event: c.Event, Count: c.Count, Total: c.Total, Names: []text{}, More: c.More,
		Message: text(present.ChangeMessage(c))}
	for _, n := range c.Names {
		out.Names = append(out.Names, text(n))
	}
	return out
}

// writeJSON writes v indented, HTML left alone (blob names hold & and <), one document per call.
func writeJSON(w io.Writer, v any) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	json.Indent(&out, b, "", "  ")
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// writeJSONLine writes v on one line (ls --jsonl, watch --json).
func writeJSONLine(w io.Writer, v any) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// marshal is the one way a JSON document leaves deadletter: encoded, then every string in it made safe for a
// terminal (textfmt.SafeJSON) — map keys and any field a type forgot included.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return textfmt.SafeJSON(bytes.TrimRight(b.Bytes(), "\n")), nil
}

// reportJSON is the report's facts (the README documents the shape).
type reportJSON struct {
	Container text `json:"container"`
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
	FirstUnreadable text               `json:"firstUnreadable,omitempty"`
	BurstStart      *string            `json:"burstStart"`
	Timeline        []hourJSON         `json:"timeline"`
	Before          int                `json:"eventsBeforeWindow"`
	Subscriptions   []subscriptionJSON `json:"subscriptions"`
	Loss            []lossJSON         `json:"loss"`
	Healthy         bool               `json:"healthy"`
	Findings        []findingJSON      `json:"findings"`
	Drains          []drainJSON        `json:"drains"`
	Restores        []restoredJSON     `json:"restores"`
	// Readiness is every subscription's: has its handler recovered (see resultsJSON).
	Readiness []readinessJSON `json:"readiness"`
	// EventGrid is what Event Grid's witness read, when one is configured.
	EventGrid *eventGridJSON `json:"eventGrid,omitempty"`
	// Record is the record's actions on this estate (record.go, log.go), when it was read.
	Record *reportRecordJSON `json:"record,omitempty"`
}

type hourJSON struct {
	Hour           string         `json:"hour"`
	Events         int            `json:"events"`
	BySubscription map[string]int `json:"bySubscription"`
}

type subscriptionJSON struct {
	Name    text           `json:"name"`
	Events  int            `json:"events"`
	Reasons []reasonJSON   `json:"reasons"`
	Fates   map[string]int `json:"fates"`
}

type reasonJSON struct {
	Reason  text `json:"reason"`
	Events  int  `json:"events"`
	Outcome text `json:"lastDeliveryOutcome"`
}

type lossJSON struct {
	WithinHours int `json:"withinHours"`
	Blobs       int `json:"blobs"`
	Events      int `json:"events"`
	Unread      int `json:"unread"`
}

type drainJSON struct {
	Name       text `json:"name"`
	DrainCount text `json:"drainCount"`
	DrainedAt  text `json:"drainedAt"`
}

type restoredJSON struct {
	Name text `json:"name"`
	From text `json:"restoredFrom"`
}

// versionJSON is `version --json`: where the binary came from (commit empty when the build recorded none).
type versionJSON struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}
