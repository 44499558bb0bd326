package rules

import (
	"fmt"

	"github.com/deadletter/deadletter/internal/jsjson"
)

// Register maps every eventType the estate routes to whether its handler is idempotent
// (AzureFunctionIsIdempotentMap).
type Register map[string]bool

// ParseRegister reads a handler register: a JSON object whose every value is true or false. It is read the way
// the estate's JavaScript reads it (JSON.parse: the last of duplicate keys wins, a key escaping a lone surrogate
// keeps it), so a key matches exactly the eventTypes the estate's lookup matches.
func ParseRegister(b []byte) (Register, error) {
	v, err := jsjson.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("handler register: %s", err.Error())
	}
	switch v.Kind() {
	case jsjson.Object:
	case jsjson.Null:
		return nil, fmt.Errorf("handler register: want a JSON object mapping each eventType to true or false, got null")
	default:
		return nil, fmt.Errorf("handler register: want a JSON object mapping each eventType to true (idempotent) or false, got %s", kindOfValue(v))
	}
	reg := make(Register, v.Len())
	for _, m := range v.Members() {
		if m.Val.Kind() != jsjson.Bool {
			return nil, fmt.Errorf("handler register: %q is %s, want true (idempotent) or false", m.Key, kindOfValue(m.Val))
		}
		reg[m.Key] = m.Val.Bool()
	}
	return reg, nil
}
