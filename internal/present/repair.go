package present

import (
	"fmt"
	"strings"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

// maxCountedShown is how many ids still carrying a count the repair preview names.
const maxCountedShown = 5

// RepairLines say what a repair will do — the same lines for edit, resubmit and the dashboard: where the edited
// payload goes, what the replay will do with it beside what it would have done with the original, the ids that
// still carry a count, what is retired, and why it is refused — or, forced (edit --force), what it is written
// despite.
func RepairLines(rp *rules.RepairPlan, c rules.Config, force Force, forced bool) []string {
	var out lines
	p := textfmt.Printable
	if c.Handlers == nil {
		out.add("note: no handler register (--handlers): routing and idempotency are unknown, so predictions are partial")
	}
	switch {
	case rp.Target != "" && rp.Landed:
		out.add("the edited payload (%s, %d event(s)) already stands as a dead letter, written earlier: %s — nothing is written again", textfmt.Bytes(int64(len(rp.Body))), len(rp.Payload.Events), p(rp.Target))
	case rp.Target != "":
		out.add("the edited payload (%s, %d event(s)) goes back as a new dead letter: %s", textfmt.Bytes(int64(len(rp.Body))), len(rp.Payload.Events), p(rp.Target))
	default:
		out.add("the edited payload (%s) cannot be written anywhere (below)", textfmt.Bytes(int64(len(rp.Body))))
	}
	if rp.Before != nil {
		out.add("before the edit, at the root: %s", PreviewLine(rp.Before))
	}
	out.add("after the edit: %s", PreviewLine(&rp.After))
	if rp.Payload.Malformed() {
		out.add("  - malformed: %s", p(rp.Payload.Err.Error()))
	}
	previewLines(&out, &rp.After)
	if n := len(rp.Counted); n > 0 {
		var ids []string
		for _, e := range rp.Counted[:min(n, maxCountedShown)] {
			s := fmt.Sprintf("#%d %s (attempt %s", e.Index, p(e.ID), e.Attempt)
			if e.Capped {
				s += ", capped"
			}
			ids = append(ids, s+")")
		}
		more := ""
		if n > maxCountedShown {
			more = fmt.Sprintf(" and %d more", n-maxCountedShown)
		}
		out.add("  - %d id(s) still carry an attempt count, written as you left them: %s%s", n, strings.Join(ids, ", "), more)
	}
	if rp.Undiagnosed > 0 {
		out.add("  - %d event(s) no longer carry Event Grid's diagnostics (deadLetterReason and the rest), which the original's had: nothing will say why they dead-lettered", rp.Undiagnosed)
	}
	switch o := rp.Original; {
	case o == nil:
		out.add("nothing is retired (name the blob it replaces with --replaces)")
	case rp.Landed && o.Name == rp.Target:
		out.add("nothing is retired: %s is the blob that earlier repair wrote", p(o.Name))
	case !rp.Retire:
		out.add("%s is an archived record: it stays as it is", p(o.Name))
	default:
		out.add("then %s is deleted, only if it is still the blob you opened (If-Match its ETag)", p(o.Name))
	}
	if rp.Refused() {
		out.add("%s", refusalLine(rp, force, forced))
	}
	return out
}

// refusalLine says why a repair is refused — every reason --force lifts — or, forced, what it is written despite.
func refusalLine(rp *rules.RepairPlan, force Force, forced bool) string {
	whys := refusals(rp, force)
	why := strings.Join(whys, "; and ")
	switch {
	case rp.Target == "" || !rp.Refusal.Forceable:
		return "refused, even with --force: " + whys[0]
	case forced:
		return "written anyway (--force), though: " + why
	}
	return fmt.Sprintf("refused: %s (%s)", why, forceWords[force])
}

// refusals words every reason the plan refuses for, without the --force hint.
func refusals(rp *rules.RepairPlan, force Force) []string {
	var whys []string
	for _, r := range append([]rules.Reason{rp.Refusal}, rp.Also...) {
		r.Forceable = false
		whys = append(whys, Reason(r, force))
	}
	return whys
}

// RepairRefused is a refused repair's result in words: every reason, and how --force lifts them when it does.
func RepairRefused(rp *rules.RepairPlan, force Force) string {
	s := strings.Join(refusals(rp, force), "; and ")
	if rp.Refusal.Forceable && rp.Target != "" {
		s += " (" + forceWords[force] + ")"
	}
	return s
}

// RepairQuestion asks to write a repair on estate.
func RepairQuestion(rp *rules.RepairPlan, estate string) string {
	if rp.Original != nil && rp.Retire {
		return fmt.Sprintf("Write it to %s and delete %s?", textfmt.Printable(estate), textfmt.Printable(rp.Original.Name))
	}
	return fmt.Sprintf("Write it to %s?", textfmt.Printable(estate))
}
