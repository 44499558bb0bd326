package present

import (
	"slices"
	"strconv"
	"strings"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
)

// EventRow is one event of a read blob, as the event table draws it.
type EventRow struct {
	D *replay.Detail
	I int
}

func (r EventRow) ev() *rules.Event { return &r.D.Payload.Events[r.I] }

// The columns of an event table (show, and the dashboard's detail): one line per event.
var (
	EvIndex = Column[EventRow]{ID: "index", Title: "#", Min: 2, Max: 4, Priority: 90, GrowPriority: 10, Right: true,
		Cell: func(r EventRow) string { return strconv.Itoa(r.ev().Index) }}
	EvID = Column[EventRow]{ID: "id", Title: "ID", Min: 10, Max: 38, Priority: 58, GrowPriority: 20, Shorten: textfmt.ShortenMiddle,
		Cell: func(r EventRow) string { return textfmt.Printable(r.ev().ID) }}
	EvAttempt = Column[EventRow]{ID: "attempt", Title: "ATT", Min: 3, Max: 5, Priority: 80, Right: true,
		Cell: func(r EventRow) string {
			a, uncountable := EventAttempt(r.D, r.I)
			if uncountable {
				return a + "∞"
			}
			return a
		}}
	EvVerdict = Column[EventRow]{ID: "verdict", Title: "VERDICT", Min: 7, Max: 20, Priority: 95, GrowPriority: 85,
		Cell: func(r EventRow) string { return EventVerdictShort(r.D, r.I) }}
	EvType = Column[EventRow]{ID: "type", Title: "EVENT TYPE", Min: 16, Max: 30, Priority: 85, GrowPriority: 90, Shorten: textfmt.ShortenMiddle,
		Cell: func(r EventRow) string { return textfmt.Printable(r.ev().EventType) }}
	EvReason = Column[EventRow]{ID: "reason", Title: "REASON", Min: 8, Max: 12, Priority: 62, GrowPriority: 75,
		Cell: func(r EventRow) string { return ShortReason(textfmt.Printable(r.ev().DeadLetterReason)) }}
	EvOutcome = Column[EventRow]{ID: "outcome", Title: "OUTCOME/HTTP", Min: 8, Max: 18, Priority: 65, GrowPriority: 70,
		Cell: func(r EventRow) string {
			ev := r.ev()
			s := textfmt.Printable(ev.LastDeliveryOutcome)
			if ev.LastHTTPStatusCode != nil {
				s += "/" + Number(ev.LastHTTPStatusCode)
			}
			return s
		}}
	EvTries = Column[EventRow]{ID: "tries", Title: "TRIES", Min: 5, Max: 5, Priority: 30, Right: true,
		Cell: func(r EventRow) string { return Number(r.ev().DeliveryAttempts) }}
	EvLastTry = Column[EventRow]{ID: "lastTry", Title: "LAST TRY", Min: 11, Max: 20, Priority: 40, GrowPriority: 15, Shorten: shortTime,
		Cell: func(r EventRow) string { return textfmt.TimeText(r.ev().LastDeliveryAttemptTime) }}
)

// EventColumns are the event table's columns, in order.
var EventColumns = []Column[EventRow]{EvIndex, EvID, EvAttempt, EvVerdict, EvType, EvReason, EvOutcome, EvTries, EvLastTry}

// EvSubject is an event's subject: show lists it (last, first to give way); the dashboard has it in the event's
// JSON.
var EvSubject = Column[EventRow]{ID: "subject", Title: "SUBJECT", Min: 8, Max: 40, Priority: 20, GrowPriority: 5, Shorten: textfmt.ShortenMiddle,
	Cell: func(r EventRow) string { return textfmt.Printable(r.ev().Subject) }}

// EvReasonLong is EvReason in Event Grid's own words, for output nothing cuts.
var EvReasonLong = Column[EventRow]{ID: "reason", Title: "REASON", Min: 8,
	Cell: func(r EventRow) string { return textfmt.Printable(r.ev().DeadLetterReason) }}

// EventRows are a blob's events as rows.
func EventRows(d *replay.Detail) []EventRow {
	if d.Payload == nil {
		return nil
	}
	rows := make([]EventRow, len(d.Payload.Events))
	for i := range rows {
		rows[i] = EventRow{D: d, I: i}
	}
	return rows
}

