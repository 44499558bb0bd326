package textfmt

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain/name.json":  "plain/name.json",
		"x\x1b[2Jy":        `x\x1b[2Jy`,
		"\x1b]0;pwned\x07": `\x1b]0;pwned\x07`,
		"a\nb\tc":          `a\nb\tc`,
		"\xff":             `\xff`,
		"ünïcode ✓":        "ünïcode ✓",
		"rtl\u202eevil":    `rtl\u202eevil`,
		"c1\u009b31m":      `c1\u009b31m`,
		"line\u2028sep":    `line\u2028sep`,
		"del\x7f":          `del\x7f`,
		"lone\xed\xa0\x80": `lone\ud800`,
		"low\xed\xbf\xbf!": `low\udfff!`,
		"\xed\x9f\xbf":     "\ud7ff",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every duration the tool prints parses back to what it means (to the printed precision), and the forms an
// operator types are accepted.
func TestDurationsRoundTrip(t *testing.T) {
	for _, d := range []time.Duration{0, 30 * time.Second, 42 * time.Minute, 5*time.Hour + 12*time.Minute, 72 * time.Hour,
		28*24*time.Hour + 12*time.Hour, 720 * time.Hour, -5 * time.Minute} {
		s := Duration(d)
		got, err := ParseDuration(s)
		if err != nil || got != d {
			t.Errorf("Duration(%v) = %q parses to %v, %v", d, s, got, err)
		}
	}
	for in, want := range map[string]time.Duration{
		"3d": 72 * time.Hour, "1d12h": 36 * time.Hour, "90m": 90 * time.Minute, "720h": 720 * time.Hour,
		"3d0h": 72 * time.Hour, "1.5d": 36 * time.Hour, "1h0m0s": time.Hour, " 2d ": 48 * time.Hour, "0d": 0, "0": 0,
	} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "d", "3x", "xd", "3d-1h", "-d", "1e400d", "3dd"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

func TestBytesAndShorten(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 15652447: "14.9 MiB", 3 << 30: "3.0 GiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
	name := "THREAD-REPLIES/2026/11/1/8/be2f8f99-42ba-5b58-e9e4-a1a38fd43926.json"
	for _, w := range []int{0, 1, 2, 10, 30, len(name) - 1, len(name), 200} {
		got := ShortenMiddle(name, w)
		if Width(got) > w && w > 0 || w >= len(name) && got != name {
			t.Errorf("ShortenMiddle(%d) = %q (%d wide)", w, got, Width(got))
		}
	}
	if got := ShortenMiddle(name, 30); got != "THREAD-REPLIES/…38fd43926.json" {
		t.Errorf("ShortenMiddle keeps both ends: %q", got)
	}
}

func TestAppendJSONEscapesWhatATerminalMustNotSee(t *testing.T) {
	for in, want := range map[string]string{
		"plain":              `"plain"`,
		"q\"b\\":             `"q\"b\\"`,
		"\x1b[2J\n":          `"\u001b[2J\n"`,
		"del\x7f c1\u009b":   `"del\u007f c1\u009b"`,
		"rtl\u202e ls\u2028": `"rtl\u202e ls\u2028"`,
		"lone\xed\xa0\x80":   `"lone\ud800"`,
		"bad\xff":            `"bad\ufffd"`,
		"é✓😀":                `"é✓😀"`,
	} {
		if got := string(AppendJSON(nil, in)); got != want {
			t.Errorf("AppendJSON(%q) = %s, want %s", in, got, want)
		}
	}
}

// A name cut in the middle keeps both ends, so two long names that share a start stay apart.
func TestCellMiddle(t *testing.T) {
	for _, tc := range []struct {
		in   string
		w    int
		want string
	}{
		{"MaxDeliveryAttemptsExceeded", 12, "MaxDe…ceeded"},
		{"UndeliverableDueToHttpBadRequest", 12, "Undel…equest"},
		{"UndeliverableDueToClientError", 12, "Undel…tError"},
		{"short", 12, "short       "},
		{"MaxDeliveryAttemptsExceeded", 4, "Max…"},
	} {
		if got := CellMiddle(tc.in, tc.w); got != tc.want || Width(got) != tc.w {
			t.Errorf("CellMiddle(%q, %d) = %q, want %q", tc.in, tc.w, got, tc.want)
		}
	}
}

// Every string of a JSON document comes out with nothing raw a terminal would act on, whatever produced it (a
// map key, a field a type forgot), and parses back to the same value.
func TestSafeJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"plain"}`:                            `{"a":"plain"}`,
		"{\"k\u0085y\":\"x\u202ey\"}":              `{"k\u0085y":"x\u202ey"}`,
		"{\"a\":\"q\\\"\u009b\",\"b\":[\"\x7f\"]}": `{"a":"q\"\u009b","b":["\u007f"]}`,
		"{\"a\":\"\\u001b\u2066\"}\n":              "{\"a\":\"\\u001b\\u2066\"}\n",
		"[\"é ✓ 日本\"]":                             "[\"é ✓ 日本\"]",
	} {
		got := string(SafeJSON([]byte(in)))
		if got != want {
			t.Errorf("SafeJSON(%q) = %q, want %q", in, got, want)
		}
		var a, b any
		if json.Unmarshal([]byte(in), &a) != nil || json.Unmarshal([]byte(got), &b) != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("SafeJSON(%q) changed the value: %v → %v", in, a, b)
		}
	}
}

// The most negative duration (an mtime at the end of time) prints with one minus sign, never "--9223372036s".
func TestDurationAtTheEdges(t *testing.T) {
	for d, want := range map[time.Duration]string{math.MinInt64: "-106751d23h", math.MaxInt64: "106751d23h", -90 * time.Second: "-1m", -500 * time.Millisecond: "0s", -time.Second: "-1s"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%d) = %q, want %q", int64(d), got, want)
		}
	}
}

// The fast measure agrees with the grapheme rules on what it takes, and hands over everything else.
func TestPlainWidthAgreesWithTheGraphemeRules(t *testing.T) {
	for _, s := range []string{
		"", "abc", "ecc3935b-…d03279d91", "\x1b[1;38;5;203m▸ STRANDED\x1b[0m 3h55m", "AGE↓ · ↑ │ ─ ╭╮╰╯ ★ ▲",
		"▸\u0301", "…\ufe0f", "★\ufe0f", "a\u200db", "👍🏽", "⚠️", "日本", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "\x1b[", "\x1b[31",
		"tab\there", "e\u0301", "\x7f", "→\u20d7",
	} {
		if got, want := Width(s), ansi.StringWidth(s); got != want {
			t.Errorf("Width(%q) = %d, the grapheme rules say %d", s, got, want)
		}
	}
	if _, ok := plainWidth("▸\u0301"); ok {
		t.Error("a symbol with a combining mark took the fast path")
	}
	if w, ok := plainWidth("\x1b[31m…\x1b[0m"); !ok || w != 1 {
		t.Errorf("a coloured ellipsis: %d %v", w, ok)
	}
}

// A duration too long to hold says the bound, not that it is no duration; what is not a duration still says the
// form.
func TestParseDurationSaysTheBound(t *testing.T) {
	for _, s := range []string{"100000000h", "200000d", "9999999999999s"} {
		if _, err := ParseDuration(s); err == nil || !strings.Contains(err.Error(), "too long: at most 106,000 days") {
			t.Errorf("ParseDuration(%q): %v", s, err)
		}
	}
	for _, s := range []string{"10x", "h", "1.2.3h", "abc"} {
		if _, err := ParseDuration(s); err == nil || strings.Contains(err.Error(), "too long") {
			t.Errorf("ParseDuration(%q): %v", s, err)
		}
	}
}

// Wrapped text never breaks a name at a hyphen (x/ansi's wrap does): a line ends at a space or a breakpoint, and
// a word longer than the line is cut only where it must be; the text is the same once the breaks are taken out.
func TestWrapNeverBreaksAtAHyphen(t *testing.T) {
	for _, tc := range []struct {
		s     string
		width int
	}{
		{"drained by PUSH-NOTIFICATIONS and FRIEND-REQUESTS today", 20},
		{`deadletter drain --dir --filter "sub:webhooks -is:handled" --yes`, 40},
		{"the blob 6cfb4200-69c9-ee25-2bdd-2bcae3e70162 stays", 30},
	} {
		out := Wrap(tc.s, tc.width, " /")
		for _, l := range strings.Split(out, "\n") {
			if Width(l) > tc.width {
				t.Errorf("%q: line %q is wider than %d", tc.s, l, tc.width)
			}
			if strings.HasSuffix(l, "-") && !strings.HasSuffix(strings.TrimSpace(l), " -") && Width(l) < tc.width {
				t.Errorf("%q: broken at a hyphen: %q", tc.s, l)
			}
		}
		if strings.ReplaceAll(strings.ReplaceAll(out, "\n", ""), " ", "") != strings.ReplaceAll(tc.s, " ", "") {
			t.Errorf("%q: wrapping changed the text: %q", tc.s, out)
		}
	}
	if got := Wrap("PUSH-NOTIFICATIONS x", 19, " "); got != "PUSH-NOTIFICATIONS\nx" {
		t.Errorf("got %q", got)
	}
}

// Hang fills the first line to the limit and puts the rest under the hang, every line within the limit, the
// words unchanged.
func TestHangWrapsUnderItsText(t *testing.T) {
	s := "  d            drain the selection, else the row under the cursor (ctrl+a selects every row shown)"
	out := Hang(s, 60, 15, " ")
	if len(out) < 2 || !strings.HasPrefix(out[0], "  d            drain the selection, else the row under") {
		t.Fatalf("the first line is not filled: %q", out)
	}
	for _, l := range out {
		if Width(l) > 60 {
			t.Errorf("%q is wider than 60", l)
		}
	}
	for _, l := range out[1:] {
		if !strings.HasPrefix(l, strings.Repeat(" ", 15)) || l[15] == ' ' {
			t.Errorf("a continuation line does not start under the text: %q", l)
		}
	}
	if strings.Join(strings.Fields(strings.Join(out, " ")), " ") != strings.Join(strings.Fields(s), " ") {
		t.Errorf("the words changed: %q", out)
	}
}
