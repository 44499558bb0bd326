package present

import (
	"fmt"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
)

// Force says how a front end lets an operator lift a refusal --force would lift: the words that end it.
type Force uint8

// The ways to force a restore.
const (
	// ForceFlag: the command line, named blobs ("--force restores it anyway").
	ForceFlag Force = iota
	// ForceByName: restore --all, which takes no --force ("name it with --force …").
	ForceByName
	// ForceKey: the dashboard's restore dialog ("f forces").
	ForceKey
)

var forceWords = [...]string{ForceFlag: "--force restores it anyway", ForceByName: "name it with --force to restore it anyway",
	ForceKey: "f forces"}

// Reason words why an action left a blob, refused it, warned about it or failed on it (untrusted parts escaped).
func Reason(r replay.Reason, force Force) string {
	p := textfmt.Printable
	s := reasonText(r, p)
	if r.Forceable && s != "" {
		s += " (" + forceWords[force] + ")"
	}
	return s
}

func reasonText(r replay.Reason, p func(string) string) string {
	switch r.Kind {
	case replay.ReasonNotRoot:
		return "only root blobs are drained or acknowledged: archived/ and quarantine/ are the replay's own records"
	case replay.ReasonListedYoung:
		return fmt.Sprintf("it was younger than the TTL %s when listed: its own trigger may still arrive", textfmt.Duration(r.TTL))
	case replay.ReasonYoung:
		return fmt.Sprintf("age %s is under the TTL %s: its own trigger may still arrive", textfmt.Duration(r.Age), textfmt.Duration(r.TTL))
	case replay.ReasonHandled:
		return fmt.Sprintf("the replay already handled it (%s exists); draining would republish its events again (to do it anyway: deadletter drain --include-handled NAME)", p(r.Name))
	case replay.ReasonUntriggerable:
		return UntriggerableWhy + "; copy it out under another name, or rename the subscription"
	case replay.ReasonRefusedEntry:
		return "not a blob deadletter will read or rewrite: " + p(r.Err)
	case replay.ReasonChangedSinceListed:
		return "changed or gone since it was listed: look again"
	case replay.ReasonChangedSincePreview:
		return "rewritten since its restore was previewed: nothing was restored; look at it again"
	case replay.ReasonCopyLeft:
		return "the quarantine copy changed or vanished after it was read; it was left as it is"
	case replay.ReasonNotQuarantine:
		return "not a quarantine blob: only quarantine/ blobs are restored"
	case replay.ReasonNoTarget:
		return p(r.Err)
	case replay.ReasonUntriggerableTarget:
		return fmt.Sprintf("its restored name %s would start with archived/ or quarantine/ in another case: the replay trigger's filter never delivers it, so nothing would resume (move it by hand under another name)", p(r.Name))
	case replay.ReasonCannotHold:
		return "cannot be restored under its own name here (move it by hand under a shorter name): " + p(r.Err)
	case replay.ReasonNameTaken:
		return fmt.Sprintf("its restored name holds a different body, and the next one, %s, %s: move this copy by hand", p(r.Name), p(r.Err))
	case replay.ReasonMalformed:
		return "the payload is malformed (" + p(r.Err) + "): the replay quarantines it again on sight"
	case replay.ReasonCrash:
		return fmt.Sprintf("the payload nests %d levels deep: the replay function would crash on it at the root and never consume it", r.Depth)
	case replay.ReasonNoEvents:
		return "the blob holds no events"
	case replay.ReasonNothingResumes:
		return fmt.Sprintf("no event would resume: all %d would be quarantined again (%s)", r.Count, r.Verdicts)
	case replay.ReasonLingers:
		return fmt.Sprintf("its original %s still lingers at the root (the replay quarantined it and could not delete it): restoring would put its events at the root twice; delete that original first — its events are all in this copy — with your storage tools (az storage blob delete --name <it>, Storage Explorer; deadletter deletes nothing it has not copied)", p(r.Name))
	case replay.ReasonNotFound:
		if r.Err != "" {
			return p(r.Err) // what the lookup found instead
		}
		return "no such blob"
	case replay.ReasonAlreadyRestored:
		return "already restored as " + p(r.Name) + ": nothing left to restore"
	case replay.ReasonCopiedNotDeleted:
		return fmt.Sprintf("copied to %s but the quarantine copy could not be deleted (restoring again finds the copy and only retries the delete): %s", p(r.Name), p(r.Err))
	case replay.ReasonStopped:
		return fmt.Sprintf("stopped after %d blobs failed in a row (last: %s)", r.Count, p(r.Err))
	case replay.ReasonFailed:
		return p(r.Err)
	case replay.ReasonAckChanged:
		return "the blob was rewritten while it was being acknowledged: the ack was removed again; look at it again"
	}
	return ""
}

// UntriggerableWhy says why a root blob's trigger never reaches the replay.
const UntriggerableWhy = "the replay trigger can never reach it: its subscription's name collides with archived/ or quarantine/ (the trigger's filter ignores case)"
