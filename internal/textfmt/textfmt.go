// Package textfmt holds the small text rules every front end shares: making untrusted text safe for a terminal,
// and durations and sizes the way an operator reads and types them. It depends on nothing of deadletter's, so
// the replay core, the dashboard and the command line all use the same words.
package textfmt

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Printable makes untrusted text (blob names, payload fields, errors that quote them) safe to put on a terminal:
// control characters, escape sequences, bidirectional overrides, line and paragraph separators and invalid UTF-8
// are shown escaped (\x1b, \n, \u202e, \xff) instead of being passed through. A lone surrogate held in WTF-8 (a
// JSON escape such as \ud800 the estate keeps) is shown as \ud800. Everything read from a blob goes through it.
func Printable(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if NeedsEscape(r, size) {
			clean = false
			break
		}
		i += size
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			if sr, ok := surrogateAt(s, i); ok {
				fmt.Fprintf(&b, `\u%04x`, sr)
				i += 3
				continue
			}
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case NeedsEscape(r, size):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// surrogateAt reports whether the WTF-8 encoding of a lone surrogate (ED A0..BF 80..BF) starts at s[i].
func surrogateAt(s string, i int) (rune, bool) {
	if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
		return 0xD000 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), true
	}
	return 0, false
}

// NeedsEscape reports whether a decoded rune (size bytes long) must not reach a terminal as it is: controls
// (C0, DEL, C1 including the 8-bit CSI), line and paragraph separators, bidirectional controls that can make a
// name read as another, the byte order mark, other invisible format characters, and invalid UTF-8.
func NeedsEscape(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e || r == 0x200f:
		return true
	case r == 0xfeff:
		return true
	}
	return !unicode.IsPrint(r) && !unicode.IsSpace(r) && unicode.Is(unicode.Cf, r)
}

// Duration prints a duration the way an operator reads it — 3d4h, 3d, 5h12m, 24h, 42m, 30s, negative as -5m (no
// zero part at the end: 3d, not 3d0h) — and ParseDuration reads every form it prints back.
func Duration(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -max(d, -math.MaxInt64) // (the most negative duration has no positive: -d would stay negative)
	}
	var s string
	switch {
	case d >= 48*time.Hour:
		s = fmt.Sprintf("%dd", d/(24*time.Hour))
		if h := (d % (24 * time.Hour)) / time.Hour; h > 0 {
			s += fmt.Sprintf("%dh", h)
		}
	case d >= time.Hour:
		s = fmt.Sprintf("%dh", d/time.Hour)
		if m := (d % time.Hour) / time.Minute; m > 0 {
			s += fmt.Sprintf("%dm", m)
		}
	case d >= time.Minute:
		s = fmt.Sprintf("%dm", d/time.Minute)
	default:
		s = fmt.Sprintf("%ds", d/time.Second)
	}
	if neg && s != "0s" { // (less than a second either way is 0s: no "-0s")
		return "-" + s
	}
	return s
}

// Time prints an instant for people, to the second, in UTC: 2026-11-03 02:07:25Z (no nanoseconds, no T, so a
// column of them reads and never breaks mid-date).
func Time(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

// TimeText prints a time carried as text (an event's publishTime) as Time does when it is RFC 3339, else as the
// (escaped) text it is.
func TimeText(s string) string {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return Time(t)
	}
	return Printable(s)
}

// durationSyntax is a Go duration's form (time.ParseDuration's), whatever its size.
var durationSyntax = regexp.MustCompile(`^([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))*$`)

// ParseDuration reads a Go duration (90s, 60m, 1h30m, 720h) that may start with whole or fractional days
// (3d, 1d12h, 1.5d, 3d0h): operators think of retention and expiry in days, and the tool prints them that way.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	rest, neg := strings.CutPrefix(in, "-")
	if !neg {
		rest = strings.TrimPrefix(rest, "+")
	}
	var days time.Duration
	hasDays := false
	if i := strings.IndexByte(rest, 'd'); i > 0 {
		hasDays = true
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err == nil && n > 106_000 { // about 290 years, where time.Duration ends
			return 0, fmt.Errorf("duration %q is too long: at most 106,000 days (about 290 years, 2,562,047h)", s)
		}
		if err != nil || n < 0 {
			return 0, fmt.Errorf("duration %q: want a number of days before the d (3d, 1d12h, 90m, 720h)", s)
		}
		days = time.Duration(n * float64(24*time.Hour))
		rest = rest[i+1:]
	}
	var d time.Duration
	if rest != "" || !hasDays {
		var err error
		if d, err = time.ParseDuration(rest); err != nil || d < 0 {
			if err != nil && durationSyntax.MatchString(rest) { // a duration, past what one can hold
				return 0, fmt.Errorf("duration %q is too long: at most 106,000 days (about 290 years, 2,562,047h)", s)
			}
			return 0, fmt.Errorf("duration %q: want a duration such as 3d, 1d12h, 90m or 720h", s)
		}
	}
	d += days
	if neg {
		d = -d
	}
	return d, nil
}