// shortTime cuts a Time to what fits: 11-03 02:07:25Z, 11-03 02:07Z.
func shortTime(s string, w int) string {
	if len(s) == 20 && s[4] == '-' && s[10] == ' ' {
		if w >= 15 {
			return s[5:]
		}
		if w >= 11 {
			return s[5:16]
		}
	}
	return textfmt.Truncate(s, w, "…")
}

// EventVerdictShort is an event's verdict in the event table: cap+notIdempotent, or cap* where it is derived
// (LegendDerived says what that means).
func EventVerdictShort(d *replay.Detail, i int) string {
	vs, derived := d.EventVerdicts(i)
	if derived {
		return vs.String() + "*"
	}
	if d.Payload.Malformed() {
		return "-"
	}
	return vs.String()
}

// LegendDerived explains the * on a quarantine blob's verdicts.
const LegendDerived = "* derived: a quarantine copy's ids carry no count (the replay strips it), so its reason is worked out from the bars: an event that passes every other one was stopped by the cap"

// ShortReason is a deadLetterReason's short form (rules.ShortReason: the filter matches it as the rows show it).
func ShortReason(r string) string { return rules.ShortReason(r) }

// ReasonLegend says what the short reasons stand for, for the reasons given (all known ones when none is).
func ReasonLegend(reasons []string) string { return strings.Join(ReasonLegendParts(reasons), " · ") }

// ReasonLegendParts are ReasonLegend's entries, "Short = Long" each, for a screen that lays them out itself.
func ReasonLegendParts(reasons []string) []string {
	var parts []string
	for _, x := range rules.ShortReasons {
		if len(reasons) == 0 || slices.Contains(reasons, x.Long) {
			parts = append(parts, x.Short+" = "+x.Long)
		}
	}
	for _, r := range reasons {
		if s := ShortReason(r); s != r && !strings.Contains(strings.Join(parts, " "), s+" = ") {
			parts = append(parts, s+" = "+r)
		}
	}
	return parts
}

// RowCodes says what the codes of a table's rows stand for, with the configuration in force: the help's legend.
func RowCodes(cfg rules.Config) string {
	return "VERDICTS R2 N1: each verdict with its count of events (R replay, C cap, N notIdempotent, U unroutable, ? unknown) · " +
		"ATT the highest attempt count of its ids: ≥" + strconv.Itoa(cfg.MaxReplays) + " at least the cap (a quarantine copy, whose ids the replay wrote back without it), " +
		"? not known (the copy stripped it, another bar stopped it), 0∞ an id the estate can never count (it holds a line end) · " +
		"DELETE IN !23h5m: the lifecycle rule deletes it within " + textfmt.Duration(cfg.ExpiringWithin) + " (EXPIRING) · " +
		"AGE against the service's clock (a rehearsal's: its twin's)"
}

// EvNowColumn is where each event is now, when it has moved on from the blob shown (now gives it by index).
func EvNowColumn(now func(i int) string) Column[EventRow] {
	return Column[EventRow]{ID: "now", Title: "NOW", Min: 8, Max: 34, Priority: 60, GrowPriority: 40, Shorten: textfmt.ShortenMiddle,
		Cell: func(r EventRow) string { return now(r.I) }}
}

// EventsNow says, of a blob's events, where each that has moved on from it is now — its state and the blob of its
// last pass ("quarantined …/4fadd02e") — by the journeys traced from its events' ids; nothing for one still here.
func EventsNow(d *replay.Detail, js []rules.Journey) map[int]string {
	byID := map[string]rules.Journey{}
	for _, j := range js {
		byID[j.Original] = j
	}
	root := strings.TrimPrefix(strings.TrimPrefix(d.Name, rules.ArchivedPrefix), rules.QuarantinePrefix)
	out := map[int]string{}
	for i, jd := range d.Judgements {
		j, ok := byID[jd.Original]
		if !ok || len(j.Passes) == 0 {
			continue
		}
		last := j.Passes[len(j.Passes)-1]
		if last.Blob == root {
			if j.State == rules.StateDelivering || j.State == rules.StatePresumedDelivered {
				out[i] = j.State.String() // (republished from this dead letter, and no later one of it)
			}
			continue // (otherwise its last pass is this dead letter, and it is still here)
		}
		where := last.Where
		if where == "" {
			where = last.Blob
		}
		out[i] = j.State.String() + " " + shortBlob(where)
	}
	return out
}
