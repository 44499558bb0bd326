package twin

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store/dirstore"
)

// ClockPath is the file a twin keeps its clock in: every command given the twin's directory reads its service
// time there (dirstore.Dir.UseClockFile).
func ClockPath(p *made.Place) string { return p.File(clockFile) }

// parseState reads a twin's state and checks every field a step relies on, so a damaged or hostile file is an
// error naming the field — never a panic, a loop without end or a clock out of range.
func parseState(b []byte) (State, Script, error) {
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		if path := locate(b, reflect.TypeFor[State]()); path != "" {
			return st, Script{}, fmt.Errorf("%s: %w", path, err)
		}
		return st, Script{}, err
	}
	switch {
	case st.Format > stateFormat:
		return st, Script{}, fmt.Errorf("format %d: made by a newer deadletter (this one reads %d and older): upgrade deadletter, or remove the twin (twin rm)", st.Format, stateFormat)
	case st.Format < 1:
		return st, Script{}, fmt.Errorf("format %d: want 1 to %d", st.Format, stateFormat)
	}
	// Format 1 kept neither script nor rules: its scenario's script and the defaults it ran by are taken, and the
	// next save writes format 2.
	var script Script
	if st.Script != nil {
		script = *st.Script
		if err := script.check(); err != nil {
			return st, script, fmt.Errorf("script: %w", err)
		}
	} else {
		var err error
		if script, err = ScriptOf(st.Scenario); err != nil {
			return st, script, fmt.Errorf("scenario: %w", err)
		}
	}
	if st.Rules == nil {
		r := RulesOf(rules.DefaultConfig())
		st.Rules = &r
	}
	if err := st.Rules.check(); err != nil {
		return st, script, err
	}
	if err := st.check(script); err != nil {
		return st, script, err
	}
	if st.NextPublish == nil {
		st.NextPublish = map[string]time.Time{}
	}
	if st.Batches == nil {
		st.Batches = map[string][]deadLetter{}
	}
	if st.BatchDue == nil {
		st.BatchDue = map[string]time.Time{}
	}
	// Format 2 kept every blob it knew in the state; from 3 they are in the known file beside it (read by load).
	st.known = newKnownSet()
	for _, name := range sortedKeys(st.LegacyKnown) {
		k := st.LegacyKnown[name]
		st.known.set(name, k.ETag, k.LastModified)
	}
	st.LegacyKnown = nil
	if st.Outstanding == nil {
		st.Outstanding = map[string]bool{}
	}
	if st.Violations == nil {
		st.Violations = []string{}
	}
	heap.Init(&st.Queue)
	return st, script, nil
}

// locate finds the field of a JSON document that does not decode into typ — "queue[3].due" — so an error from
// deep in a decode (a time that does not parse) names where it is; "" when no one field is to blame.
func locate(raw []byte, typ reflect.Type) string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	fails := func(raw []byte, t reflect.Type) bool { return json.Unmarshal(raw, reflect.New(t).Interface()) != nil }
	switch typ.Kind() {
	case reflect.Struct:
		if typ == reflect.TypeFor[time.Time]() {
			return ""
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return ""
		}
		return locateFields(m, typ, fails)
	case reflect.Slice:
		var items []json.RawMessage
		if typ.Elem().Kind() == reflect.Uint8 || json.Unmarshal(raw, &items) != nil {
			return ""
		}
		for i, it := range items {
			if fails(it, typ.Elem()) {
				return fmt.Sprintf("[%d]", i) + dotted(locate(it, typ.Elem()))
			}
		}
	case reflect.Map:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return ""
		}
		for _, k := range sortedKeys(m) {
			if fails(m[k], typ.Elem()) {
				return fmt.Sprintf("[%q]", k) + dotted(locate(m[k], typ.Elem()))
			}
		}
	}
	return ""
}

// locateFields is locate over a struct's fields, embedded ones included.
func locateFields(m map[string]json.RawMessage, typ reflect.Type, fails func([]byte, reflect.Type) bool) string {
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if p := locateFields(m, f.Type, fails); p != "" {
				return p
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		if raw, ok := m[name]; ok && fails(raw, f.Type) {
			return name + dotted(locate(raw, f.Type))
		}
	}
	return ""
}

// dotted joins a field's path to its parent's: ".due", "[3]".
func dotted(p string) string {
	if p == "" || p[0] == '[' {
		return p
	}
	return "." + p
}

// inRange checks a time of the state against the clock's bounds.
func inRange(field string, t time.Time) error {
	if t.Before(dirstore.MinTime) || t.After(dirstore.MaxTime) {
		return fmt.Errorf("%s %s: want a time between %d and %d", field, t.Format(time.RFC3339), dirstore.MinTime.Year(), dirstore.MaxTime.Year())
	}
	return nil
}

