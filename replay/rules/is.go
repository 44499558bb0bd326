package rules

import (
	"strings"
	"time"
)

// IsWords name the properties a blob can be asked about besides its verdicts — the dashboard's is: terms and,
// with the verdicts, ls --verdict — answered by Config.Is for both.
var IsWords = []string{"malformed", "crash", "untriggerable", "expiring", "stalled", "handled", "acked", "unread", "unreadable", "root"}

// Is answers a named question about a blob at the service time now: one of IsWords, or a verdict name (any case),
// which asks whether the blob shows that verdict — holds an event whose primary verdict it is, and is a blob the
// verdicts apply to: not an archived record (the replay is done with it), nor a payload the replay takes whole
// (malformed, or one it crashes on). known is false for any other word.
func (c Config) Is(it *Item, now time.Time, what string) (match, known bool) {
	if v, ok := ParseVerdict(what); ok {
		s := it.Summary
		return s != nil && !s.Malformed && s.CrashDepth == 0 && it.Pane != PaneArchived && s.Verdicts.Of(v) > 0, true
	}
	a := c.AlertsOf(it, now)
	switch strings.ToLower(what) {
	case "malformed":
		return a.Malformed, true
	case "crash":
		return a.Crash, true
	case "untriggerable":
		return a.Untriggerable, true
	case "expiring":
		return a.Expiring, true
	case "stalled":
		return a.Stalled, true
	case "handled":
		return a.Handled, true
	case "acked":
		return a.Acked, true
	case "unread":
		return it.Unread(), true
	case "unreadable":
		return it.ReadFailed, true
	case "root":
		return IsRoot(it.Name), true
	}
	return false, false
}

// Unread reports whether the blob's payload has not been read yet (and no read has failed).
func (it *Item) Unread() bool { return it.Summary == nil && it.ReadErr == "" }

// VerdictFilterWords are what a verdict filter takes (ls --verdict, the dashboard's verdict:): the verdicts, and
// the blob-level fates malformed, crash and handled.
const VerdictFilterWords = "replay, cap, notIdempotent, unroutable, unknown, malformed, crash or handled"

// IsVerdictFilter reports whether what is one of VerdictFilterWords (any case).
func IsVerdictFilter(what string) bool {
	if _, ok := ParseVerdict(what); ok {
		return true
	}
	switch strings.ToLower(what) {
	case "malformed", "crash", "handled":
		return true
	}
	return false
}
