package present

import (
	"fmt"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
)

// Explain says in words what the estate will do with a blob — the same lines in show and in the dashboard.
func Explain(d *replay.Detail, c replay.Config) []string {
	var out []string
	add := func(f string, a ...any) { out = append(out, fmt.Sprintf(f, a...)) }
	if c.Handlers == nil {
		add("note: no handler register (--handlers): routing and idempotency are unknown, so predictions are partial")
	}
	switch {
	case d.ReadErr != "":
		add("the payload was not read: %s", textfmt.Printable(d.ReadErr))
	case d.Pane == replay.PaneArchived:
		add("archived: the payload the replay republished; nothing acts on it again. Read-only record.")
	case d.Preview != nil:
		pv := d.Preview
		if d.Pane == replay.PaneStranded {
			add("STRANDED: no trigger can still arrive (age %s ≥ TTL %s). Nothing replays it unless it is drained.", textfmt.Duration(d.Age), textfmt.Duration(c.TTL))
		} else {
			add("live: its BlobCreated trigger still has delivery attempts left (age %s < TTL %s); leave it alone.", textfmt.Duration(d.Age), textfmt.Duration(c.TTL))
		}
		add("when the replay function handles it:")
		if pv.Crash != nil {
			add("  - CRASH: %s", CrashReason(pv.Crash.Depth))
			add("  - nothing is republished, quarantined or archived; the original stays")
			break
		}
		if pv.Malformed {
			add("  - malformed: the raw bytes go to %s and the original is deleted", textfmt.Printable(pv.QuarantineName))
			break
		}
		if len(pv.Quarantine) > 0 {
			add("  - %d event(s) quarantined to %s (%s), ids written without their count", len(pv.Quarantine), textfmt.Printable(pv.QuarantineName), replay.Primaries(pv.Quarantine))
		}
		if pv.Unknown > 0 {
			add("  - %d event(s) depend on the handler register", pv.Unknown)
		}
		if len(pv.Republish) > 0 {
			bytes := 0
			for _, r := range pv.PublishRequests {
				bytes += r.Bytes
			}
			add("  - %d event(s) republished with attempt+1 in %d sequential request(s) (%d bytes)", len(pv.Republish), len(pv.PublishRequests), bytes)
			add("  - then the original is archived to %s and deleted", textfmt.Printable(pv.ArchiveName))
		} else if pv.Unknown == 0 {
			add("  - nothing is replayable: the original is deleted")
		}
	case d.Restore != nil:
		rp := d.Restore
		add("quarantined: the replay refused these events; it needs a human.")
		if rp.Target != "" {
			add("restore would copy it to %s and delete the quarantine copy:", textfmt.Printable(rp.Target))
		}
		if rp.Stripped > 0 {
			add("  - %d id(s) still carry a count; the copy strips it", rp.Stripped)
		}
		if len(rp.Resume) > 0 {
			add("  - %d event(s) resume (the cap stopped them)", len(rp.Resume))
		}
		if len(rp.Requarantine) > 0 {
			add("  - %d event(s) are quarantined again on sight (%s)", len(rp.Requarantine), replay.Primaries(rp.Requarantine))
		}
		if rp.Unknown > 0 {
			add("  - %d event(s) depend on the handler register", rp.Unknown)
		}
		if rp.Refusal != "" {
			add("  restore refuses without --force: %s", textfmt.Printable(rp.Refusal))
		}
	}
	if d.Summary.Uncountable > 0 {
		add("WARNING: %d event id(s) hold a line terminator: the estate never counts them, so the cap never stops them; they loop until the lifecycle rule deletes them.", d.Summary.Uncountable)
	}
	return out
}
