package replay

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Printable makes untrusted text (blob names, payload fields) safe to put on a terminal: control characters,
// escape sequences, bidirectional overrides, line and paragraph separators and invalid UTF-8 are shown escaped
// (\x1b, \n, \u202e, \xff) instead of being passed through. Everything read from a blob goes through it.
func Printable(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if needsEscape(r, size) {
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
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r, size):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f: // C1 controls, including the 8-bit CSI
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e || r == 0x200f:
		return true // bidirectional controls that can make a name read as another
	case r == 0xfeff:
		return true
	}
	return !unicode.IsPrint(r) && !unicode.IsSpace(r) && unicode.Is(unicode.Cf, r)
}

// HumanDuration prints a duration the way an operator reads it: 3d4h, 5h12m, 42m, 30s; negative as "-5m".
func HumanDuration(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -d
	}
	var s string
	switch {
	case d >= 48*time.Hour:
		s = fmt.Sprintf("%dd%dh", d/(24*time.Hour), (d%(24*time.Hour))/time.Hour)
	case d >= time.Hour:
		s = fmt.Sprintf("%dh%dm", d/time.Hour, (d%time.Hour)/time.Minute)
	case d >= time.Minute:
		s = fmt.Sprintf("%dm", d/time.Minute)
	default:
		s = fmt.Sprintf("%ds", d/time.Second)
	}
	if neg {
		return "-" + s
	}
	return s
}
