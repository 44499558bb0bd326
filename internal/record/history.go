package record

import (
	"context"
	"strings"

	"github.com/deadletter/deadletter/internal/made"
)

// History is an estate's record as read: its actions, newest first, where they were read from, and the lines that
// could not be read (skipped, each named).
type History struct {
	Records []Record
	Local   string
	Shared  string
	Skipped []*LineError
}

// ReadFor reads the records of one estate from the sinks: those whose estate is where e is, and — for a directory —
// of the directory there now (directoryRecords).
func ReadFor(ctx context.Context, e Estate, sinks ...Sink) ([]Record, []*LineError, error) {
	all, skipped, err := Read(ctx, sinks...)
	if err != nil {
		return nil, skipped, err
	}
	mine := func(Record) bool { return true }
	if d, ok := strings.CutPrefix(e.Where, "dir:"); ok {
		mine = directoryRecords(d)
	}
	var out []Record
	for _, r := range all {
		if r.Intent.Estate.Where == e.Where && mine(r) {
			out = append(out, r)
		}
	}
	return out, skipped, nil
}

// directoryRecords says which records at a directory's path are the estate now there. A directory deadletter
// made (a twin, the demo, a seed) has the records stamped with its id (Estate.Made) — or, written before records
// were stamped, those since it was made; an earlier one's at the same path (twin rm and start again, demo --fresh)
// are another estate's. A plain directory has none stamped with an id — they are of a made directory gone from the
// path (twin rm, then mkdir) — nor an unstamped twin-script change: a plain directory has no script.
func directoryRecords(dir string) func(Record) bool {
	p, err := made.Find(dir)
	if err != nil {
		return func(r Record) bool {
			return r.Intent.Estate.Made == "" && r.Intent.Action != ActTwinScript
		}
	}
	return func(r Record) bool {
		if m := r.Intent.Estate.Made; m != "" {
			return m == p.ID
		}
		return !r.Intent.Wall.Before(p.Created)
	}
}
