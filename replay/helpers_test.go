package replay_test

import (
	"fmt"
	"strings"

	"github.com/deadletter/deadletter/replay/rules"
)

// testRegister is the handler register the action tests judge by (rules_test keeps its own for the rules).
var testRegister = rules.Register{"Push": true, "Webhook": false}

func cfgWith(reg rules.Register) rules.Config {
	c := rules.DefaultConfig()
	c.Handlers = reg
	return c
}

// ev is one event as Event Grid dead-letters it, with extra JSON members appended.
func ev(id, typ string, extra string) string {
	return fmt.Sprintf(`{"id":%q,"subject":"/s","eventType":%q,"dataVersion":"1","data":{"k":"v"},"deadLetterReason":"MaxDeliveryAttemptsExceeded"%s}`, id, typ, extra)
}

// nested is v inside n arrays.
func nested(n int, v string) string { return strings.Repeat("[", n) + v + strings.Repeat("]", n) }
