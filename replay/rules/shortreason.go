package rules

import "strings"

// ShortReasons are the abbreviations of the deadLetterReasons Event Grid writes: stable, so an operator learns
// them. They are a rule, not a screen's choice: every row shows them, so the query matches them too (a word
// matches what a row shows).
var ShortReasons = []struct{ Long, Short string }{
	{"MaxDeliveryAttemptsExceeded", "MaxAttempts"},
	{"TimeToLiveExceeded", "TTLExpired"},
	{"UndeliverableDueToHttpBadRequest", "BadRequest"},
	{"UndeliverableDueToProbationCausedByClientError", "Probation"},
}

// ShortReason is a deadLetterReason's short form: the known ones abbreviated (ShortReasons), an
// UndeliverableDueTo… without that start, any other as it is.
func ShortReason(r string) string {
	for _, x := range ShortReasons {
		if r == x.Long {
			return x.Short
		}
	}
	if s, ok := strings.CutPrefix(r, "UndeliverableDueTo"); ok && s != "" {
		return s
	}
	return r
}
