package present

import (
	"fmt"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

// JourneyHeadline is where an event stands, in a line: its original id, its state, since when, and what that
// means for the operator (the words trace, the dashboard's event view and log share).
func JourneyHeadline(j rules.Journey, cfg rules.Config, now time.Time) string {
	id := textfmt.Printable(j.Original)
	s := id + " — " + j.State.String()
	if !j.Since.IsZero() {
		s += " since " + textfmt.Time(j.Since)
	}
	return s + ": " + JourneyMeaning(j, cfg, now)
}

// JourneyMeaning says what an event's state means, with its clock.
func JourneyMeaning(j rules.Journey, cfg rules.Config, now time.Time) string {
	switch j.State {
	case rules.StateDeadLettered:
		return "in a live dead letter; its trigger may still reach the replay"
	case rules.StateDiscarded:
		if last := j.Passes[len(j.Passes)-1]; last.Fate == rules.FateCrashed {
			return "in a blob the replay throws on: nothing reaches it until it is repaired (deadletter edit)"
		}
		return "stranded: no trigger can reach its blob; a drain, or the Function App's next start, re-uploads it"
	case rules.StateDelivering:
		return fmt.Sprintf("republished; a failure would dead-letter it again by %s (the TTL %s and Event Grid's %s), in %s",
			textfmt.Time(j.Until), textfmt.Duration(cfg.TTL), textfmt.Duration(rules.DeadLetterDelay), textfmt.Duration(j.Until.Sub(now)))
	case rules.StatePresumedDelivered:
		return fmt.Sprintf("republished, and no later dead letter of it since %s — presumed: the container cannot prove a delivery, only the absence of a failure",
			textfmt.Time(j.Until))
	case rules.StateQuarantined:
		if j.Resumes {
			return "stopped by the cap; the copy resets its count, so a restore gives it another pass at 0"
		}
		if j.Verdicts == 0 {
			return "its payload is malformed: a restore would be quarantined again (deadletter edit repairs it)"
		}
		if j.Verdicts.Has(rules.VerdictUnknown) {
			return "refused, why unknown without the handler register (--handlers): whether a restore resumes it cannot be said"
		}
		return "refused (" + j.Verdicts.String() + "): a restore would be quarantined again on sight"
	}
	return "no blob holds it any more (the lifecycle rule, or by hand): only the record remembers it"
}

// PassLine is one pass of a journey, in a line: when Event Grid gave up on the event, where, at what attempt, and
// what became of it.
func PassLine(n int, p rules.Pass, sep string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d. ", n)
	switch p.Via {
	case rules.FateRestored:
		b.WriteString("restored copy ")
	case rules.FateRepaired:
		b.WriteString("repaired copy ")
	default:
		b.WriteString("dead-lettered " + shortWhen(p.DeadLettered) + " in ")
	}
	b.WriteString(textfmt.Printable(p.Blob))
	fmt.Fprintf(&b, " · attempt %s", AttemptText(p.Reached))
	if p.Copies > 1 {
		fmt.Fprintf(&b, " · %d copies", p.Copies)
	}
	if p.Reason != "" && p.Via == 0 {
		b.WriteString(" · " + ShortReason(textfmt.Printable(p.Reason)))
		if p.Outcome != "" {
			b.WriteString(" " + textfmt.Printable(p.Outcome))
		}
		if p.Status != nil {
			b.WriteString("/" + Number(p.Status))
		}
	}
	for _, t := range p.Touches {
		fmt.Fprintf(&b, " → %s %s by %s (%s)", t.Action, shortWhen(t.At), textfmt.Printable(t.By), textfmt.Printable(t.Outcome))
	}
	if p.Drains > 0 && !touchedBy(p, "drain") {
		b.WriteString(" → drained")
		if p.DrainedAt != "" {
			b.WriteString(" " + textfmt.TimeText(p.DrainedAt))
		}
	}
	b.WriteString(" → " + PassFateText(p, sep))
	return b.String()
}

func touchedBy(p rules.Pass, action string) bool {
	for _, t := range p.Touches {
		if t.Action == action {
			return true
		}
	}
	return false
}

// PassFateText is what became of a pass, with when and where.
func PassFateText(p rules.Pass, sep string) string {
	where := textfmt.Printable(p.Where)
	switch p.Fate {
	case rules.FateWaiting:
		return "waiting for its trigger"
	case rules.FateStranded:
		return "stranded since " + shortWhen(p.At) + " (no trigger can reach it)"
	case rules.FateCrashed:
		return "the replay throws on its blob"
	case rules.FateRepublished:
		next := "again"
		if !p.Reached.Unknown && !p.Reached.AtLeast {
			next = "as " + sep + p.Reached.Attempt.Next().String()
		}
		return "republished " + next + " " + shortWhen(p.At) + " (" + where + ")"
	case rules.FateQuarantined:
		why := p.Verdicts.String()
		if p.Malformed {
			why = "malformed"
		}
		return "quarantined (" + why + ") " + shortWhen(p.At) + " (" + where + ")"
	case rules.FateRestored:
		return "quarantined" + verdictsOf(p) + ", restored as " + where
	case rules.FateRepaired:
		if p.WasQuarantined {
			return "quarantined" + verdictsOf(p) + ", repaired as " + where
		}
		return "repaired as " + where
	}
	return "gone"
}

// AttemptText is an attempt as a person reads it: 2, "≥2, reset in this copy", "?" (the copy stripped it).
func AttemptText(r rules.Reached) string {
	switch {
	case r.Unknown && r.Reset:
		return "? (the copy stripped its count)"
	case r.AtLeast && r.Reset:
		return r.String() + ", reset in this copy: a restore resumes at 0"
	}
	return r.String()
}

// shortWhen is a time as a pass line says it.
func shortWhen(t time.Time) string {
	if t.IsZero() {
		return "(when unknown)"
	}
	return t.UTC().Format("01-02 15:04Z")
}

// JourneySince is what became of an event from the pass a blob of an action held it in: "republished as |1
// 12-07 11:43Z → dead-lettered again 12-07 12:30Z in …/dd2d8eb5 (InternalServerError/500) → republished as |2 …
// → now presumed delivered". blob is the action's blob (or its copy); from the first pass when none holds it.
func JourneySince(j rules.Journey, blob, sep string) string {
	root := strings.TrimPrefix(strings.TrimPrefix(blob, rules.ArchivedPrefix), rules.QuarantinePrefix)
	from := 0
	for k, p := range j.Passes {
		if p.Blob == root || p.Where == blob {
			from = k
			break
		}
	}
	var parts []string
	for k := from; k < len(j.Passes); k++ {
		p := j.Passes[k]
		if k > from {
			switch p.Via {
			case rules.FateRestored:
				parts = append(parts, "in the restored copy "+shortBlob(p.Blob))
			case rules.FateRepaired:
				parts = append(parts, "in the repaired copy "+shortBlob(p.Blob))
			default:
				again := "dead-lettered again " + shortWhen(p.DeadLettered) + " in " + shortBlob(p.Blob)
				if p.Outcome != "" {
					again += " (" + textfmt.Printable(p.Outcome)
					if p.Status != nil {
						again += "/" + Number(p.Status)
					}
					again += ")"
				}
				parts = append(parts, again)
			}
		}
		parts = append(parts, passFateShort(p, sep))
	}
	parts = append(parts, "now "+j.State.String())
	return strings.Join(parts, " → ")
}

// passFateShort is PassFateText without the copy's whole name.
func passFateShort(p rules.Pass, sep string) string {
	switch p.Fate {
	case rules.FateRepublished:
		next := "republished"
		if !p.Reached.Unknown && !p.Reached.AtLeast {
			next += " as " + sep + p.Reached.Attempt.Next().String()
		}
		return next + " " + shortWhen(p.At)
	case rules.FateQuarantined:
		why := p.Verdicts.String()
		if p.Malformed {
			why = "malformed"
		}
		return "quarantined (" + why + ") " + shortWhen(p.At)
	case rules.FateRestored:
		return "quarantined" + verdictsOf(p) + " → restored " + shortWhen(p.At)
	case rules.FateRepaired:
		if p.WasQuarantined {
			return "quarantined" + verdictsOf(p) + " → repaired by edit " + shortWhen(p.At)
		}
		return "repaired by edit " + shortWhen(p.At)
	case rules.FateCrashed:
		return "crash (the replay throws on it)"
	}
	return PassFateText(p, sep)
}

// shortBlob is a blob's name as a journey line cuts it: …/ and the first 8 characters of its file.
func shortBlob(name string) string {
	f := rules.FileOf(name)
	if len(f) > 8 {
		f = f[:8]
	}
	return "…/" + textfmt.Printable(f)
}

// verdictsOf is why a pass was quarantined, in brackets, when its copy still said so.
func verdictsOf(p rules.Pass) string {
	switch {
	case p.Malformed:
		return " (malformed)"
	case p.Verdicts != 0:
		return " (" + p.Verdicts.String() + ")"
	}
	return ""
}

// CanaryVerdict names what a canary told of its subscription's handler, and what follows for the rest of it.
func CanaryVerdict(w rules.CanaryWord) string {
	switch w {
	case rules.CanaryDelivered:
		return "delivered: the rest of it goes"
	case rules.CanaryFailing:
		return "FAILING: the rest of it stays stranded"
	case rules.CanaryNotTried:
		return "not tried: the rest of it goes"
	}
	return "no word: the rest of it stays stranded"
}