// check is parseState's field by field check.
func (st *State) check(script Script) error {
	if err := inRange("start", st.Start); err != nil {
		return err
	}
	if err := inRange("now", st.Now); err != nil {
		return err
	}
	if st.Now.Before(st.Start) {
		return fmt.Errorf("now %s is before start %s", st.Now.Format(time.RFC3339), st.Start.Format(time.RFC3339))
	}
	subs := map[string]bool{}
	for _, s := range script.Subs {
		subs[s.Name] = true
	}
	if st.NextPoison < 0 || st.NextPoison > len(script.Poison) {
		return fmt.Errorf("nextPoison %d: want 0 to %d", st.NextPoison, len(script.Poison))
	}
	if st.NextStart < 0 || st.NextStart > len(script.Starts) {
		return fmt.Errorf("nextStart %d: want 0 to %d", st.NextStart, len(script.Starts))
	}
	if len(st.Starts) > maxStarts {
		return fmt.Errorf("starts: %d, want at most %d", len(st.Starts), maxStarts)
	}
	for i, p := range st.Queue {
		if err := p.check(subs); err != nil {
			return fmt.Errorf("queue[%d]: %w", i, err)
		}
	}
	if err := st.checkBySubscription(script, subs); err != nil {
		return err
	}
	if err := st.checkFiles(); err != nil {
		return err
	}
	if err := st.checkMetrics(script); err != nil {
		return err
	}
	if err := st.checkProbation(subs); err != nil {
		return err
	}
	if len(st.Runs) > maxRuns {
		return fmt.Errorf("runs: %d, want at most %d", len(st.Runs), maxRuns)
	}
	return st.Totals.check()
}

// checkBySubscription checks what the state keeps per subscription: each one of the script's, each time in range.
func (st *State) checkBySubscription(script Script, subs map[string]bool) error {
	for k, t := range st.NextPublish {
		if !subs[k] {
			return fmt.Errorf("nextPublish[%q]: not a subscription of %s", k, script.Name)
		}
		if err := inRange(fmt.Sprintf("nextPublish[%q]", k), t); err != nil {
			return err
		}
	}
	for k, batch := range st.Batches {
		if !subs[k] {
			return fmt.Errorf("batches[%q]: not a subscription of %s", k, script.Name)
		}
		if _, ok := st.BatchDue[k]; !ok && len(batch) > 0 {
			return fmt.Errorf("batches[%q]: no batchDue for it", k)
		}
	}
	for k, t := range st.BatchDue {
		if !subs[k] {
			return fmt.Errorf("batchDue[%q]: not a subscription of %s", k, script.Name)
		}
		if err := inRange(fmt.Sprintf("batchDue[%q]", k), t); err != nil {
			return err
		}
	}
	return nil
}

// checkFiles checks the counts of what the state keeps beside it (known blobs, owed triggers, base events).
func (st *State) checkFiles() error {
	for k, kn := range st.LegacyKnown {
		if err := inRange(fmt.Sprintf("known[%q].lastModified", k), kn.LastModified); err != nil {
			return err
		}
	}
	if st.KnownCount < 0 || st.KnownCount > maxKnown || st.KnownSeq < 0 {
		return fmt.Errorf("knownCount %d, knownSeq %d: want 0 to %d, and ≥ 0", st.KnownCount, st.KnownSeq, maxKnown)
	}
	if st.OwedCount < 0 || st.OwedNext < 0 || st.OwedNext > st.OwedCount {
		return fmt.Errorf("owedNext %d: want 0 to owedCount %d", st.OwedNext, st.OwedCount)
	}
	if st.OwedCount > 0 {
		if err := inRange("owedDue", st.OwedDue); err != nil {
			return err
		}
	}
	if st.BaseEvents < 0 || st.BaseEvents > 8*maxKnown || len(st.BaseGone) != (st.BaseEvents+7)/8 {
		return fmt.Errorf("baseGone: %d bytes for %d events, want %d", len(st.BaseGone), st.BaseEvents, (st.BaseEvents+7)/8)
	}
	return nil
}

// check refuses a negative total.
func (t Totals) check() error {
	for name, n := range map[string]int{"published": t.Published, "delivered": t.Delivered, "deadLettered": t.DeadLettered,
		"deadLetterBlobs": t.DeadLetterBlobs, "triggers": t.Triggers, "triggersDropped": t.TriggersDropped, "replayed": t.Replayed,
		"republished": t.Republished, "quarantined": t.Quarantined, "archived": t.Archived, "crashed": t.Crashed,
		"lifecycleDeleted": t.LifecycleDeleted, "lost": t.Lost, "startReuploaded": t.StartReuploaded, "republishedTwice": t.RepublishedTwice} {
		if n < 0 {
			return fmt.Errorf("totals.%s %d: want ≥ 0", name, n)
		}
	}
	return nil
}

// check is one delivery Event Grid owes, as a step relies on it.
func (p *pending) check(subs map[string]bool) error {
	switch {
	case p == nil:
		return fmt.Errorf("null: want a delivery")
	case p.Sub == ReplayFunction:
		if p.Blob == "" {
			return fmt.Errorf("blob: a trigger of the replay names its blob")
		}
	case !subs[p.Sub]:
		return fmt.Errorf("sub %q: not a subscription of the scenario", p.Sub)
	case p.Event == nil:
		return fmt.Errorf("event: a delivery to %s carries its event", p.Sub)
	case p.Event.ID == "":
		return fmt.Errorf("event.id: empty")
	}
	if p.Attempts < 0 || p.Attempts > maxAttempts {
		return fmt.Errorf("attempts %d: want 0 to %d", p.Attempts, maxAttempts)
	}
	if err := inRange("due", p.Due); err != nil {
		return err
	}
	return inRange("first", p.First)
}
