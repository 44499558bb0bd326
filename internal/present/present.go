// Package present is how deadletter words and draws what package replay decides — the sentences of show and the
// detail view, finding and change messages, verdict letters, the columns of ls and of the dashboard's table —
// written once, so the command line and the dashboard never say the same thing two ways.
package present

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// VerdictLetter is a verdict's one-letter form in the compact column: R replay, C cap, N notIdempotent,
// U unroutable, ? unknown.
func VerdictLetter(v rules.Verdict) string {
	switch v {
	case rules.VerdictReplay:
		return "R"
	case rules.VerdictCap:
		return "C"
	case rules.VerdictNotIdempotent:
		return "N"
	case rules.VerdictUnroutable:
		return "U"
	}
	return "?"
}

// VerdictSummary is the compact verdict column of a read blob: "R5 C3", MALFORMED, CRASH, or "-" for no events.
func VerdictSummary(s *rules.Summary) string {
	switch {
	case s.Malformed:
		return "MALFORMED"
	case s.CrashDepth > 0:
		return "CRASH"
	}
	var b strings.Builder
	for _, v := range rules.AllVerdicts {
		if n := s.Verdicts.Of(v); n > 0 {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(VerdictLetter(v))
			b.WriteString(strconv.Itoa(n))
		}
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

// Unread and Unreadable are what the verdict column says before a payload is read, and when it cannot be.
const (
	Unread     = "…"
	Unreadable = "UNREADABLE"
)

// AttemptLabel is the highest replay attempt of a blob, with ∞ when an id can never be counted.
func AttemptLabel(s *rules.Summary) string {
	l := s.MaxReplayAttempt.String()
	if s.Uncountable > 0 {
		l += "∞"
	}
	return l
}

// EventAttempt is the replay attempt the estate reads from event i's id ("" when not judged), and whether the id
// is uncountable (it holds a line terminator: the estate never counts it, so the cap never stops it).
func EventAttempt(d *replay.Detail, i int) (attempt string, uncountable bool) {
	if i >= len(d.Judgements) {
		return "", false
	}
	if d.Judgements[i].Uncountable {
		return "0", true
	}
	if i < len(d.Reached) {
		return d.Reached[i].String(), false // (≥2 or ? in a quarantine copy, never 0 beside its cap)
	}
	return d.Judgements[i].Attempt.String(), false
}

// BestEffortNote follows MALFORMED in a detail: what the replay does with such a payload, and what the events
// shown under it are.
const BestEffortNote = "the replay quarantines the whole payload; the events below are a best-effort reading"

// Number is an optional number as a detail prints it: "-" when the event does not carry it.
func Number(n *int64) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatInt(*n, 10)
}

// EventVerdictLabel is what to show for one event of a detail: "cap+notIdempotent", "cap (derived)".
func EventVerdictLabel(d *replay.Detail, i int) string {
	vs, derived := d.EventVerdicts(i)
	if derived {
		return vs.String() + " (derived)"
	}
	return vs.String()
}

// DeletesIn is the time-to-deletion cell: "!35h59m" when the blob is about to be lost.
func DeletesIn(a rules.Alerts) string {
	s := textfmt.Duration(a.DeletesIn)
	if a.Expiring {
		return "!" + s
	}
	return s
}

// AckExpiringNote is what acknowledging a blob the lifecycle rule is about to delete does not do ("" when the
// blob is not expiring): the CLI's ack and the dashboard's dialog both say it.
func AckExpiringNote(name string, deletesIn time.Duration) string {
	return fmt.Sprintf("%s is deleted by the lifecycle rule in %s: an ack does not silence that (EXPIRING stays up until it is drained, restored or copied out)",
		textfmt.Printable(name), textfmt.Duration(deletesIn))
}

// FindingMessage says one finding in a sentence, with what to do about it.
func FindingMessage(f rules.Finding, cfg rules.Config, now time.Time) string {
	age := textfmt.Duration(now.Sub(f.Oldest))
	switch f.Kind {
	case rules.FindingExpiring:
		return fmt.Sprintf("%d stranded or quarantined blob(s) within %s of lifecycle deletion (first goes in %s): drain or restore them now, or copy them out", f.Count, textfmt.Duration(cfg.ExpiringWithin), textfmt.Duration(f.FirstExpiry.Sub(now)))
	case rules.FindingStranded:
		return fmt.Sprintf("%d stranded blob(s), oldest %s old: nothing replays them; run `deadletter drain`", f.Count, age)
	case rules.FindingReplayStalled:
		return fmt.Sprintf("%d live blob(s) older than %s, oldest %s: the replay function is not consuming (stopped, failing, or its subscription is gone)", f.Count, textfmt.Duration(cfg.LiveGrace), age)
	case rules.FindingCrash:
		return fmt.Sprintf("%d blob(s) nest deeper than the replay function can serialize: it throws on them every time — and at every worker start of the Function App, whose drain re-uploads them — and never consumes them; fix each payload with `deadletter edit` (e in the dashboard), which sends the fix back through the replay", f.Count)
	case rules.FindingUntriggerable:
		return fmt.Sprintf("%d blob(s) the replay trigger can never reach: their subscription's name collides with archived/ or quarantine/ (the trigger's filter ignores case); copy them out or rename the subscription", f.Count)
	case rules.FindingQuarantine:
		return fmt.Sprintf("%d quarantined blob(s), oldest %s old: inspect with `deadletter show`, resume capped events with `deadletter restore`", f.Count, age)
	case rules.FindingMalformed:
		return fmt.Sprintf("%d malformed payload(s): the replay can never publish them; inspect with `deadletter show`", f.Count)
	case rules.FindingHandlerFailing:
		return fmt.Sprintf("%d event subscription(s) whose handler Event Grid says is failing now (%d failed attempt(s), none delivered since): their events will dead-letter within the TTL; fix the handler before draining them", f.Count, f.Events)
	case rules.FindingReplayDropping:
		return fmt.Sprintf("Event Grid dropped %d trigger(s) of the replay subscription(s): each is a blob stranded for good, until a drain or a worker start re-uploads it; see why the replay function refuses its deliveries", f.Events)
	case rules.FindingAppStartRepeats:
		return fmt.Sprintf("%d blob(s) the replay handled already linger at the root, oldest %s old: deadletter's drain leaves them, but every worker start of the Function App (a restart, a scale-out) re-uploads them and republishes their events a second time; remove them before the app restarts (their archived/ or quarantine/ copy keeps them)", f.Count, age)
	}
	return fmt.Sprintf("%d %s", f.Count, f.Kind)
}

// kindNoun is a finding kind as a noun phrase for counts: "stranded blob(s)".
func kindNoun(k rules.FindingKind) string {
	switch k {
	case rules.FindingExpiring:
		return "blob(s) about to be lost to the lifecycle rule"
	case rules.FindingStranded:
		return "stranded blob(s)"
	case rules.FindingReplayStalled:
		return "live blob(s) past the grace (replay stalled)"
	case rules.FindingCrash:
		return "blob(s) the replay crashes on"
	case rules.FindingUntriggerable:
		return "blob(s) the replay trigger can never reach"
	case rules.FindingQuarantine:
		return "quarantined blob(s)"
	case rules.FindingMalformed:
		return "malformed payload(s)"
	case rules.FindingHandlerFailing:
		return "subscription(s) failing now (Event Grid)"
	case rules.FindingReplayDropping:
		return "replay subscription(s) dropping triggers (Event Grid)"
	case rules.FindingAppStartRepeats:
		return "handled blob(s) a worker start would republish"
	}
	return string(k) + " blob(s)"
}

// ChangeMessage says one watch line: "3 new stranded blob(s) (12 now): A, B, C (deadletter drain)".
func ChangeMessage(c rules.Change) string {
	if c.Kind == rules.KindError {
		if c.Event == rules.ChangeResolved {
			return "the container can be read again"
		}
		return "could not check: " + textfmt.Printable(c.Detail)
	}
	var head string
	switch {
	case c.Kind == rules.FindingReplayStalled && c.Event == rules.ChangeNew:
		head = fmt.Sprintf("replay stall begins: %d %s", c.Total, kindNoun(c.Kind))
	case c.Kind == rules.FindingReplayStalled && c.Event == rules.ChangeResolved:
		head = "replay stall ends: no live blob is older than the grace"
	case c.Event == rules.ChangeState:
		head = fmt.Sprintf("%d %s", c.Count, kindNoun(c.Kind))
	case c.Event == rules.ChangeNew:
		head = fmt.Sprintf("%d new %s (%d now)", c.Count, kindNoun(c.Kind), c.Total)
	case c.Event == rules.ChangeLost:
		head = fmt.Sprintf("%d blob(s) LOST: past their lifecycle deadline and gone, deleted before anyone drained or restored them (%d still expiring)", c.Count, c.Total)
	default:
		head = fmt.Sprintf("%d no longer %s (%d left)", c.Count, c.Kind, c.Total)
	}
	if ChangeNamesBlobs(c) {
		head += ": " + NameList(c.Names, c.More)
	}
	return head
}

// ChangeNamesBlobs reports whether a change's line names its blobs (not for a stall that ended: those blobs were
// consumed).
func ChangeNamesBlobs(c rules.Change) bool {
	return len(c.Names) > 0 && c.Kind != rules.KindError && !(c.Kind == rules.FindingReplayStalled && c.Event == rules.ChangeResolved)
}

// NameList prints blob names (made printable) and how many more there are: "A, B and 18 more".
func NameList(names []string, more int) string {
	p := make([]string, len(names))
	for i, n := range names {
		p[i] = textfmt.Printable(n)
	}
	s := strings.Join(p, ", ")
	if more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// ForecastLines says a drain forecast in words (the CLI confirmation and the dashboard dialog).
// RestoreQuestion is what a restore asks: the n blobs it will write, of all it was given, and what becomes of
// the others (their tally: refused, could not be read, not found) — the dashboard's title and the command line's
// question alike.
func RestoreQuestion(n int, others rules.Tally, noun string) string {
	var left []string
	for _, o := range []struct {
		outcome rules.Outcome
		what    string
	}{{rules.OutcomeRefused, "refused"}, {rules.OutcomeFailed, "could not be read"}, {rules.OutcomeNotFound, "not found"}, {rules.OutcomeCancelled, "cancelled"}} {
		if k := others[o.outcome]; k > 0 {
			left = append(left, fmt.Sprintf("%d %s", k, o.what))
		}
	}
	if len(left) == 0 {
		return fmt.Sprintf("Restore %d %s?", n, noun)
	}
	total := n
	for _, k := range others {
		total += k
	}
	return fmt.Sprintf("Restore %d of %d %s? (%s: left where they are)", n, total, noun, strings.Join(left, ", "))
}

// DrainQuestion is what a drain asks: the blobs it will re-upload, and the unreadable ones it tries again.
func DrainQuestion(f rules.Forecast, noun string) string {
	switch {
	case f.Unreadable == 0:
		return fmt.Sprintf("Drain %d %s?", f.Blobs, noun)
	case f.Blobs == 0:
		return fmt.Sprintf("Try again to drain %d %s that could not be read?", f.Unreadable, noun)
	}
	return fmt.Sprintf("Drain %d %s, and try again %d that could not be read?", f.Blobs, noun, f.Unreadable)
}

func ForecastLines(f rules.Forecast) []string {
	var out []string
	v := f.Verdicts
	if f.Blobs > 0 { // (nothing to re-upload: no line of zeros, only why each is left)
		out = append(out, fmt.Sprintf("%d blob(s), %d event(s), %s, each re-uploaded as it is so a fresh BlobCreated reaches the replay.", f.Blobs, f.Events, textfmt.Bytes(f.Bytes)),
			fmt.Sprintf("The replay function will then republish %d event(s) and quarantine %d (cap %d, notIdempotent %d, unroutable %d).",
				v.Of(rules.VerdictReplay), v.Refused(), v.Of(rules.VerdictCap), v.Of(rules.VerdictNotIdempotent), v.Of(rules.VerdictUnroutable)),
			fmt.Sprintf("Event Grid operations it raises: %d (%d BlobCreated, one per re-upload, and %d republished events), each billed, each delivery after them too.",
				f.Blobs+v.Of(rules.VerdictReplay), f.Blobs, v.Of(rules.VerdictReplay)))
	}
	if f.Malformed > 0 {
		out = append(out, fmt.Sprintf("%d malformed blob(s) go to quarantine whole.", f.Malformed))
	}
	if f.Crash > 0 {
		out = append(out, fmt.Sprintf("%d blob(s) nest too deep: the replay function crashes on them again and leaves them where they are.", f.Crash))
	}
	switch {
	case f.Handled > 0 && f.IncludeHandled:
		out = append(out, fmt.Sprintf("%d of them were already handled by the replay (their copy exists): drained anyway, their events are republished again.", f.Handled))
	case f.Handled > 0:
		out = append(out, fmt.Sprintf("%d blob(s) were already handled by the replay (their copy exists): they are skipped.", f.Handled))
	}
	if n := v.Of(rules.VerdictUnknown); n > 0 {
		out = append(out, fmt.Sprintf("%d event(s) need --handlers to predict.", n))
	}
	if f.Acked > 0 {
		out = append(out, fmt.Sprintf("%d of them are acknowledged: re-uploading changes them, which ends their acks.", f.Acked))
	}
	if f.Unread > 0 {
		out = append(out, fmt.Sprintf("%d blob(s) not read yet: their events are not counted.", f.Unread))
	}
	if f.Unreadable > 0 {
		out = append(out, fmt.Sprintf("%d more blob(s) could not be read (refused or failed): the drain tries them again, re-uploads any it can read now and fails on the rest.", f.Unreadable))
	}
	if f.TooLarge > 0 {
		out = append(out, fmt.Sprintf("%d more blob(s) are over the %s limit: deadletter does not read them, so the drain fails on them (re-upload them by hand).", f.TooLarge, textfmt.Bytes(store.MaxBlobBytes)))
	}
	if f.NotStranded > 0 {
		out = append(out, fmt.Sprintf("%d more blob(s) are not stranded (live, so their own trigger may still arrive, or the replay's own archived/ or quarantine/ record): the drain leaves them alone.", f.NotStranded))
	}
	return out
}

// PrettyJSON indents a payload for reading, or returns it as it is when it is not JSON. Its lines still have to
// go through textfmt.Printable before they reach a terminal.
func PrettyJSON(body []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, body, "", "  "); err != nil {
		return string(body)
	}
	return b.String()
}

// CrashReason says why the replay function crashes on a payload whose serialized value nests depth levels deep.
func CrashReason(depth int) string {
	return fmt.Sprintf("it serializes a value nested %d levels deep: JSON.stringify overflows Node's stack first (every runtime the estate may run overflows past %d; --node-stack-depth pins one), so the replay function throws and never deletes the original; the blob is never consumed, and every drain repeats the crash", depth, rules.CertainStackDepth)
}

// CrashStageNote says what the replay function still writes before it throws.
func CrashStageNote(c *rules.Crash) string {
	if c.Stage == rules.StagePublish {
		return "it throws while republishing, after writing the quarantine copy of the events it refuses: nothing is republished, archived or deleted"
	}
	return "it throws before it writes anything: nothing is republished, quarantined or archived; the original stays"
}

// MayCrashNote warns of a payload whose serialized value nests where the estate's runtime decides.
func MayCrashNote(depth int) string {
	return fmt.Sprintf("MAY CRASH: it serializes a value nested %d levels deep; Node 20 in the estate's handler throws past %d, Node 24 only past about 4,500 — whether the replay function crashes on it depends on the estate's runtime (--node-stack-depth pins it)", depth, rules.SafeStackDepth)
}

// StateLines are the facts that make a blob urgent or exempt, one short line each, with no advice in them (Advice
// says what to do): show and the detail view print them.
func StateLines(a rules.Alerts) []string {
	var out []string
	if a.Expiring {
		out = append(out, fmt.Sprintf("EXPIRING    the lifecycle rule deletes it in %s", textfmt.Duration(a.DeletesIn)))
	}
	if a.Stalled {
		out = append(out, "STALLED     a live blob past the grace: the replay function is not consuming")
	}
	if a.Untriggerable {
		out = append(out, "UNTRIGGERABLE "+UntriggerableWhy)
	}
	if a.Handled {
		out = append(out, fmt.Sprintf("HANDLED     the replay already handled it (%s exists); only its delete failed", textfmt.Printable(a.HandledBy)))
	}
	if ack := a.Ack; ack != nil {
		state := "ACKED    "
		switch {
		case a.Suspicious != "":
			state = "ACK IGNORED"
		case !a.Acked:
			state = "ACK ENDED"
		}
		line := fmt.Sprintf("%s   by %s until %s", state, textfmt.Printable(ack.By), ack.Until.UTC().Format("2006-01-02 15:04Z"))
		if ack.Note != "" {
			line += ": " + textfmt.Printable(ack.Note)
		}
		out = append(out, line)
	}
	return out
}

// outcomeWords is how an outcome reads in a dry run, which did nothing: "would drain".
func outcomeWords(o rules.Outcome, dryRun bool) string {
	if !dryRun {
		return string(o)
	}
	switch o {
	case rules.OutcomeDrained:
		return "would drain"
	case rules.OutcomeRestored:
		return "would restore"
	case rules.OutcomeRepaired:
		return "would repair"
	case rules.OutcomeAcked:
		return "would ack"
	case rules.OutcomeCleared:
		return "would clear"
	}
	return string(o)
}

// ResultLines are an action's outcomes, one blob a line, every untrusted string escaped.
func ResultLines(rs []rules.Result, dryRun bool) []string {
	return ResultLinesFor(rs, dryRun, ForceFlag)
}

// ResultLinesFor is ResultLines for a front end whose way to force a restore is force.
func ResultLinesFor(rs []rules.Result, dryRun bool, force Force) []string {
	lines := make([]string, 0, len(rs))
	for _, r := range rs {
		line := fmt.Sprintf("%-13s %s", outcomeWords(r.Outcome, dryRun), textfmt.Printable(r.Name))
		if r.Target != "" {
			line += " → " + textfmt.Printable(r.Target)
		}
		if r.Resume > 0 && r.Outcome == rules.OutcomeRestored {
			line += fmt.Sprintf(" (%d event(s) resume)", r.Resume)
		}
		if why := Reason(r.Reason, force); why != "" {
			line += ": " + why
		}
		lines = append(lines, line)
	}
	return lines
}

// TallyLine is the one-line account of a run: "12 drained, 1 gone" (or "12 would drain" in a dry run).
func TallyLine(t rules.Tally, dryRun bool) string {
	var parts []string
	for _, o := range rules.Outcomes {
		if t[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", t[o], outcomeWords(o, dryRun)))
		}
	}
	if len(parts) == 0 {
		return "nothing to do"
	}
	return strings.Join(parts, ", ")
}

// ReportFindingMessage is a finding of a report said in a sentence — the text and the JSON say the same — with,
// beside the stranded finding, the stranded blobs it counts apart.
func ReportFindingMessage(f rules.Finding, cfg rules.Config, r rules.Report) string {
	return FindingMessage(f, cfg, r.Now) + countedApart(f, r)
}

// countedApart says, beside the stranded finding, the stranded blobs it does not count — the ones the replay
// already handled and the ones it crashes on, each a finding or a count of its own — so its number and the
// pane's add up on the page.
func countedApart(f rules.Finding, r rules.Report) string {
	if f.Kind != rules.FindingStranded {
		return ""
	}
	var apart []string
	if r.Handled > 0 {
		apart = append(apart, fmt.Sprintf("%d handled", r.Handled))
	}
	for _, g := range r.Findings {
		if g.Kind == rules.FindingCrash {
			apart = append(apart, fmt.Sprintf("%d the replay throws on", g.Count))
		}
	}
	if len(apart) == 0 {
		return ""
	}
	return " (" + strings.Join(apart, " and ") + ": counted apart, not to drain)"
}
