package present

import (
	"fmt"
	"slices"
	"strings"

	"github.com/deadletter/deadletter/internal/textfmt"

	"github.com/deadletter/deadletter/replay/rules"
)

// AppStartLine says the estate's own remediation — beside a drain, and in check's and report's summary: what a
// worker start of the Function App would re-upload by itself now ("" when it would take nothing). What of it would
// repeat work is the drain's warning's (AppStartWarning) and check's findings' to say.
func AppStartLine(a rules.AppStartCounts) string {
	if a.Takes() == 0 {
		return ""
	}
	return fmt.Sprintf("Or restart the Function App (or let it scale out): each worker start re-uploads what is older than the TTL by itself — %s now.",
		appStartParts(a))
}

// AppStartWarning says what that start would do that deadletter's drain refuses to ("" when nothing).
func AppStartWarning(a rules.AppStart) string {
	if !a.Repeats() {
		return ""
	}
	var parts []string
	if n := len(a.Handled); n > 0 {
		parts = append(parts, fmt.Sprintf("republish %d event(s) of %d handled blob(s) (%s) a second time", a.HandledEvents, n, subscriptionsOf(a.Handled)))
	}
	if n := len(a.Crash); n > 0 {
		parts = append(parts, fmt.Sprintf("make the replay throw on %d crash blob(s) (%s) again", n, subscriptionsOf(a.Crash)))
	}
	return "A start would also " + strings.Join(parts, " and ") + ", at every start: fix or remove them first."
}

func appStartParts(a rules.AppStartCounts) string {
	parts := []string{fmt.Sprintf("%d stranded blob(s)", a.Stranded)}
	if a.Handled > 0 {
		parts = append(parts, fmt.Sprintf("%d handled", a.Handled))
	}
	if a.Crash > 0 {
		parts = append(parts, fmt.Sprintf("%d crash", a.Crash))
	}
	if a.Untriggerable > 0 {
		parts = append(parts, fmt.Sprintf("%d untriggerable", a.Untriggerable))
	}
	return strings.Join(parts, ", ")
}

// subscriptionsOf names the subscriptions of blobs, each once, in the order first met.
func subscriptionsOf(names []string) string {
	var subs []string
	for _, n := range names {
		if sub := textfmt.Printable(rules.ParseBlobName(n).Subscription); !slices.Contains(subs, sub) {
			subs = append(subs, sub)
		}
	}
	return strings.Join(subs, ", ")
}
