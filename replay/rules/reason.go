package rules

import "time"

// ReasonKind says, as a value, why an action left a blob as it was, refused it, warned about it or failed on it.
// Package replay decides the kind and its facts; internal/present words them, once, for every front end, so no
// screen or test depends on a sentence.
type ReasonKind uint8

// The reasons.
const (
	// ReasonNone: the action was carried out as asked (or will be), nothing to say.
	ReasonNone ReasonKind = iota

	// Why a drain leaves a blob alone.

	// ReasonNotRoot: an archived/ or quarantine/ blob, the replay's own record.
	ReasonNotRoot
	// ReasonListedYoung: younger than TTL when it was listed, so the question asked before the drain did not
	// count it.
	ReasonListedYoung
	// ReasonYoung: Age under TTL at write time: its own trigger may still arrive.
	ReasonYoung
	// ReasonHandled: the replay already handled it (Name: its copy); draining would republish its events again.
	ReasonHandled
	// ReasonUntriggerable: the replay subscription's filter never delivers its BlobCreated (docs/estate.md).
	ReasonUntriggerable
	// ReasonRefusedEntry: not a blob the store will read (Err says what: a link, a FIFO).
	ReasonRefusedEntry

	// Why something changed under an action.

	// ReasonChangedSinceListed: rewritten (or gone) since it was listed.
	ReasonChangedSinceListed
	// ReasonChangedSincePreview: a quarantine copy rewritten since its restore was previewed.
	ReasonChangedSincePreview
	// ReasonCopyLeft: a restore landed, but the quarantine copy changed or vanished after it was read and was left.
	ReasonCopyLeft

	// Why a restore refuses.

	// ReasonNotQuarantine: only quarantine/ blobs are restored.
	ReasonNotQuarantine
	// ReasonNoTarget: no name to restore to (Err: why RestoreTarget refused).
	ReasonNoTarget
	// ReasonUntriggerableTarget: the restored name would be one the replay's trigger never reaches (Name).
	ReasonUntriggerableTarget
	// ReasonCannotHold: the container cannot hold the restored name (Err: its own limits).
	ReasonCannotHold
	// ReasonNameTaken: the restored name holds a different body and the next one (Name) does not fit (Err).
	ReasonNameTaken
	// ReasonMalformed: the payload is malformed (Err): the replay quarantines it again on sight.
	ReasonMalformed
	// ReasonCrash: the payload nests Depth levels: the replay would crash on it at the root.
	ReasonCrash
	// ReasonNoEvents: the blob holds no events.
	ReasonNoEvents
	// ReasonNothingResumes: every one of Count events would be quarantined again (Verdicts: by primary verdict).
	ReasonNothingResumes
	// ReasonLingers: its original (Name) still lingers at the root: restored, its events are there twice.
	ReasonLingers

	// Why a repair refuses, or what it left.

	// ReasonUnchanged: the edited payload is the original's bytes.
	ReasonUnchanged
	// ReasonStillQuarantined: Count events of the edited payload would be quarantined (Verdicts: by primary).
	ReasonStillQuarantined
	// ReasonLiveOriginal: the original is a live root blob: its own trigger may still arrive.
	ReasonLiveOriginal
	// ReasonChangedSinceOpened: the original was rewritten or removed since it was opened: nothing was written.
	ReasonChangedSinceOpened
	// ReasonOriginalLeft: the repair landed, but its original changed or vanished meanwhile and was left.
	ReasonOriginalLeft
	// ReasonWrittenNotRetired: the repair landed at Name but its original could not be deleted (Err).
	ReasonWrittenNotRetired
	// ReasonAlreadyWritten: Name already held these very bytes (an earlier repair or resubmit of them): nothing
	// was written again.
	ReasonAlreadyWritten
	// ReasonAlreadyReplayed: the same payload was resubmitted before and the replay has handled it since (Name:
	// its archived/ or quarantine/ copy): written again, its events go out a second time.
	ReasonAlreadyReplayed

	// Failures and what stopped a run.

	// ReasonNotFound: the blob does not exist.
	ReasonNotFound
	// ReasonAlreadyRestored: the quarantine copy is gone because it was restored, as Name.
	ReasonAlreadyRestored
	// ReasonCopiedNotDeleted: the copy landed at Name but the quarantine copy could not be deleted (Err).
	ReasonCopiedNotDeleted
	// ReasonStopped: the run stopped after Count blobs failed in a row (Err: the last failure) before this one.
	ReasonStopped
	// ReasonFailed: an error (Err).
	ReasonFailed
	// ReasonAckChanged: an acknowledgement written but the blob was rewritten meanwhile (a service that does not
	// enforce If-Match on tags): the ack was not kept.
	ReasonAckChanged
	// ReasonHandlerFailing: a paced or canary drain left the blob: its subscription's handler fails again (Err:
	// what said so, Name: the subscription).
	ReasonHandlerFailing
	// ReasonCanaryUnheard: a canary drain left the blob: its subscription's canary said nothing of the handler
	// (Err: what it waited for, Name: the subscription).
	ReasonCanaryUnheard
)

