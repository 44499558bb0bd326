package present

import (
	"fmt"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
)

// BlobState is everything the advice for one blob depends on: where it is, what makes it urgent or exempt, what
// a restore would do with it, whether its handler still fails, and — once it has left — where it went.
type BlobState struct {
	Pane   rules.Pane
	Alerts rules.Alerts
	// Unreadable: its payload could not be read.
	Unreadable bool
	// Restore is a quarantine blob's restore plan (nil when not read).
	Restore *rules.RestorePlan
	// Readiness is its subscription's, when known.
	Readiness *rules.Readiness
	// NothingRepublished: it was read and the replay would republish none of its events (all quarantined, or it
	// crashes), so whether its handler still fails changes nothing for it.
	NothingRepublished bool
	// Events is how many events it holds as read; BeyondRepair, how many of them no repair makes replayable
	// (rules.Config.BeyondRepair): the advice to edit it says so before the operator edits.
	Events       int
	BeyondRepair rules.VerdictCounts
	// Gone, when set, says where the blob went since it was read.
	Gone *replay.Whereabouts
	// Missed says whether the Function App's last start (LastStart, by the activity log) should have re-uploaded
	// it and did not (see SetStarts).
	Missed    rules.StartMiss
	LastStart time.Time
	// Handler is Event Grid's word on its subscription's handler now (rules.HandlerUnknown where no witness says),
	// Subscription the subscription asked of it: with Readiness, the one verdict rules.HandlerNow gives.
	Handler      rules.HandlerVerdict
	Subscription string
	// Drains is how many times deadletter drained it (its marks), DrainedAt when last; TTL the replay trigger's
	// delivery window in force: a blob drained and stranded again says so.
	Drains    int
	DrainedAt time.Time
	TTL       time.Duration
	// Now is the service's time the state was read at.
	Now time.Time
}

// StateOf gathers the state of a read blob.
func StateOf(d *replay.Detail, cfg rules.Config) BlobState {
	s := BlobState{Pane: d.Pane, Alerts: cfg.AlertsOf(&d.Item, d.Now), Unreadable: d.ReadErr != "", Restore: d.Restore, Now: d.Now,
		NothingRepublished: !rules.Republishes([]rules.Item{d.Item})}
	if d.Payload != nil && d.ReadErr == "" {
		s.Events, s.BeyondRepair = len(d.Payload.Events), cfg.BeyondRepair(d.Payload.Events)
	}
	m := rules.MarksOf(d.Item.Metadata)
	s.Drains, s.TTL = m.Drains(), cfg.TTL
	s.DrainedAt, _ = time.Parse(time.RFC3339, m.DrainedAt)
	return s
}

// SetStarts takes in what the activity log says of the Function App's starts: whether its last start missed the
// blob.
func (s *BlobState) SetStarts(cfg rules.Config, it *rules.Item, a rules.AppStarts) {
	s.Missed, s.LastStart = cfg.StartMissed(it, a, s.Now), a.Last
}

// SetHandler takes in Event Grid's witness on the blob's subscription.
func (s *BlobState) SetHandler(w rules.WitnessReport, subscription string) {
	s.Subscription = subscription
	if h, ok := w.HandlerOf(subscription); ok {
		s.Handler = h.Verdict
	}
}

