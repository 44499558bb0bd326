// Package rulestest holds what the tests of the rules and of the actions over them judge by. Only tests import
// it (and only from outside package rules: it imports rules).
package rulestest

import "github.com/deadletter/deadletter/replay/rules"

// Register is the handler register the rules' and the actions' tests judge by: Push idempotent, Webhook not.
func Register() rules.Register { return rules.Register{"Push": true, "Webhook": false} }

// ConfigWith is the default configuration with reg as its handler register.
func ConfigWith(reg rules.Register) rules.Config {
	c := rules.DefaultConfig()
	c.Handlers = reg
	return c
}
