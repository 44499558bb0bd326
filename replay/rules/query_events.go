package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Terms on what is inside the events (SPEC §6, filters on events): type:, subject:, id:, data: and data.PATH:.
// A blob matches when one of its events matches every such term that is not negated, and none of its events
// matches a negated one (-type:X: the blob holds no event of type X). Values are compared as Event Grid's
// advanced filters compare strings — never case-sensitively; a missing key matches nothing.

// filterFields are the fields a query knows, for the message that names them.
var filterFields = []string{"sub", "reason", "outcome", "hour", "verdict", "is", "type", "subject", "id", "data", "data.PATH"}

// EventMatches is which blobs' events match a query's event terms, by blob name (Loader.MatchEvents); a blob not in
// it has not been judged.
type EventMatches map[string]bool

// onEvents says the term is answered by a blob's events, not by its listing or summary.
func (t term) onEvents() bool {
	switch t.field {
	case "type", "subject", "id", "data":
		return true
	}
	return false
}

// HasEventTerms reports whether the query asks what is inside the events: its blobs' events must be read and
// judged (MatchesEvents) before it matches any of them.
func (q Query) HasEventTerms() bool {
	for _, t := range q.terms {
		if t.onEvents() {
			return true
		}
	}
	return false
}

// WithEvents is the query with the judgement of its event terms: the blobs m says match pass them; the rest
// (false, or not in m) do not.
func (q Query) WithEvents(m EventMatches) Query {
	q.events = m
	return q
}

// WithoutEvents is the query without its event terms: what the listing and the summaries alone decide (the
// blobs whose events are worth reading).
func (q Query) WithoutEvents() Query {
	var out []term
	for _, t := range q.terms {
		if !t.onEvents() {
			out = append(out, t)
		}
	}
	return Query{terms: out}
}

// Judged reports whether the query can answer for the item: it has no event terms, or the item's events were
// judged.
func (q Query) Judged(it *Item) bool {
	if !q.HasEventTerms() {
		return true
	}
	_, ok := q.events[it.Name]
	return ok
}

// MatchesEvents judges a blob's events against the query's event terms (the other terms are not its to answer):
// one event matches every positive term, and no event matches a negated one. A query with no event terms matches.
func (q Query) MatchesEvents(c Config, evs []Event) bool {
	var pos []term
	for _, t := range q.terms {
		if !t.onEvents() {
			continue
		}
		if !t.not {
			pos = append(pos, t)
			continue
		}
		for i := range evs {
			if t.matchesEvent(c, &evs[i], &lazyData{}) {
				return false
			}
		}
	}
	if len(pos) == 0 {
		return true
	}
	for i := range evs {
		if allMatch(c, pos, &evs[i]) {
			return true
		}
	}
	return false
}

func allMatch(c Config, ts []term, ev *Event) bool {
	d := &lazyData{}
	for _, t := range ts {
		if !t.matchesEvent(c, ev, d) {
			return false
		}
	}
	return true
}

// matchesEvent reports whether one event matches the term (before its -).
func (t term) matchesEvent(c Config, ev *Event, d *lazyData) bool {
	switch t.field {
	case "type":
		return t.has(ev.EventType)
	case "subject":
		return t.has(ev.Subject)
	case "id":
		got, want := ParseID(ev.ID, c.Separator).Original, ParseID(t.value, c.Separator).Original
		if t.exact {
			return strings.EqualFold(got, want)
		}
		return strings.Contains(strings.ToLower(got), want)
	}
	if !ev.HasData {
		return false
	}
	if t.path == nil { // data:TEXT — anywhere in the data as it stands in the payload
		return t.has(string(ev.Data))
	}
	v, ok := d.at(ev.Data, t.path)
	return ok && t.hasValue(v)
}

// hasValue matches a value found at a data path: a string by its text, a number, true, false or null by how JSON
// writes it, an array when one of its elements matches (as Event Grid's filters on arrays do); an object matches
// nothing.
func (t term) hasValue(v any) bool {
	switch v := v.(type) {
	case string:
		return t.has(v)
	case json.Number:
		if t.exact {
			return numberEqual(v, t.value)
		}
		return t.has(v.String())
	case bool:
		return t.has(fmt.Sprint(v))
	case nil:
		return t.has("null")
	case []any:
		for _, e := range v {
			if _, obj := e.(map[string]any); !obj && t.hasValue(e) {
				return true
			}
		}
	}
	return false
}

// numberEqual compares a number in the data with the value typed (3 is 3.0), or as text when either is no
// number.
func numberEqual(n json.Number, typed string) bool {
	a, err1 := n.Float64()
	var b float64
	_, err2 := fmt.Sscan(typed, &b)
	if err1 != nil || err2 != nil {
		return strings.EqualFold(n.String(), typed)
	}
	return a == b
}

// lazyData decodes an event's data once, for every term of a query that looks into it.
type lazyData struct {
	done bool
	v    any
}

// at is the value at path in data: each key as written, or — when the data holds no such key — the one key that
// differs from it only in case.
func (d *lazyData) at(data json.RawMessage, path []string) (any, bool) {
	if !d.done {
		d.done = true
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if dec.Decode(&d.v) != nil {
			d.v = nil
			return nil, false
		}
	}
	v := d.v
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = lookupKey(m, k); !ok {
			return nil, false
		}
	}
	return v, true
}

func lookupKey(m map[string]any, k string) (any, bool) {
	if v, ok := m[k]; ok {
		return v, true
	}
	var found any
	n := 0
	for key, v := range m {
		if strings.EqualFold(key, k) {
			found, n = v, n+1
		}
	}
	return found, n == 1
}

// dataPath reads a data.PATH field into its keys (nil when the field is not one); a path with an empty key is
// an error.
func dataPath(f string) ([]string, error) {
	if len(f) < 5 || !strings.EqualFold(f[:5], "data.") {
		return nil, nil
	}
	keys := strings.Split(f[5:], ".")
	for _, k := range keys {
		if k == "" {
			return nil, fmt.Errorf("%s: a data path names keys parted by dots (data.user.id)", f)
		}
	}
	return keys, nil
}
