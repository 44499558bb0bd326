package present

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

// EventGridWitness says once what the second witness is, and how late it is.
const EventGridWitness = "Event Grid's witness: its own delivery metrics, per minute, a few minutes late"

// HasWitness reports whether a witness was configured at all (a report from none says nothing).
func HasWitness(w rules.WitnessReport) bool { return w.Source != "" || w.None != "" }

// VerdictWord is the broker's verdict in a word or two, for cells and lists.
func VerdictWord(v rules.HandlerVerdict) string {
	switch v {
	case rules.HandlerFailing:
		return "failing"
	case rules.HandlerRecovering:
		return "recovering"
	case rules.HandlerHealthy:
		return "ok"
	case rules.HandlerNoDeliveries:
		return "idle"
	}
	return "?"
}

// WitnessCell is the HANDLER column's Event Grid part for one subscription: "EG failing", "EG ok", "EG idle" (no
// delivery in the window) or "EG ?" (not read, or no such subscription on the configured topics). Empty when no
// witness is configured.
func WitnessCell(w rules.WitnessReport, sub string) string {
	if !HasWitness(w) {
		return ""
	}
	h, ok := w.HandlerOf(sub)
	if !ok {
		return "EG ?"
	}
	return "EG " + VerdictWord(h.Verdict)
}

// HandlerCell is the HANDLER column: the container's witness (when it last got a dead letter) and Event Grid's
// (what its metrics say now), each named — "DL 4h57m ago · EG failing".
func HandlerCell(r rules.Readiness, w rules.WitnessReport, now time.Time) string {
	cell := LastDeadLetterCell(r, now)
	if eg := WitnessCell(w, r.Subscription); eg != "" {
		cell += " · " + eg
	}
	return cell
}

// Evidence is a verdict's evidence in words: "9 failed attempts (Busy 7, TimedOut 2), none delivered since 18:12,
// 1 dead-lettered".
func Evidence(h rules.HandlerHealth) string {
	var parts []string
	if h.Failed > 0 {
		s := fmt.Sprintf("%d failed attempt(s)", h.Failed)
		if by := failedBy(h.FailedBy); by != "" {
			s += " (" + by + ")"
		}
		parts = append(parts, s)
	}
	switch {
	case h.Verdict == rules.HandlerFailing && h.Succeeded == 0:
		parts = append(parts, "none delivered")
	case h.Verdict == rules.HandlerFailing:
		parts = append(parts, "none delivered since "+clock(h.LastFailure))
	case h.Succeeded > 0:
		parts = append(parts, fmt.Sprintf("%d delivered", h.Succeeded))
	}
	if h.DeadLettered > 0 {
		parts = append(parts, fmt.Sprintf("%d dead-lettered", h.DeadLettered))
	}
	if h.Dropped > 0 {
		parts = append(parts, fmt.Sprintf("%d dropped", h.Dropped))
	}
	if len(parts) == 0 {
		return "no delivery attempted"
	}
	return strings.Join(parts, ", ")
}

