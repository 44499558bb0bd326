package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

// Register maps every eventType the estate routes to whether its handler is idempotent
// (AzureFunctionIsIdempotentMap).
type Register map[string]bool

// ParseRegister reads a handler register: a JSON object whose every value is true or false.
func ParseRegister(b []byte) (Register, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		if pe := jsonError(err, -1); pe.Offset >= 0 {
			return nil, fmt.Errorf("handler register: %s", pe.Error())
		}
		return nil, fmt.Errorf("handler register: want a JSON object mapping each eventType to true (idempotent) or false, got %s", kindOf(b))
	}
	if raw == nil {
		return nil, fmt.Errorf("handler register: want a JSON object mapping each eventType to true or false, got null")
	}
	reg := make(Register, len(raw))
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch string(bytes.TrimSpace(raw[k])) {
		case "true":
			reg[k] = true
		case "false":
			reg[k] = false
		default:
			return nil, fmt.Errorf("handler register: %q is %s, want true (idempotent) or false", k, kindOf(raw[k]))
		}
	}
	return reg, nil
}

// LoadRegister reads a handler register file.
func LoadRegister(path string) (Register, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("handler register: %w", err)
	}
	reg, err := ParseRegister(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return reg, nil
}
