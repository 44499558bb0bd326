package replay_test

import (
	"fmt"
	"strings"
)

// ev is one event as Event Grid dead-letters it, with extra JSON members appended.
func ev(id, typ string, extra string) string {
	return fmt.Sprintf(`{"id":%q,"subject":"/s","eventType":%q,"dataVersion":"1","data":{"k":"v"},"deadLetterReason":"MaxDeliveryAttemptsExceeded"%s}`, id, typ, extra)
}

// nested is v inside n arrays.
func nested(n int, v string) string { return strings.Repeat("[", n) + v + strings.Repeat("]", n) }
