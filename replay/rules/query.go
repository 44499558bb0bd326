package rules

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
)

// The query language the dashboard's filter (/) and the commands' --filter share: words are ANDed; a plain word
// matches what a row shows (the blob's name — subscription, hour, GUID — its dominant reason and outcome, and the
// badges it carries); field:value terms match the field named; -TERM leaves out what TERM matches.
const QuerySyntax = "words are ANDed and match what a row shows: its name, reason, outcome and badges (malformed, crash, untriggerable, handled, expiring, stalled, acked) · " +
	"sub:NAME reason:TEXT outcome:TEXT (sub:=NAME, reason:=TEXT: the whole value) · hour:12-01 04h (as the HOUR column prints it), hour:12-01T04 or hour:2026-12-01T04 · " +
	"verdict:cap|replay|notIdempotent|unroutable|unknown|malformed|crash|handled (blobs that show it) · is:malformed is:crash is:untriggerable is:expiring is:stalled is:handled is:acked is:unread is:unreadable is:root · " +
	"inside the events (a blob matches when one of its events matches them all): type:TEXT subject:TEXT id:ID (the original id, with or without its |n) data:TEXT data.PATH:VALUE data.PATH:=VALUE (dot path into the data, as Event Grid's advanced filters address it) · " +
	`-TERM leaves out what TERM matches · "quoted text" keeps spaces · a filter that does not parse shows nothing`

// Query is a parsed query. The zero Query (no words) matches everything.
type Query struct {
	terms []term
	// events is which blobs' events match the query's event terms (WithEvents); a blob not in it is not judged,
	// and a query with event terms does not match it.
	events EventMatches
}

// term is one word of a query: not leaves out what it matches; exact matches a whole value (sub:=NAME); path is
// a data.PATH term's keys.
type term struct {
	field, value string
	not, exact   bool
	path         []string
}

