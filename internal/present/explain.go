package present

import (
	"fmt"
	"strings"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
)

// Explain says in words what the estate will do with a blob — the same lines in show and in the dashboard.
func Explain(d *replay.Detail, c rules.Config) []string {
	var out lines
	if c.Handlers == nil {
		out.add("note: no handler register (--handlers): routing and idempotency are unknown, so predictions are partial")
	}
	switch {
	case d.ReadErr != "":
		out.add("the payload was not read: %s", textfmt.Printable(d.ReadErr))
	case d.Pane == rules.PaneArchived:
		out.add("archived: the payload the replay republished; nothing acts on it again. Read-only record.")
	case d.Preview != nil:
		explainPreview(&out, d, c)
	case d.Restore != nil:
		explainRestore(&out, d.Restore)
	}
	if d.Summary != nil && d.Summary.Uncountable > 0 { // (no summary: the payload was not read)
		out.add("WARNING: %d event id(s) hold a line terminator: the estate never counts them, so the cap never stops them; they loop until the lifecycle rule deletes them.", d.Summary.Uncountable)
	}
	return out
}

// lines collects formatted lines.
type lines []string

func (l *lines) add(f string, a ...any) { *l = append(*l, fmt.Sprintf(f, a...)) }

// explainPreview is what the replay function does with a blob at the root.
func explainPreview(out *lines, d *replay.Detail, c rules.Config) {
	pv := d.Preview
	if d.Pane == rules.PaneStranded {
		out.add("stranded: no trigger can still arrive (age %s ≥ TTL %s).", textfmt.Duration(d.Age), textfmt.Duration(c.TTL))
	} else {
		out.add("live: its BlobCreated trigger still has delivery attempts left (age %s < TTL %s).", textfmt.Duration(d.Age), textfmt.Duration(c.TTL))
	}
	if rules.Untriggerable(d.Name) {
		out.add("the replay never takes it (its trigger is filtered out); were it delivered:")
	} else {
		out.add("when the replay function handles it:")
	}
	previewLines(out, pv)
}

// explainRestore is what a restore would do with a quarantined blob.
func explainRestore(out *lines, rp *rules.RestorePlan) {
	out.add("quarantined: the replay refused these events.")
	if rp.Target != "" {
		out.add("restore would copy it to %s and delete the quarantine copy:", textfmt.Printable(rp.Target))
	} else {
		out.add("restore cannot copy it anywhere (below); were it restored:")
	}
	if rp.Stripped > 0 {
		out.add("  - %d id(s) still carry a count; the copy strips it", rp.Stripped)
	}
	if len(rp.Resume) > 0 {
		out.add("  - %d event(s) resume (the cap stopped them)", len(rp.Resume))
	}
	if len(rp.Requarantine) > 0 {
		out.add("  - %d event(s) are quarantined again on sight (%s)", len(rp.Requarantine), rules.Primaries(rp.Requarantine))
	}
	if rp.Unknown > 0 {
		out.add("  - %d event(s) depend on the handler register", rp.Unknown)
	}
	why := rp.Refusal
	why.Forceable = false // said by the line itself
	switch {
	case rp.Refused() && rp.Target == "":
		out.add("  restore refuses, even with --force: %s", Reason(why, ForceFlag))
	case rp.Refused():
		out.add("  restore refuses without --force: %s", Reason(why, ForceFlag))
	}
}

// PredictionLine is the prediction in one line, for the head of the detail view: what the replay does with a root
// blob, what a restore of a quarantine blob does.
func PredictionLine(d *replay.Detail) string {
	switch {
	case d.ReadErr != "":
		return ""
	case d.Preview != nil:
		return PreviewLine(d.Preview)
	case d.Restore != nil:
		rp := d.Restore
		why := rp.Refusal
		why.Forceable = false
		switch {
		case rp.Target == "":
			return "restore: refused — " + Reason(why, ForceFlag)
		case rp.Refused():
			return fmt.Sprintf("restore: refused without --force — %s", Reason(why, ForceFlag))
		}
		return fmt.Sprintf("restore: → %s · %d resume · %d quarantined again", textfmt.Printable(rp.Target), len(rp.Resume), len(rp.Requarantine))
	}
	return ""
}

// PreviewLine is what the replay does with a root blob, in one line.
func PreviewLine(pv *rules.Preview) string {
	switch {
	case pv.Crash != nil:
		return fmt.Sprintf("replay: CRASH — it serializes a value nested %d levels deep; nothing is republished or deleted", pv.Crash.Depth)
	case pv.Malformed:
		return "replay: quarantines the whole payload (malformed) and deletes the original"
	}
	var parts []string
	if pv.MayCrash > 0 {
		parts = append(parts, fmt.Sprintf("MAY CRASH (nests %d)", pv.MayCrash))
	}
	if n := len(pv.Republish); n > 0 {
		bytes := 0
		for _, r := range pv.PublishRequests {
			bytes += r.Bytes
		}
		parts = append(parts, fmt.Sprintf("republishes %d in %d request(s) (%s)", n, len(pv.PublishRequests), textfmt.Bytes(int64(bytes))))
	}
	if n := len(pv.Quarantine); n > 0 {
		parts = append(parts, fmt.Sprintf("quarantines %d (%s)", n, rules.Primaries(pv.Quarantine)))
	}
	if pv.Unknown > 0 {
		parts = append(parts, fmt.Sprintf("%d need --handlers", pv.Unknown))
	}
	if len(parts) == 0 {
		return "replay: nothing to republish; the original is deleted"
	}
	return "replay: " + strings.Join(parts, " · ")
}

// previewLines are the bullets of what the replay function does with a root blob.
func previewLines(out *lines, pv *rules.Preview) {
	switch {
	case pv.Crash != nil:
		out.add("  - CRASH: %s", CrashReason(pv.Crash.Depth))
		out.add("  - %s", CrashStageNote(pv.Crash))
		return
	case pv.Malformed:
		out.add("  - malformed: the raw bytes go to %s and the original is deleted", textfmt.Printable(pv.QuarantineName))
		return
	}
	if pv.MayCrash > 0 {
		out.add("  - %s; if it does not:", MayCrashNote(pv.MayCrash))
	}
	if len(pv.Quarantine) > 0 {
		out.add("  - %d event(s) quarantined to %s (%s), ids written without their count", len(pv.Quarantine), textfmt.Printable(pv.QuarantineName), rules.Primaries(pv.Quarantine))
	}
	if pv.Unknown > 0 {
		out.add("  - %d event(s) depend on the handler register", pv.Unknown)
	}
	if len(pv.Republish) > 0 {
		bytes := 0
		for _, r := range pv.PublishRequests {
			bytes += r.Bytes
		}
		out.add("  - %d event(s) republished with attempt+1 in %d sequential request(s) (%d bytes)", len(pv.Republish), len(pv.PublishRequests), bytes)
		out.add("  - then the original is archived to %s and deleted", textfmt.Printable(pv.ArchiveName))
	} else if pv.Unknown == 0 {
		out.add("  - nothing is replayable: the original is deleted")
	}
}