// Bytes prints a size for people: 512 B, 15.3 KiB, 14.9 MiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, suffix := float64(n), []string{"KiB", "MiB", "GiB", "TiB"}
	for i := range suffix {
		f /= unit
		if f < unit || i == len(suffix)-1 {
			return strconv.FormatFloat(f, 'f', 1, 64) + " " + suffix[i]
		}
	}
	return ""
}

// The one measure of width. A terminal draws grapheme clusters — 👍🏽 (a thumb and a skin tone) is one picture two
// columns wide, ⚠️ (a sign and a variation selector) two, a letter and its combining accents one — so every width
// deadletter computes, every cut it makes and every cell it pads is measured by x/ansi's grapheme-cluster rules,
// the same ones Lip Gloss lays out with. Escape sequences (colour, hyperlinks) count for nothing.

// Width is how many terminal columns s takes.
func Width(s string) int {
	if w, ok := plainWidth(s); ok {
		return w
	}
	return ansi.StringWidth(s)
}

// plainWidth is the width of what a frame of a million-row table mostly is — printable ASCII, colour escapes
// (CSI … m) and a few narrow symbols deadletter draws itself (… ▸ · ↓ ↑ │ ─) — without the grapheme walk, which
// cost a frame 0.5 ms at 48 rows. Each of those symbols is a cluster of its own, one column wide, when what
// follows is ASCII or another of them; anything else (a combining mark, a variation selector, a joiner, any
// other rune, any other escape) says no, and the grapheme rules measure it.
func plainWidth(s string) (int, bool) {
	w := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			w, i = w+1, i+1
		case c == 0x1b: // CSI parameters and intermediates, then a final byte
			if i+1 >= len(s) || s[i+1] != '[' {
				return 0, false
			}
			j := i + 2
			for j < len(s) && s[j] >= 0x20 && s[j] <= 0x3f {
				j++
			}
			if j >= len(s) || s[j] < 0x40 || s[j] > 0x7e {
				return 0, false
			}
			i = j + 1
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(s[i:])
			if !narrowSymbol(r) {
				return 0, false
			}
			w, i = w+1, i+n
		default:
			return 0, false
		}
	}
	return w, true
}

// narrowSymbol reports whether r is one of the symbols deadletter draws that a terminal always shows one column
// wide, never as an emoji on its own.
func narrowSymbol(r rune) bool {
	switch r {
	case '…', '▸', '·', '↓', '↑', '→', '│', '─', '╭', '╮', '╰', '╯', '★', '▲':
		return true
	}
	return false
}

// Truncate cuts s to at most w columns, ending it with tail (counted in the w) when it had to cut; it never
// splits a grapheme cluster or an escape sequence.
func Truncate(s string, w int, tail string) string {
	if Width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, tail)
}

