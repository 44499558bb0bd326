package rules_test

import (
	"strings"
	"testing"

	"github.com/deadletter/deadletter/internal/jsjson"
	"github.com/deadletter/deadletter/replay/rules"
)

// Every case of the id rule (docs/estate.md, "Ids and the attempt count"), plus the line-terminator rule and overflow.
func TestParseID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		id, original string
		attempt      rules.Attempt
		uncountable  bool
	}{
		{"abc", "abc", 0, false},
		{"abc|2", "abc", 2, false},
		{"a|b|3", "a|b", 3, false},
		{"abc|007", "abc", 7, false},
		{"abc|", "abc|", 0, false},
		{"|3", "|3", 0, false},
		{"abc|x", "abc|x", 0, false},
		{"abc|-1", "abc|-1", 0, false},
		{"abc|1.5", "abc|1.5", 0, false},
		{"abc|2 ", "abc|2 ", 0, false},
		{"abc|99999999999999999999999", "abc", 1e23, false}, // the estate reads a JavaScript number
		{"abc|٣", "abc|٣", 0, false},                        // \d is ASCII only in JavaScript
		{"a\nb|2", "a\nb|2", 0, true},
		{"ab|2\r", "ab|2\r", 0, true},
		{"a\u2028b|1", "a\u2028b|1", 0, true},
		{"a\u2029|1", "a\u2029|1", 0, true},
		{"", "", 0, false},
		{"||1", "|", 1, false},
	}
	for _, c := range cases {
		got := rules.ParseID(c.id, "|")
		if got.Original != c.original || got.Attempt != c.attempt || got.Uncountable != c.uncountable {
			t.Errorf("ParseID(%q) = %+v, want {%q %v %v}", c.id, got, c.original, c.attempt, c.uncountable)
		}
	}
}

func TestParseIDMultiCharSeparator(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		id, sep, orig string
		n             rules.Attempt
	}{
		{"a---3", "--", "a-", 3},
		{"a::1::2", "::", "a::1", 2},
		{"a11", "1", "a", 1}, // as /^(.+)1(\d+)$/ backtracks: "a1" leaves no digits
		{"x#-#12", "#-#", "x", 12},
	} {
		got := rules.ParseID(c.id, c.sep)
		if got.Original != c.orig || got.Attempt != c.n {
			t.Errorf("ParseID(%q, %q) = %+v, want %q %v", c.id, c.sep, got, c.orig, c.n)
		}
	}
}

func TestFormatIDRewritesNeverStacks(t *testing.T) {
	t.Parallel()
	id := "evt"
	for i := 1; i <= 5; i++ {
		id = rules.FormatID(rules.ParseID(id, "|").Original, rules.Attempt(i), "|")
	}
	if id != "evt|5" {
		t.Fatalf("after five cycles id = %q, want evt|5", id)
	}
	// The uncountable exception: every republish appends another suffix, and it never counts.
	id = "evt\n"
	for i := 0; i < 3; i++ {
		p := rules.ParseID(id, "|")
		id = rules.FormatID(p.Original, p.Attempt+1, "|")
	}
	if id != "evt\n|1|1|1" || rules.ParseID(id, "|").Attempt != 0 {
		t.Fatalf("uncountable id after three cycles = %q", id)
	}
}