// Advice is what to do about a blob, in one voice: one sentence decided by the one state that matters most
// (what is gone, what cannot be read, what the replay can never take, what it already took, then the pane), and
// at most the warnings that do not change it — about to be lost, acknowledged, its handler still failing. The
// detail view and show print it, and nothing else gives advice, so no two sentences on a screen can disagree.
func Advice(s BlobState) []string {
	a := s.Alerts
	var out []string
	out = append(out, mainAdvice(s)...)
	if a.Expiring && s.Gone == nil && !s.Unreadable && !a.Handled && (s.Pane == rules.PaneStranded || s.Pane == rules.PaneQuarantine) {
		switch {
		case s.Pane == rules.PaneQuarantine:
			out = append(out, fmt.Sprintf("Hurry: the lifecycle rule deletes it in %s; restore it or copy it out before then.", textfmt.Duration(a.DeletesIn)))
		default:
			out = append(out, fmt.Sprintf("Hurry: the lifecycle rule deletes it in %s, and its events with it.", textfmt.Duration(a.DeletesIn)))
		}
	}
	if ack := a.Ack; ack != nil && s.Gone == nil {
		switch {
		case a.Acked:
			out = append(out, fmt.Sprintf("Acknowledged by %s until %s%s.", textfmt.Printable(ack.By), ack.Until.UTC().Format("2006-01-02 15:04Z"), ackNote(ack.Note)))
		case a.Suspicious != "":
			out = append(out, "Its acknowledgement tags are not ones deadletter writes ("+textfmt.Printable(a.Suspicious)+"): ignored.")
		}
	}
	if w := appStartAdvice(s); w != "" {
		out = append(out, w)
	}
	if s.Pane == rules.PaneStranded && drainable(s) && !s.NothingRepublished {
		if w := failingWarning(s); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// failingWarning says, of a blob the advice is to drain, that its handler fails now — by the one verdict
// (rules.HandlerNow: Event Grid's word where it has one, else the container's), naming the witness that says so.
func failingWarning(s BlobState) string {
	var r rules.Readiness
	if s.Readiness != nil {
		r = *s.Readiness
	}
	verdict, by := rules.HandlerNow(r, s.Handler)
	switch {
	case verdict != rules.NowFailing:
		return ""
	case by == "eventGrid":
		sub := s.Subscription
		if sub == "" {
			sub = r.Subscription
		}
		return fmt.Sprintf("But Event Grid says %s's handler fails now: drained now, its events will likely dead-letter again.", textfmt.Printable(sub))
	}
	return fmt.Sprintf("But %s dead-lettered %s ago: its handler still fails, so drained now its events will likely dead-letter again.",
		textfmt.Printable(r.Subscription), textfmt.Duration(s.Now.Sub(r.NewestDeadLetter)))
}

// appStartAdvice says what the estate's own drain at a worker start would do with a stranded blob: take it (the
// remediation beside deadletter's drain), or repeat what the drain refuses (a handled blob's events republished a
// second time, the replay's crash).
func appStartAdvice(s BlobState) string {
	a := s.Alerts
	if s.Gone != nil || s.Pane != rules.PaneStranded || a.Untriggerable {
		return ""
	}
	switch {
	case a.Handled:
		return "A worker start of the Function App (a restart, a scale-out) would re-upload it all the same and republish its events a second time: remove it before the app restarts."
	case a.Crash:
		return "A worker start of the Function App (a restart, a scale-out) re-uploads it too, and the replay throws again at every start: fix it before the app restarts."
	case drainable(s) && s.Missed == rules.MissedYoung:
		return fmt.Sprintf("Missed by the Function App's last start (%s, by the activity log): it was younger than the TTL then, so that start left it to its own trigger, which ran out after (no attempt left in the hour, or dropped on probation). A drain takes it now — or the next worker start.",
			textfmt.Time(s.LastStart))
	case drainable(s) && s.Missed == rules.MissedListed:
		return fmt.Sprintf("Missed by the Function App's last start (%s, by the activity log): it was a TTL old already, yet that start's drain did not take it — its listing failed (the hook never rejects), or the hook was not deployed then. A restart may miss it again: drain it.",
			textfmt.Time(s.LastStart))
	case drainable(s):
		return "Or restart the Function App (or let it scale out): every worker start re-uploads stranded blobs like this one by itself."
	}
	return ""
}

func ackNote(note string) string {
	if note == "" {
		return ""
	}
	return ": " + textfmt.Printable(note)
}

// mainAdvice is the sentence that decides and, where it is to edit the payload, what no fix can replay.
func mainAdvice(s BlobState) []string {
	main := adviceFor(s)
	if strings.Contains(main, "deadletter edit") && !strings.Contains(main, "no fix replays it") {
		if l := repairWarning(s); l != "" {
			return []string{main, l}
		}
	}
	return []string{main}
}

// repairWarning says, where the advice is to edit a payload, which of its events no fix can replay — so the
// refusal of the repair is said before the operator edits, not after.
func repairWarning(s BlobState) string {
	n := s.BeyondRepair.Total()
	switch {
	case n == 0:
		return ""
	case n == s.Events:
		return fmt.Sprintf("But no fix replays it: each of its %d event(s) is quarantined whatever the payload says (%s, by its event type), so deadletter edit refuses the repair without --force — copy it out (deadletter get) and take it to whoever owns that handler.", n, s.BeyondRepair)
	}
	return fmt.Sprintf("A fix still leaves %d of its %d event(s) quarantined (%s, by their event type): deadletter edit refuses the repair without --force, or edit those out.", n, s.Events, s.BeyondRepair)
}

// drainable reports whether the advice for s is to drain it.
func drainable(s BlobState) bool {
	a := s.Alerts
	return s.Gone == nil && !s.Unreadable && !a.Untriggerable && !a.Crash && !a.Handled && s.Pane == rules.PaneStranded
}

// adviceFor is the one sentence that decides.
func adviceFor(s BlobState) string {
	a := s.Alerts
	if g := s.Gone; g != nil {
		return goneAdvice(*g)
	}
	switch {
	case s.Pane == rules.PaneArchived:
		return "Nothing to do: this is the replay's record of what it republished; nothing acts on it again."
	case s.Unreadable:
		return "Its payload could not be read, so nothing is known of its events: copy it out with your storage tools to look."
	case s.Pane == rules.PaneQuarantine:
		return quarantineAdvice(s)
	case a.Untriggerable:
		return "Leave the drain alone: " + UntriggerableWhy + ". Copy it out under another name, or rename the subscription."
	case a.Crash:
		return "Do not drain it: the replay function crashes on it every time. Fix its payload with deadletter edit (e in the dashboard), which sends the fix back through the replay."
	case a.Handled:
		return fmt.Sprintf("Leave it: the replay already handled it (%s exists) and only its delete failed; the lifecycle rule removes it. Draining would republish its events a second time.",
			textfmt.Printable(a.HandledBy))
	case s.Pane == rules.PaneStranded && a.Malformed && s.Events > 0 && s.BeyondRepair.Total() == s.Events:
		return fmt.Sprintf("Drain it to let the replay quarantine it whole, then copy it out (deadletter get): no fix replays it — each of its %d event(s) is quarantined whatever the payload says (%s, by its event type), so deadletter edit would be refused without --force.", s.Events, s.BeyondRepair)
	case s.Pane == rules.PaneStranded && a.Malformed:
		return "Fix its payload with deadletter edit (e in the dashboard), which sends the fix back through the replay; or drain it to let the replay quarantine it whole (it can never publish it), then fix what wrote it."
	case s.Pane == rules.PaneStranded && s.Drains > 0:
		return strandedAgainAdvice(s)
	case s.Pane == rules.PaneStranded:
		return "Drain it: no trigger can still arrive, so nothing replays it otherwise."
	case a.Stalled:
		return "Leave the blob; look at the replay: it sits past the grace, so the function is not consuming (stopped, failing, or its subscription is gone). Once it passes the TTL, drain it."
	}
	return "Leave it alone: its trigger still has delivery attempts left."
}

// strandedAgainAdvice is for a blob deadletter drained that is stranded again: the drain's BlobCreated reached no
// replay within the TTL, so draining it again only helps once the replay takes its triggers.
func strandedAgainAdvice(s BlobState) string {
	when := ""
	if !s.DrainedAt.IsZero() {
		when = ", last at " + textfmt.Time(s.DrainedAt)
	}
	return fmt.Sprintf("Drain it again once the replay takes its triggers: it was drained %d time(s)%s and is stranded again — no trigger reached the replay within the TTL (%s), so the replay function or its subscription is not taking them (deadletter check says whether Event Grid drops them).",
		s.Drains, when, textfmt.Duration(s.TTL))
}

func quarantineAdvice(s BlobState) string {
	rp := s.Restore
	switch {
	case rp == nil:
		return "Restore it to resume the events the cap stopped (the restore shows what would resume first)."
	case rp.Target == "":
		return "It cannot be restored under its own name (see below): move it by hand."
	case rp.Refusal.Kind == rules.ReasonLingers:
		return "Delete its lingering original at the root first (its events are all in this copy), then restore it."
	case rp.Malformed:
		return "Restoring it would only quarantine it again (malformed, see below): fix its payload with deadletter edit (e in the dashboard), which sends the fix back through the replay."
	case rp.Refused():
		return "Restoring it would resume nothing (see below): fix the handler or the register, or copy it out (deadletter get, export)."
	}
	return fmt.Sprintf("Restore it to resume %d event(s) the cap stopped.", len(rp.Resume))
}

func goneAdvice(g replay.Whereabouts) string {
	p := textfmt.Printable(g.Name)
	when := ""
	if !g.At.IsZero() {
		when = " at " + textfmt.Time(g.At)
	}
	switch g.Kind {
	case replay.WhereArchived:
		return "Gone: the replay took it" + when + " and republished its events (" + p + " is its record). Nothing to do."
	case replay.WhereQuarantined:
		return "Gone: the replay took it" + when + " and quarantined its events in " + p + "."
	case replay.WhereRestored:
		return "Restored as " + p + " · 0 events left here. Nothing to do here."
	case replay.WhereDeleted:
		return "Gone: nothing of it is left — deleted by the lifecycle rule or by hand."
	}
	return "Still there."
}

// Fate says what became of a blob an action wrote (a drained blob, a restored copy) since, as the latest listing
// tells: still waiting at the root, stranded again, taken by the replay and where, or gone. pane is its pane when
// it is still there.
func Fate(w replay.Whereabouts, pane rules.Pane) string {
	at := textfmt.Time(w.At)
	switch w.Kind {
	case replay.WhereHere:
		if pane == rules.PaneStranded {
			return "stranded again: no trigger reached the replay within the TTL"
		}
		return "at the root, waiting for the replay"
	case replay.WhereArchived:
		return "replayed: archived at " + at + " (" + textfmt.Printable(w.Name) + "), its events republished"
	case replay.WhereQuarantined:
		return "taken by the replay and quarantined at " + at + " (" + textfmt.Printable(w.Name) + ")"
	case replay.WhereRestored:
		return "restored as " + textfmt.Printable(w.Name)
	}
	return "gone: nothing of it is left (the lifecycle rule, or by hand)"
}

// ReadinessWarnings are a drain's warnings: one per subscription of the items whose handler still failed within
// the TTL and of which the replay would republish something, in the order of ready (most recently failing first).
func ReadinessWarnings(cfg rules.Config, items []rules.Item, ready []rules.Readiness, now time.Time) []string {
	failing := map[string]*rules.RepublishTally{} // added up item by item: a drain of a backlog is not copied
	for _, r := range ready {
		if r.Failing {
			t := rules.NewRepublishTally()
			failing[r.Subscription] = &t
		}
	}
	for i := range items {
		if t := failing[items[i].Parsed.Subscription]; t != nil {
			cfg.AddRepublish(t, &items[i])
		}
	}
	var out []string
	for _, r := range ready {
		if t := failing[r.Subscription]; t != nil && t.Republishes { // (a subscription of no item republishes nothing)
			out = append(out, ReadinessWarning(r, t.CyclesLeft, cfg.TTL, now))
		}
	}
	return out
}

// ReadinessWarning says, for a drain, that a subscription's newest dead letter is within the TTL window: its
// handler was still failing when those events' retries ran out, so drained events will most likely dead-letter
// again, one attempt further on, and how many cycles remain before the cap quarantines them (cyclesLeft < 0: not
// known). It says the fact the container holds, not "failing now": that takes the second witness.
func ReadinessWarning(r rules.Readiness, cyclesLeft int, ttl time.Duration, now time.Time) string {
	s := fmt.Sprintf("%s: last dead letter %s ago, %d in the last %s — its handler was still failing when their retries ran out; drained events will most likely dead-letter again with attempt + 1",
		textfmt.Printable(r.Subscription), textfmt.Duration(now.Sub(r.NewestDeadLetter)), r.LastWindow, textfmt.Duration(ttl))
	switch {
	case cyclesLeft == 0:
		s += ", and then the cap quarantines them"
	case cyclesLeft > 0:
		s += fmt.Sprintf(", %d more before the cap", cyclesLeft)
	}
	return s + "."
}

// ContainerWitness says once what the container's readiness evidence is, and why it lags: by the TTL in force.
func ContainerWitness(ttl time.Duration) string {
	d := textfmt.Duration(ttl)
	return "the container's witness: Event Grid writes a dead letter only once an event's retries ran out — at its first retry due past the TTL (" + d + "), and five minutes after that — so it is at least " + d + " behind, both ways"
}

// LastDeadLetters says, per subscription of ready, when the container last got a dead letter of it — the fact, with
// its lag said once — for a drain's question: "last dead letter: WEBHOOKS 3m ago · ORDERS 4h57m ago (…)". Empty
// when ready is.
func LastDeadLetters(ready []rules.Readiness, now time.Time, ttl time.Duration) string {
	if len(ready) == 0 {
		return ""
	}
	parts := make([]string, 0, len(ready))
	for _, r := range ready {
		ago := "none in the container"
		if !r.NewestDeadLetter.IsZero() {
			ago = textfmt.Duration(now.Sub(r.NewestDeadLetter)) + " ago"
		}
		parts = append(parts, textfmt.Printable(r.Subscription)+" "+ago)
	}
	return "Last dead letter: " + strings.Join(parts, " · ") + " (" + ContainerWitness(ttl) + ")."
}

// LastDeadLetterCell is the HANDLER column's words for one subscription: when the container last got a dead letter
// of it ("DL 4h57m ago"), never "ok" — that the container cannot tell.
func LastDeadLetterCell(r rules.Readiness, now time.Time) string {
	if r.NewestDeadLetter.IsZero() {
		return "-"
	}
	return "DL " + textfmt.Duration(now.Sub(r.NewestDeadLetter)) + " ago"
}
