package jsjson

import "unicode/utf8"

// decodeRune decodes the character at the start of b as the WHATWG UTF-8 decoder (and so Node's
// Buffer.toString("utf8")) does. A valid sequence yields its code point and length. Otherwise it yields -1 and
// the length of the maximal invalid subsequence, which the decoder replaces with a single U+FFFD: the lead byte
// plus every continuation byte that was still acceptable. utf8.DecodeRune consumes one byte per error instead,
// which would turn "E2 82 41" into two replacement characters where JavaScript has one.
func decodeRune[T ~string | ~[]byte](b T) (r rune, size int) {
	if len(b) == 0 {
		return -1, 0
	}
	c := b[0]
	if c < 0x80 {
		return rune(c), 1
	}
	need := 0
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c < 0xC2:
		return -1, 1
	case c < 0xE0:
		need, r = 1, rune(c&0x1F)
	case c < 0xF0:
		need, r = 2, rune(c&0x0F)
		if c == 0xE0 {
			lo = 0xA0
		} else if c == 0xED {
			hi = 0x9F
		}
	case c < 0xF5:
		need, r = 3, rune(c&0x07)
		if c == 0xF0 {
			lo = 0x90
		} else if c == 0xF4 {
			hi = 0x8F
		}
	default:
		return -1, 1
	}
	for i := 1; i <= need; i++ {
		if i >= len(b) || b[i] < lo || b[i] > hi {
			return -1, i
		}
		r = r<<6 | rune(b[i]&0x3F)
		lo, hi = 0x80, 0xBF
	}
	return r, need + 1
}

// DecodeUTF8 is Buffer.toString("utf8"): b decoded with each maximal invalid subsequence replaced by one U+FFFD.
// The result is valid UTF-8 (it never holds a surrogate).
func DecodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string(appendDecoded(make([]byte, 0, len(b)+len(b)/2), b))
}

// appendDecoded appends b to dst with the WHATWG replacement applied.
func appendDecoded(dst, b []byte) []byte {
	start := 0
	for i := 0; i < len(b); {
		if b[i] < 0x80 {
			i++
			continue
		}
		r, size := decodeRune(b[i:])
		if r >= 0 {
			i += size
			continue
		}
		dst = append(dst, b[start:i]...)
		dst = append(dst, "\uFFFD"...)
		i += size
		start = i
	}
	return append(dst, b[start:]...)
}

// appendWTF8 appends r in generalized UTF-8, which unlike utf8.AppendRune keeps a surrogate as itself: a
// JavaScript string may hold one, and replacing it would change what JSON.stringify prints.
func appendWTF8(dst []byte, r rune) []byte {
	if r >= 0xD800 && r <= 0xDFFF {
		return append(dst, 0xED, byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
	}
	return utf8.AppendRune(dst, r)
}

// surrogateAt reports the surrogate whose generalized 3-byte encoding starts at s[i], if one does.
func surrogateAt[T ~string | ~[]byte](s T, i int) (rune, bool) {
	if i < 0 || i+2 >= len(s) || s[i] != 0xED || s[i+1] < 0xA0 || s[i+1] > 0xBF || s[i+2] < 0x80 || s[i+2] > 0xBF {
		return 0, false
	}
	return 0xD000 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), true
}

// Surrogate reports whether the generalized UTF-8 encoding of a lone surrogate (U+D800..U+DFFF, 3 bytes)
// starts at s[i], and which one. Display code needs it because such a string is not valid UTF-8 and a terminal
// must be shown the escape \udXXX that JSON.stringify would print instead of the raw bytes.
func Surrogate(s string, i int) (r rune, ok bool) {
	return surrogateAt(s, i)
}

// DecodeRune decodes the first character of a WTF-8 string such as Value.Str returns: a lone surrogate is
// returned as its code unit (U+D800..U+DFFF) with size 3; a byte sequence that is not even generalized UTF-8
// (possible only for strings that did not come from this package) is utf8.RuneError with the length of its
// maximal invalid subsequence, as the WHATWG decoder would consume it. An empty s gives (utf8.RuneError, 0).
func DecodeRune(s string) (r rune, size int) {
	if r, ok := surrogateAt(s, 0); ok {
		return r, 3
	}
	r, size = decodeRune(s)
	if r < 0 {
		r = utf8.RuneError
	}
	return r, size
}
