package rules

import (
	"math"
	"strconv"
	"strings"

	"github.com/deadletter/deadletter/internal/jsjson"
)

// DefaultSeparator joins an original event id and its replay attempt (the estate's ID_SEPARATOR).
const DefaultSeparator = "|"

// Attempt is the replay count an id carries, as the estate reads it: a JavaScript number. A count of twenty
// digits is 1e20 to the estate (and so at or over any cap), not an overflow.
type Attempt float64

// AtLeast reports whether the attempt is at or over the cap.
func (a Attempt) AtLeast(cap int) bool { return float64(a) >= float64(cap) }

// Next is the attempt a republish writes: attempt + 1, in the estate's arithmetic.
func (a Attempt) Next() Attempt { return a + 1 }

// Finite reports whether the estate sees a number it can print as one (more than ~309 digits is Infinity).
func (a Attempt) Finite() bool { return !math.IsInf(float64(a), 0) }

// String prints the attempt as the estate does (ECMAScript Number::toString): 7, 100000000000000000000, 1e+21.
func (a Attempt) String() string { return jsjson.FormatNumber(float64(a)) }

// ReplayID is an event id split into the original id and the replay attempt it carries.
type ReplayID struct {
	Original string
	Attempt  Attempt
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
			n, _ := strconv.ParseFloat(digits, 64) // correctly rounded, +Inf past the double range: as Number()
			return ReplayID{Original: id[:i], Attempt: Attempt(n)}
		}
		// A separator containing digits can overlap; keep looking further left, as the greedy (.+) would.
		end = i + len(sep) - 1
	}
	return ReplayID{Original: id}
}

// EventOf is the event an id names across republishes: its original id. An id the estate cannot count (one
// holding a line terminator) grows a suffix on every republish while it stays the same event: for it, every
// trailing separator-and-digits suffix is taken off.
func EventOf(id, sep string) string {
	p := ParseID(id, sep)
	if !p.Uncountable || sep == "" {
		return p.Original
	}
	for {
		i := strings.LastIndex(id, sep)
		if i <= 0 || !allDigits(id[i+len(sep):]) {
			return id
		}
		id = id[:i]
	}
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
func FormatID(original string, attempt Attempt, sep string) string {
	return original + sep + attempt.String()
}
