package tui

import (
	"errors"

	"github.com/deadletter/deadletter/replay"
)

// CheckFilter reports why a filter query does not parse, or holds no words (nil when it is one to apply).
func CheckFilter(q string) error {
	terms, err := parseQuery(q)
	if err == nil && len(terms) == 0 {
		err = errors.New("the query holds no words")
	}
	return err
}

// Filter is the dashboard's filter for a command (export --filter): which items of snap the same query shows on
// the screen, judged as the tables judge them (hydrate snap first: reason:, outcome: and the badges read the
// payloads). A query that does not parse, or holds no words, is an error — never everything.
func Filter(q string, snap *replay.Snapshot, cfg replay.Config) (func(i int) bool, error) {
	if err := CheckFilter(q); err != nil {
		return nil, err
	}
	f := &filterState{text: q}
	return f.match(snap, cfg), nil
}