// Reason is a ReasonKind with the facts its words need.
type Reason struct {
	Kind ReasonKind
	// Name is the other blob concerned: the copy that shows a blob was handled, a lingering original, a name.
	Name string
	// Age and TTL: how old the blob was against the TTL.
	Age, TTL time.Duration
	// Depth is a crashing payload's nesting.
	Depth int
	// Count and Verdicts: how many events, and by which verdict.
	Count    int
	Verdicts VerdictCounts
	// Err is the underlying error's text.
	Err string
	// Forceable: restore --force would go ahead anyway.
	Forceable bool
}

// Is reports whether the reason is of kind k.
func (r Reason) Is(k ReasonKind) bool { return r.Kind == k }

// Failure is the reason an error gives.
func Failure(err error) Reason { return Reason{Kind: ReasonFailed, Err: err.Error()} }

// reasonCodes are the reasons' names in a record, stable across versions: a record keeps the code and the facts,
// and is worded when read, so rewording a reason never changes history. A new kind takes a new name; a name is
// never reused.
var reasonCodes = [...]string{ReasonNone: "", ReasonNotRoot: "notRoot", ReasonListedYoung: "listedYoung", ReasonYoung: "young",
	ReasonHandled: "handled", ReasonUntriggerable: "untriggerable", ReasonRefusedEntry: "refusedEntry",
	ReasonChangedSinceListed: "changedSinceListed", ReasonChangedSincePreview: "changedSincePreview", ReasonCopyLeft: "copyLeft",
	ReasonNotQuarantine: "notQuarantine", ReasonNoTarget: "noTarget", ReasonUntriggerableTarget: "untriggerableTarget",
	ReasonCannotHold: "cannotHold", ReasonNameTaken: "nameTaken", ReasonMalformed: "malformed", ReasonCrash: "crash",
	ReasonNoEvents: "noEvents", ReasonNothingResumes: "nothingResumes", ReasonLingers: "lingers", ReasonUnchanged: "unchanged",
	ReasonStillQuarantined: "stillQuarantined", ReasonLiveOriginal: "liveOriginal", ReasonChangedSinceOpened: "changedSinceOpened",
	ReasonOriginalLeft: "originalLeft", ReasonWrittenNotRetired: "writtenNotRetired", ReasonAlreadyWritten: "alreadyWritten",
	ReasonNotFound: "notFound", ReasonAlreadyRestored: "alreadyRestored", ReasonCopiedNotDeleted: "copiedNotDeleted",
	ReasonStopped: "stopped", ReasonFailed: "failed", ReasonAckChanged: "ackChanged", ReasonAlreadyReplayed: "alreadyReplayed",
	ReasonHandlerFailing: "handlerFailing", ReasonCanaryUnheard: "canaryUnheard"}

// Code is the kind's stable name ("" for ReasonNone).
func (k ReasonKind) Code() string {
	if int(k) < len(reasonCodes) {
		return reasonCodes[k]
	}
	return ""
}

// ReasonKindOf is the kind a code names (false for a code this build does not know: a newer build's).
func ReasonKindOf(code string) (ReasonKind, bool) {
	for k, c := range reasonCodes {
		if c == code && c != "" {
			return ReasonKind(k), true
		}
	}
	return ReasonNone, false
}