// words splits a query at spaces, keeping "quoted text" (a reason with spaces) together.
func words(q string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range q {
		switch {
		case r == '"':
			quoted = !quoted
		case (r == ' ' || r == '\t') && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// hourWord is the hour half of the HOUR column's form (12-01 04h), which a space parts from its date.
var hourWord = regexp.MustCompile(`^\d{1,2}h$`)

// ParseQuery reads a query; the error says which word is wrong and what it wants.
func ParseQuery(q string) (Query, error) {
	p, _, err := ParseQueryWith(q)
	return p, err
}

// ExtraTerm is a term of a field beyond the blob language (ParseQueryWith): the record's who: and action:.
type ExtraTerm struct {
	Field, Value string
	Not, Exact   bool
}

// Has reports whether a value matches the term (before its -): contains it, or is it (exact), in any case.
func (t ExtraTerm) Has(v string) bool { return term{value: t.Value, exact: t.Exact}.has(v) }

// ParseQueryWith reads a query whose language is the blob filter's plus the fields named in extra: their terms
// come back apart, in order, for the caller to match; the rest is the blob query.
func ParseQueryWith(q string, extra ...string) (Query, []ExtraTerm, error) {
	var out []term
	var more []ExtraTerm
	ws := words(q)
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		not := len(w) > 1 && w[0] == '-'
		if not {
			w = w[1:]
		}
		f, v, ok := strings.Cut(w, ":")
		if !ok {
			if err := plainWord(w, ws[i]); err != nil {
				return Query{}, nil, err
			}
			out = append(out, term{value: strings.ToLower(w), not: not})
			continue
		}
		exact := false
		if f != "hour" && strings.HasPrefix(v, "=") {
			exact, v = true, v[1:]
		}
		if v == "" {
			return Query{}, nil, fmt.Errorf("%s needs a value after the colon (sub:PUSH, is:expiring)", w)
		}
		if lf := strings.ToLower(f); slices.Contains(extra, lf) {
			more = append(more, ExtraTerm{Field: lf, Value: strings.ToLower(v), Not: not, Exact: exact})
			continue
		}
		t, used, err := fieldTerm(f, v, ws[i+1:], extra)
		if err != nil {
			return Query{}, nil, err
		}
		i += used
		t.not, t.exact = not, exact
		out = append(out, t)
	}
	return Query{terms: out}, more, nil
}

// fieldTerm reads a field:value word (f as typed) into its term; rest are the words after it, of which it used
// used (hour:12-01 04h, as the column prints it, is two words).
func fieldTerm(f, v string, rest []string, extra []string) (t term, used int, err error) {
	given := f // (a data path keeps its keys' case)
	switch f = strings.ToLower(f); f {
	case "sub", "subscription":
		f = "sub"
	case "hour":
		if len(rest) > 0 && hourWord.MatchString(rest[0]) {
			v += " " + rest[0]
			used = 1
		}
		if v, err = hourPrefix(v); err != nil {
			return term{}, 0, err
		}
	case "reason", "outcome", "name", "subject", "id", "data":
	case "type", "eventtype":
		f = "type"
	case "verdict":
		if !IsVerdictFilter(v) { // the words ls --verdict takes
			return term{}, 0, fmt.Errorf("verdict:%s — want %s", v, VerdictFilterWords)
		}
	case "is":
		if !slices.Contains(IsWords, strings.ToLower(v)) {
			return term{}, 0, fmt.Errorf("is:%s — want %s", v, strings.Join(IsWords, ", "))
		}
	default:
		path, err := dataPath(given)
		if err != nil {
			return term{}, 0, err
		}
		if path == nil {
			return term{}, 0, fmt.Errorf("%s: is not a filter field (%s)", f, strings.Join(append(slices.Clone(filterFields), extra...), ", "))
		}
		return term{field: "data", path: path, value: strings.ToLower(v)}, 0, nil
	}
	return term{field: f, value: strings.ToLower(v)}, used, nil
}

// plainWord refuses a plain word w (as typed: typed) that holds no letter or digit — ".", "/", "--" are in every
// name, so as a word it narrows nothing an operator meant it to.
func plainWord(w, typed string) error {
	if typed == "-" { // (a negation left without its word, most likely)
		return errors.New("- leaves out what the word after it matches: write it joined to that word (-is:handled)")
	}
	if !strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return fmt.Errorf("%q has no letter or digit: as a word it matches nearly every blob (add letters or digits, or a field: sub:, reason:…)", typed)
	}
	return nil
}

// hourForms are what hour: takes, each with how much of "01-02T15" it fixes.
var hourForms = []struct {
	layout string
	year   bool
}{{"01-02 15h", false}, {"01-02T15", false}, {"2006-01-02T15", true}, {"2006-01-02 15h", true}, {"01-02", false}, {"2006-01-02", true}}

// hourPrefix reads what hour: was given into the key rows are matched by: "2026-12-01T04", or without the year
// "12-01T04", or a date only.
func hourPrefix(v string) (string, error) {
	for _, f := range hourForms {
		t, err := time.Parse(f.layout, v)
		if err != nil {
			continue
		}
		key := t.Format("01-02T15")
		if !strings.Contains(f.layout, "15") {
			key = t.Format("01-02")
		}
		if f.year {
			key = t.Format("2006-") + key
		}
		return key, nil
	}
	return "", fmt.Errorf("hour:%s — want a date and hour as the HOUR column prints it (12-01 04h), 12-01T04 or 2026-12-01T04", v)
}

// Empty reports whether the query holds no words (it matches everything).
func (q Query) Empty() bool { return len(q.terms) == 0 }

// NeedsPayload reports whether the query asks what only a payload tells (a reason, an outcome, a verdict, a
// badge, a plain word that may be one): a command reads the payloads it needs before it selects anything.
func (q Query) NeedsPayload() bool {
	for _, t := range q.terms {
		if t.field != "sub" && t.field != "hour" && t.field != "name" && !t.onEvents() { // (events are judged apart)
			return true
		}
	}
	return false
}

// Matches reports whether the item matches every term at the service time now; key is its search key
// (SearchKey), which a screen over a million rows caches. The terms on what is inside the events are answered by
// the judgement WithEvents gave: an item it has not judged does not match.
func (q Query) Matches(c Config, now time.Time, it *Item, key func() string) bool {
	judged := false
	for _, t := range q.terms {
		if t.onEvents() {
			if !judged && !q.events[it.Name] {
				return false
			}
			judged = true
			continue
		}
		if t.matches(c, now, it, key) == t.not {
			return false
		}
	}
	return true
}

// ParseFilter reads a command's --filter: a query that does not parse, or holds no words, is an error — never
// everything.
func ParseFilter(q string) (Query, error) {
	p, err := ParseQuery(q)
	if err == nil && p.Empty() {
		err = errors.New("the query holds no words")
	}
	return p, err
}

// Select is which items of s the query shows, judged as the dashboard's tables judge them (hydrate s first where
// NeedsPayload: reason:, outcome:, verdict: and the badges read the payloads).
func (q Query) Select(c Config, s *Snapshot) func(i int) bool {
	return func(i int) bool {
		it := s.Items[i]
		return q.Matches(c, s.Now, it, func() string { return SearchKey(it) })
	}
}

// SearchKey is what a plain word is looked for in: the name, the dominant reason (raw, and short as a row shows
// it: TTLExpired) and outcome, lower-cased.
func SearchKey(it *Item) string {
	var b strings.Builder
	b.WriteString(it.Name)
	if s := it.Summary; s != nil {
		top := s.Reasons.Top()
		b.WriteByte(0)
		b.WriteString(top)
		if short := ShortReason(top); short != top {
			b.WriteByte(0)
			b.WriteString(short)
		}
		b.WriteByte(0)
		b.WriteString(s.Outcomes.Top())
	}
	return strings.ToLower(b.String())
}

func (t term) matches(cfg Config, now time.Time, it *Item, key func() string) bool {
	s := it.Summary
	switch t.field {
	case "":
		if strings.Contains(key(), t.value) {
			return true
		}
		match, known := cfg.Is(it, now, t.value) // a badge the row carries: malformed, crash, acked…
		return known && match
	case "name":
		return t.has(it.Name)
	case "sub":
		return t.has(it.Parsed.Subscription)
	case "hour":
		if it.Parsed.Hour().IsZero() {
			return false
		}
		key := strings.ToLower(it.Parsed.Hour().Format("01-02T15"))
		if len(t.value) > 4 && t.value[4] == '-' { // with the year
			key = strings.ToLower(it.Parsed.Hour().Format("2006-01-02T15"))
		}
		return strings.HasPrefix(key, t.value)
	case "reason", "outcome":
		if s == nil {
			return false
		}
		cs := s.Reasons
		if t.field == "outcome" {
			cs = s.Outcomes
		}
		for _, c := range cs {
			if t.has(c.Value) || t.field == "reason" && t.has(ShortReason(c.Value)) { // a reason as the rows show it too
				return true
			}
		}
		return false
	}
	match, _ := cfg.Is(it, now, t.value) // verdict: and is: (ParseQuery let only known words through)
	return match
}

// has reports whether a field's value matches the term: contains it, or is it (exact), in any case.
func (t term) has(v string) bool {
	if t.exact {
		return strings.EqualFold(v, t.value)
	}
	return strings.Contains(strings.ToLower(v), t.value)
}