// Pad adds spaces to s up to w columns (s as it is when it is already as wide).
func Pad(s string, w int) string {
	if n := w - Width(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// Cell pads or cuts s (already printable) to exactly w columns, marking a cut with "…".
func Cell(s string, w int) string {
	if w <= 0 {
		return ""
	}
	return Pad(Truncate(s, w, "…"), w)
}

// ShortenMiddle cuts s (already printable) to at most w columns by replacing its middle with "…", keeping the
// start (the subscription) and the end (the GUID's tail), like kubectl and lazygit shorten paths.
func ShortenMiddle(s string, w int) string { return cutMiddle(s, w, w/2) }

// cutMiddle keeps up to head columns of s's start and fills the rest of w-1 columns from its end, around "…".
func cutMiddle(s string, w, head int) string {
	total := Width(s)
	switch {
	case total <= w:
		return s
	case w <= 0:
		return ""
	case w == 1:
		return "…"
	}
	keep := w - 1
	start := ansi.Truncate(s, min(head, keep), "")
	tail := ansi.TruncateLeft(s, total-(keep-Width(start)), "")
	for Width(start)+Width(tail) > keep && tail != "" { // a wide cluster at the cut: give up one more column
		tail = ansi.TruncateLeft(tail, 1, "")
	}
	return start + "…" + tail
}

// CellMiddle is Cell for names told apart by their end as much as their start (Undeliverable…BadRequest and
// Undeliverable…ClientError): too wide, it keeps both ends around "…".
func CellMiddle(s string, w int) string {
	if Width(s) <= w || w < 5 {
		return Cell(s, w)
	}
	return Pad(cutMiddle(s, w, (w-1)/2), w)
}

// SafeJSON rewrites, inside the strings of a valid JSON document, every character a terminal must not meet raw
// (NeedsEscape: DEL, C1 controls, bidirectional and other invisible format characters) as \uXXXX; what JSON
// itself escapes is already escaped. The document means the same to a parser; only how it prints changes.
func SafeJSON(doc []byte) []byte {
	var out []byte // nil until something needs rewriting
	in := false
	for i := 0; i < len(doc); {
		c := doc[i]
		switch {
		case in && c == '\\':
			// An escape: its next byte is part of it (\uXXXX's hex digits are plain ASCII and follow as they are).
			if out != nil {
				out = append(out, doc[i:min(i+2, len(doc))]...)
			}
			i += 2
			continue
		case c == '"':
			in = !in
		case in && c >= utf8.RuneSelf || in && c == 0x7f:
			r, size := utf8.DecodeRune(doc[i:])
			if NeedsEscape(r, size) {
				if out == nil {
					out = append(make([]byte, 0, len(doc)+16), doc[:i]...)
				}
				if r == utf8.RuneError && size == 1 {
					r = utf8.RuneError
				}
				out = appendU(out, r)
				i += size
				continue
			}
			if out != nil {
				out = append(out, doc[i:i+size]...)
			}
			i += size
			continue
		}
		if out != nil {
			out = append(out, doc[i])
		}
		i++
	}
	if out == nil {
		return doc
	}
	return out
}

func appendU(dst []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// AppendJSON appends s as a JSON string that is safe to print: besides what JSON requires (quote, backslash, C0
// controls), DEL, C1 controls, bidirectional controls, line and paragraph separators and other invisible format
// characters are written as \uXXXX, a lone surrogate held in WTF-8 as \udXXX, and any other invalid UTF-8 byte as
// \ufffd. Scripts decode the same text; a terminal showing the JSON never meets a control sequence.
func AppendJSON(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	u := func(dst []byte, r rune) []byte {
		return append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf && c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r == utf8.RuneError && size == 1:
			if sr, ok := surrogateAt(s, i); ok {
				dst = u(dst, sr)
				size = 3
			} else {
				dst = u(dst, utf8.RuneError)
			}
		case NeedsEscape(r, size):
			dst = u(dst, r)
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// nbHyphen stands in for a hyphen while text is wrapped: x/ansi's wrap breaks at every hyphen, and a name
// (PUSH-NOTIFICATIONS, a GUID, -is:handled) must never be cut in two at one.
const nbHyphen = '\u2011'

// Wrap wraps s (escape sequences kept) at limit cells, at spaces and the given breakpoints — never at a hyphen;
// a word longer than the line is cut where it must be.
func Wrap(s string, limit int, breakpoints string) string {
	if !strings.ContainsRune(s, '-') || strings.ContainsRune(s, nbHyphen) {
		return ansi.Wrap(s, limit, breakpoints)
	}
	out := ansi.Wrap(strings.ReplaceAll(s, "-", string(nbHyphen)), limit, strings.ReplaceAll(breakpoints, "-", ""))
	return strings.ReplaceAll(out, string(nbHyphen), "-")
}

// Hang wraps s at limit cells as Wrap does, its continuation lines indented by hang cells, so a list item's text
// stays under its start ("→ Drain it: …" wraps under "Drain"). A hang over half the line wraps flush.
func Hang(s string, limit, hang int, breakpoints string) []string {
	if hang <= 0 || hang > limit/2 || ansi.StringWidth(s) <= limit {
		return strings.Split(Wrap(s, limit, breakpoints), "\n")
	}
	first, _, _ := strings.Cut(Wrap(s, limit, breakpoints), "\n")
	rest, ok := strings.CutPrefix(s, first)
	if !ok { // (the first line is not the text's start as written: wrap it all under the hang)
		first, rest, _ = strings.Cut(Wrap(s, limit-hang, breakpoints), "\n")
	}
	out := []string{first}
	pad := strings.Repeat(" ", hang)
	for _, l := range strings.Split(Wrap(strings.TrimLeft(rest, " "), limit-hang, breakpoints), "\n") {
		out = append(out, pad+l)
	}
	return out
}
