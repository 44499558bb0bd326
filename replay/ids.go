// Package replay holds the estate's dead-letter rules, each in exactly one function: which pane a blob is in,
// what a payload is, how a replay id counts attempts, how each event is judged, what the replay function will do
// with a blob, and the two remediations (drain and restore). The command line and the dashboard both call it.
// It never imports azblob or the UI; it talks to storage through store.Container.
package replay

import (
	"math"
	"strconv"
	"strings"
)

// DefaultSeparator joins an original event id and its replay attempt (the estate's ID_SEPARATOR).
const DefaultSeparator = "|"

// ReplayID is an event id split into the original id and the replay attempt it carries.
type ReplayID struct {
	Original string
	// Attempt is the count after the separator; math.MaxInt when the number is too large for an int (which
	// is at or over any cap).
	Attempt int
	// Uncountable is set when the id holds a line terminator: the estate's regular expression never matches
	// such an id, so it stays at attempt 0 on every cycle, grows another suffix on every republish and is never
	// stopped by the cap.
	Uncountable bool
}

// HasLineTerminator reports whether s holds a character JavaScript's "." does not match.
func HasLineTerminator(s string) bool {
	return strings.ContainsAny(s, "\n\r\u2028\u2029")
}

// ParseID splits id the way the estate's parseReplayId does — /^(.+)SEP(\d+)$/ in JavaScript: at the last
// separator followed only by one or more ASCII digits, when the part before it is not empty. Anything else is
// an original id at attempt 0.
func ParseID(id, sep string) ReplayID {
	if HasLineTerminator(id) {
		return ReplayID{Original: id, Uncountable: true}
	}
	if sep == "" {
		return ReplayID{Original: id}
	}
	for end := len(id); end > 0; {
		i := strings.LastIndex(id[:end], sep)
		if i < 0 {
			break
		}
		digits := id[i+len(sep):]
		if i > 0 && allDigits(digits) {
			n, err := strconv.Atoi(digits)
			if err != nil { // out of range: too large to be under any cap
				n = math.MaxInt
			}
			return ReplayID{Original: id[:i], Attempt: n}
		}
		// A separator containing digits can overlap; keep looking further left, as the greedy (.+) would.
		end = i + len(sep) - 1
	}
	return ReplayID{Original: id}
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatID writes the id a republished event carries: the original id, the separator and the attempt.
// Pass a parsed original (ParseID(id).Original) so a suffix is rewritten, never stacked.
func FormatID(original string, attempt int, sep string) string {
	return original + sep + strconv.Itoa(attempt)
}
