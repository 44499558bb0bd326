package present

import (
	"fmt"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

// Force says how a front end lets an operator lift a refusal --force would lift: the words that end it.
type Force uint8

// The ways to force a restore.
const (
	// ForceFlag: the command line, named blobs ("--force does it anyway").
	ForceFlag Force = iota
	// ForceByName: restore --all and a drain of every stranded blob, which --force does not reach ("name it with
	// --force …").
	ForceByName
	// ForceKey: the dashboard's restore dialog ("f forces").
	ForceKey
	// ForceRepair: edit and resubmit ("--force writes it anyway").
	ForceRepair
	// ForceRepairKey: the dashboard's repair question ("f writes it anyway").
	ForceRepairKey
)

var forceWords = [...]string{ForceFlag: "--force does it anyway", ForceByName: "name it with --force to do it anyway",
	ForceKey: "f forces", ForceRepair: "--force writes it anyway", ForceRepairKey: "f writes it anyway"}

// Reason words why an action left a blob, refused it, warned about it or failed on it (untrusted parts escaped).
func Reason(r rules.Reason, force Force) string {
	p := textfmt.Printable
	s := reasonText(r, p)
	if r.Forceable && s != "" {
		s += " (" + forceWords[force] + ")"
	}
	return s
}

// reasonWords are the words for each kind of reason (untrusted parts through p).
var reasonWords = map[rules.ReasonKind]func(r rules.Reason, p func(string) string) string{
	rules.ReasonAlreadyReplayed: func(r rules.Reason, p func(string) string) string {
		return fmt.Sprintf("the same payload was resubmitted before and the replay has handled it since (%s): written again, its events go out a second time", p(r.Name))
	},
	rules.ReasonNotRoot: func(r rules.Reason, p func(string) string) string {
		return "only root blobs are drained, and only root and quarantine/ blobs acknowledged: archived/ is the replay's own record, and quarantine/ is restored, not drained"
	},
	rules.ReasonListedYoung: func(r rules.Reason, p func(string) string) string {
		return fmt.Sprintf("it was younger than the TTL %s when listed: its own trigger may still arrive", textfmt.Duration(r.TTL))
	},
	rules.ReasonYoung: func(r rules.Reason, p func(string) string) string {
		return fmt.Sprintf("age %s is under the TTL %s: its own trigger may still arrive", textfmt.Duration(r.Age), textfmt.Duration(r.TTL))
	},
	rules.ReasonHandled: func(r rules.Reason, p func(string) string) string {
		return fmt.Sprintf("the replay already handled it (%s exists); draining would republish its events again (to do it anyway: deadletter drain --include-handled NAME)", p(r.Name))
	},
	rules.ReasonUntriggerable: func(r rules.Reason, p func(string) string) string {
		return UntriggerableWhy + "; copy it out under another name, or rename the subscription"
	},
	rules.ReasonRefusedEntry: func(r rules.Reason, p func(string) string) string {
		return "not a blob deadletter will read or rewrite: " + p(r.Err)
	},
	rules.ReasonChangedSinceListed: func(r rules.Reason, p func(string) string) string {
		return "changed or gone since it was listed: look again"
	},
	rules.ReasonChangedSincePreview: func(r rules.Reason, p func(string) string) string {
		return "rewritten since its restore was previewed: nothing was restored; look at it again"
	},
	rules.ReasonCopyLeft: func(r rules.Reason, p func(string) string) string {
		return "the quarantine copy changed or vanished after it was read; it was left as it is"
	},
	rules.ReasonNotQuarantine: func(r rules.Reason, p func(string) string) string {
		return "not a quarantine blob: only quarantine/ blobs are restored"
	},
	rules.ReasonNoTarget: func(r rules.Reason, p func(string) string) string { return p(r.Err) },
	rules.ReasonUntriggerableTarget: func(r rules.Reason, p func(string) string) string {
		return fmt.Sprintf("its restored name %s would start with archived/ or quarantine/ in another case: the replay trigger's filter never delivers it, so nothing would resume (move it by hand under another name)", p(r.Name))
	},
	rules.ReasonCannotHold: func(r rules.Reason, p func(string) string) string {
		return "cannot be restored under its own name here (move it by hand under a shorter name): " + p(r.Err)
	},
	rules.ReasonNameTaken: func(r rules.Reason, p func(string) string) string {
		return fmt.Sprintf("its restored name holds a different body, and the next one, %s, %s: move this copy by hand", p(r.Name), p(r.Err))
	},
	rules.ReasonMalformed: func(r rules.Reason, p func(string) string) string {
		return "the payload is malformed (" + p(r.Err) + "): the replay quarantines it again on sight"
	},
	rules.ReasonCrash: func(r rules.Reason, p func(string) string) string {
		return fmt.Sprintf("the payload nests %d levels deep: the replay function would crash on it at the root and never consume it", r.Depth)
	},
	rules.ReasonNoEvents: func(r rules.Reason, p func(string) string) string { return "the blob holds no events" },
	rules.ReasonNothingResumes: func(r rules.Reason, p func(string) string) string {
		return fmt.Sprintf("no event would resume: all %d would be quarantined again (%s)", r.Count, r.Verdicts)
	},
	rules.ReasonLingers: func(r rules.Reason, p func(string) string) string {
		return fmt.Sprintf("its original %s still lingers at the root (the replay quarantined it and could not delete it): restoring would put its events at the root twice; delete that original first — its events are all in this copy — with your storage tools (az storage blob delete --name <it>, Storage Explorer; deadletter deletes nothing it has not copied)", p(r.Name))
	},
	rules.ReasonUnchanged: func(r rules.Reason, p func(string) string) string {
		return "the edit changes nothing: the payload is the original's, byte for byte"
	},
	rules.ReasonStillQuarantined: func(r rules.Reason, p func(string) string) string {
		return fmt.Sprintf("%d event(s) would still be quarantined (%s)", r.Count, r.Verdicts)
	},
	rules.ReasonLiveOriginal: func(r rules.Reason, p func(string) string) string {
		return "the original is a live root blob: its own trigger may still arrive and replay it, and its events would go twice"
	},
	rules.ReasonChangedSinceOpened: func(r rules.Reason, p func(string) string) string {
		return "the original was rewritten or removed since it was opened: nothing was written; look at it again"
	},
	rules.ReasonOriginalLeft: func(r rules.Reason, p func(string) string) string {
		return "the original changed or vanished after it was opened; it was left as it is"
	},
	rules.ReasonAlreadyWritten: func(r rules.Reason, p func(string) string) string {
		return "this very payload stands there already (an earlier repair or resubmit of it wrote it): nothing is written again"
	},
	rules.ReasonWrittenNotRetired: func(r rules.Reason, p func(string) string) string {
		return fmt.Sprintf("written as %s but the original could not be deleted (repairing again finds the new blob and only retries the delete): %s", p(r.Name), p(r.Err))
	},
	rules.ReasonNotFound: func(r rules.Reason, p func(string) string) string {
		if r.Err != "" {
			return p(r.Err) // what the lookup found instead
		}
		return "no such blob"
	},
	rules.ReasonAlreadyRestored: func(r rules.Reason, p func(string) string) string {
		return "already restored as " + p(r.Name) + ": nothing left to restore"
	},
	rules.ReasonCopiedNotDeleted: func(r rules.Reason, p func(string) string) string {
		return fmt.Sprintf("copied to %s but the quarantine copy could not be deleted (restoring again finds the copy and only retries the delete): %s", p(r.Name), p(r.Err))
	},
	rules.ReasonStopped: func(r rules.Reason, p func(string) string) string {
		return fmt.Sprintf("stopped after %d blobs failed in a row (last: %s)", r.Count, p(r.Err))
	},
	rules.ReasonFailed: func(r rules.Reason, p func(string) string) string { return p(r.Err) },
	rules.ReasonHandlerFailing: func(r rules.Reason, p func(string) string) string {
		return fmt.Sprintf("left stranded: %s's handler fails again (%s); the same command takes it once the handler recovers", p(r.Name), p(r.Err))
	},
	rules.ReasonCanaryUnheard: func(r rules.Reason, p func(string) string) string {
		return fmt.Sprintf("left stranded: %s's canary told nothing of its handler (%s); the same command takes it once its canary is heard", p(r.Name), p(r.Err))
	},
	rules.ReasonAckChanged: func(r rules.Reason, p func(string) string) string {
		return "the blob was rewritten while it was being acknowledged: the ack was removed again; look at it again"
	},
}

func reasonText(r rules.Reason, p func(string) string) string {
	if f, ok := reasonWords[r.Kind]; ok {
		return f(r, p)
	}
	return ""
}

// UntriggerableWhy says why a root blob's trigger never reaches the replay.
const UntriggerableWhy = "the replay trigger can never reach it: its subscription's name collides with archived/ or quarantine/ (the trigger's filter ignores case)"