// failedBy is the failed attempts by error, most first.
func failedBy(by map[string]int64) string {
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if by[keys[i]] != by[keys[j]] {
			return by[keys[i]] > by[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		name := k
		if name == "" {
			name = "unnamed"
		}
		parts = append(parts, fmt.Sprintf("%s %d", textfmt.Printable(name), by[k]))
	}
	return strings.Join(parts, ", ")
}

// clock is a minute's time of day (UTC), the way metrics are read: "18:12".
func clock(t time.Time) string { return t.UTC().Format("15:04") }

// asOf says the window the counts cover: "in the 15m to 18:13".
func asOf(w rules.WitnessReport) string {
	return "in the " + textfmt.Duration(w.Window) + " to " + clock(w.AsOf)
}

// Problem says why a topic could not be read, naming the role for a refusal.
func Problem(p rules.WitnessProblem) string {
	topic := textfmt.Printable(topicName(p.Topic))
	switch p.Status {
	case http.StatusForbidden, http.StatusUnauthorized:
		return fmt.Sprintf("%s: refused (%d %s) — reading its metrics needs the Monitoring Reader role on the topic", topic, p.Status, textfmt.Printable(p.Err))
	case http.StatusTooManyRequests:
		return topic + ": Azure Monitor is throttling (429): tried again at the next refresh"
	}
	return topic + ": " + textfmt.Printable(p.Err)
}

// topicName is the last segment of a resource ID: the topic's name.
func topicName(id string) string {
	if i := strings.LastIndex(id, "/"); i >= 0 && i < len(id)-1 {
		return id[i+1:]
	}
	return id
}

// WitnessLines say, for a drain's question, what Event Grid's witness says of the subscriptions (folder names):
// each one's verdict, and what could not be read — unknown said, never hidden. Empty when no witness is
// configured.
func WitnessLines(w rules.WitnessReport, subs []string) []string {
	if !HasWitness(w) {
		return nil
	}
	if w.None != "" {
		return []string{textfmt.Printable(w.None) + "."}
	}
	var parts, none []string
	for _, sub := range subs {
		if h, ok := w.HandlerOf(sub); ok {
			parts = append(parts, textfmt.Printable(sub)+" "+VerdictWord(h.Verdict))
		} else {
			none = append(none, textfmt.Printable(sub))
		}
	}
	if len(none) > 0 {
		why := "not on the configured topics"
		if len(w.Problems) > 0 {
			why = "not read"
		}
		parts = append(parts, "no word on "+strings.Join(none, ", ")+" ("+why+")")
	}
	out := []string{}
	if len(parts) > 0 {
		out = append(out, "Event Grid, "+asOf(w)+": "+strings.Join(parts, " · ")+" ("+EventGridWitness+").")
	}
	for _, l := range WitnessUnknown(w) {
		out = append(out, l+".")
	}
	return out
}

// WitnessEvidence is a witness finding's evidence, a line per subscription (nil for the other kinds).
func WitnessEvidence(k rules.FindingKind, w rules.WitnessReport) []string {
	var out []string
	switch k {
	case rules.FindingHandlerFailing:
		for _, h := range w.Failing(nil) {
			out = append(out, HandlerFailing(h, w))
		}
	case rules.FindingReplayDropping:
		for _, h := range w.Dropping() {
			out = append(out, ReplayDropping(h, w))
		}
	}
	return out
}

// WitnessUnknown says what Event Grid's witness could not read (or why there is none): unknown, said, never
// hidden. Nil when it read everything or is not configured.
func WitnessUnknown(w rules.WitnessReport) []string {
	if w.None != "" {
		return []string{textfmt.Printable(w.None)}
	}
	var out []string
	for _, p := range w.Problems {
		out = append(out, "Event Grid witness unknown: "+Problem(p))
	}
	return out
}

// WitnessWarnings are a drain's warnings from Event Grid's witness: one per subscription of the items whose
// handler it says is failing now and of which the replay would republish something.
func WitnessWarnings(w rules.WitnessReport, items []rules.Item) []string {
	return witnessWarnings(w, items, rules.ItemRepublishes, "drained")
}

// RestoreWitnessWarnings are a restore's: one per subscription of the copies it writes whose handler Event Grid
// says is failing now — their resumed events go to it. restored holds only copies that resume something.
func RestoreWitnessWarnings(w rules.WitnessReport, restored []rules.Item) []string {
	return witnessWarnings(w, restored, func(*rules.Item) bool { return true }, "restored")
}

// witnessWarnings warns of each subscription whose handler Event Grid says fails now and of which some item
// resends events (resends, per item); nothing of the items is copied — a drain of a million blobs is not.
func witnessWarnings(w rules.WitnessReport, items []rules.Item, resends func(*rules.Item) bool, done string) []string {
	failing := map[string]bool{}
	sends := map[string]bool{} // a failing subscription some item of which resends events
	for i := range items {
		s := items[i].Parsed.Subscription
		if _, seen := failing[s]; !seen {
			h, ok := w.HandlerOf(s)
			failing[s] = ok && h.Verdict == rules.HandlerFailing
		}
		if failing[s] && !sends[s] && resends(&items[i]) {
			sends[s] = true
		}
	}
	subs := slices.Sorted(maps.Keys(sends))
	var out []string
	for _, sub := range subs {
		h, _ := w.HandlerOf(sub)
		h.Subscription = sub // named as the folder is
		out = append(out, HandlerFailing(h, w)+" — "+done+" events would go to a handler that is failing now.")
	}
	return out
}

// HandlerFailing is the handlerFailing finding's words for one subscription.
func HandlerFailing(h rules.HandlerHealth, w rules.WitnessReport) string {
	return fmt.Sprintf("%s: Event Grid says its handler is failing now: %s %s", textfmt.Printable(h.Subscription), Evidence(h), asOf(w))
}

// ReplayDropping is the replayDropping finding's words for one replay subscription: triggers dropped are blobs
// stranded now, before the TTL shows them.
func ReplayDropping(h rules.HandlerHealth, w rules.WitnessReport) string {
	return fmt.Sprintf("%s: Event Grid dropped %d trigger(s) of the replay %s — each a blob stranded for good, until a drain or a worker start re-uploads it", textfmt.Printable(h.Subscription), h.Dropped, asOf(w))
}