func FuzzParseID(f *testing.F) {
	for _, s := range []string{"abc", "abc|2", "a|b|3", "abc|007", "abc|", "|3", "abc|x", "abc|-1", "abc|1.5", "abc|2 ", "a\nb|1", "||", "|",
		`lone-\ud800|1`, `\udc00|2`, "\xff\xe2\x82|1", `a\u2028|1`, "abc|99999999999999999999999"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, id string, k int) {
		if k < 0 {
			k = -k
		}
		if k < 0 {
			k = 0
		}
		p := rules.ParseID(id, "|")
		if p.Attempt < 0 {
			t.Fatalf("negative attempt for %q", id)
		}
		if rules.HasLineTerminator(id) {
			if !p.Uncountable || p.Original != id || p.Attempt != 0 {
				t.Fatalf("line terminator id %q parsed as %+v", id, p)
			}
			return
		}
		// format(parse(id)) has exactly one suffix: parsing it back recovers the same original.
		f := rules.FormatID(p.Original, rules.Attempt(k), "|")
		if q := rules.ParseID(f, "|"); q.Original != p.Original && p.Original != "" {
			t.Fatalf("parse(format(parse(%q).original, %d)).original = %q, want %q", id, k, q.Original, p.Original)
		}
		// parse(format(o, n)) == (o, n) for every non-empty o.
		if id != "" {
			q := rules.ParseID(rules.FormatID(id, rules.Attempt(k), "|"), "|")
			if q.Original != id || q.Attempt != rules.Attempt(k) {
				t.Fatalf("parse(format(%q, %d)) = %+v", id, k, q)
			}
		}
		if strings.Count(f, "|") < 1 {
			t.Fatalf("format lost its separator: %q", f)
		}
		// The same, for the id as the estate holds it: the fuzz input read as the contents of a JSON string
		// (escapes such as \ud800 give lone surrogates, invalid UTF-8 becomes U+FFFD), and the republished id
		// written with JSON.stringify and read back by the next cycle's JSON.parse.
		js := jsjson.Unquote([]byte(`"` + id + `"`))
		jp := rules.ParseID(js, "|")
		if rules.HasLineTerminator(js) {
			if !jp.Uncountable || jp.Attempt != 0 {
				t.Fatalf("line terminator id %+q parsed as %+v", js, jp)
			}
			return
		}
		next := rules.FormatID(jp.Original, jp.Attempt.Next(), "|")
		back := jsjson.Unquote(jsjson.AppendString(nil, next))
		if back != next {
			t.Fatalf("id %+q does not survive JSON.stringify and JSON.parse: %+q", next, back)
		}
		// Past 1e21 the count prints with an exponent and no longer parses as one; it is over any cap long before.
		if n := jp.Attempt.Next(); jp.Original != "" && strings.Trim(n.String(), "0123456789") == "" {
			if q := rules.ParseID(back, "|"); q.Original != jp.Original || q.Attempt != n {
				t.Fatalf("next cycle reads %+q as %+v, want original %+q attempt %s", back, q, jp.Original, n)
			}
		}
	})
}

// An attempt too large for an integer is the number the estate sees: still at or over any cap, printed the way
// JavaScript prints it, and the republished id carries that number.
func TestHugeAttempts(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{
		"a|100000000000000000000":                     "100000000000000000000",
		"a|123456789012345678901":                     "123456789012345680000",
		"a|00000000000000000000000000000000000000007": "7",
	} {
		p := rules.ParseID(id, "|")
		if got := p.Attempt.String(); got != want {
			t.Errorf("ParseID(%q).Attempt = %s, want %s", id, got, want)
		}
	}
	p := rules.ParseID("a|99999999999999999999999", "|")
	if !p.Attempt.AtLeast(1<<62) || p.Attempt.String() != "1e+23" {
		t.Fatalf("%v %s", p.Attempt.AtLeast(1<<62), p.Attempt)
	}
	inf := rules.ParseID("a|"+strings.Repeat("9", 400), "|")
	if inf.Attempt.Finite() || !inf.Attempt.AtLeast(1<<62) || inf.Attempt.String() != "Infinity" {
		t.Fatalf("%+v %s", inf, inf.Attempt)
	}
}

// The event an id names across republishes: the original of a countable id; for one the estate cannot count,
// every suffix it grew on republish taken off.
func TestEventOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ id, want string }{
		{"evt-1", "evt-1"},
		{"evt-1-replay-3", "evt-1"},
		{"a\nb", "a\nb"},
		{"a\nb-replay-1-replay-2", "a\nb"},
		{"a\nb-replay-x", "a\nb-replay-x"},
		{"-replay-1", "-replay-1"},
	} {
		if got := rules.EventOf(c.id, "-replay-"); got != c.want {
			t.Errorf("EventOf(%q) = %q, want %q", c.id, got, c.want)
		}
	}
}
