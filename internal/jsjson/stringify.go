package jsjson

import (
	"math"
	"strconv"
)

// Stringify is JSON.stringify(v), compact.
func Stringify(v *Value) []byte { return AppendStringify(nil, v) }

// AppendStringify appends JSON.stringify(v) to dst: compact, members in enumeration order, numbers as
// Number::toString, NaN and ±Infinity as null, strings per the well-formed JSON.stringify of ES2019.
//
// It walks with a heap stack, so it succeeds at any depth. V8's JSON.stringify recurses and throws
// "RangeError: Maximum call stack size exceeded" at roughly 4,000 levels (4185 for arrays with Node 20's
// default stack); a caller predicting the estate must compare Depth against that itself.
func AppendStringify(dst []byte, v *Value) []byte {
	type frame struct {
		v *Value
		i int
	}
	var st stack[frame]
	for {
		switch v.Kind() {
		case Null:
			dst = append(dst, "null"...)
		case Bool:
			if v.Bool() {
				dst = append(dst, "true"...)
			} else {
				dst = append(dst, "false"...)
			}
		case Number:
			if f := v.Num(); math.IsInf(f, 0) || math.IsNaN(f) {
				dst = append(dst, "null"...)
			} else {
				dst = appendNumber(dst, f)
			}
		case String:
			dst = AppendString(dst, v.Str())
		case Array:
			if v.Len() == 0 {
				dst = append(dst, "[]"...)
				break
			}
			dst = append(dst, '[')
			st.push(frame{v, 0})
			v = v.Index(0)
			continue
		case Object:
			if v.Len() == 0 {
				dst = append(dst, "{}"...)
				break
			}
			m := v.Members()[0]
			dst = AppendString(append(dst, '{'), m.Key)
			dst = append(dst, ':')
			st.push(frame{v, 0})
			v = m.Val
			continue
		}
		// v is written out: close every container it finished, then move to the next sibling.
		for {
			if st.len() == 0 {
				return dst
			}
			top := st.top()
			top.i++
			if top.i < top.v.Len() {
				dst = append(dst, ',')
				if top.v.kind == Array {
					v = top.v.Index(top.i)
				} else {
					m := top.v.Members()[top.i]
					dst = append(AppendString(dst, m.Key), ':')
					v = m.Val
				}
				break
			}
			if top.v.kind == Array {
				dst = append(dst, ']')
			} else {
				dst = append(dst, '}')
			}
			st.pop()
		}
	}
}

const hexDigits = "0123456789abcdef"

// escapes gives, for each ASCII byte, 0 when JSON.stringify writes it as is, the letter of its short escape,
// or 'u' for \u00XX.
var escapes = func() (t [128]byte) {
	for c := 0; c < 0x20; c++ {
		t[c] = 'u'
	}
	t['\b'], t['\t'], t['\n'], t['\f'], t['\r'] = 'b', 't', 'n', 'f', 'r'
	t['"'], t['\\'] = '"', '\\'
	return t
}()

// AppendString appends JSON.stringify(s) for a WTF-8 string s. Well-formed JSON.stringify (ES2019) escapes
// lone surrogates as \udXXX (lowercase hex) and leaves everything else above U+001F alone, U+2028, U+2029, DEL
// and '/' included, so the output is valid UTF-8. Two adjacent surrogate encodings that form a pair (never
// produced by this package) are written as the one character they are in JavaScript; bytes that are not even
// generalized UTF-8 are written as U+FFFD, as they would have been decoded.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			e := escapes[c]
			if e == 0 {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			if e == 'u' {
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			} else {
				dst = append(dst, '\\', e)
			}
			i++
			start = i
			continue
		}
		if r, ok := surrogateAt(s, i); ok {
			dst = append(dst, s[start:i]...)
			if lo, ok := surrogateAt(s, i+3); ok && r < 0xDC00 && lo >= 0xDC00 {
				dst = appendWTF8(dst, 0x10000+(r-0xD800)<<10+(lo-0xDC00))
				i += 6
			} else {
				dst = append(dst, '\\', 'u', 'd', hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
				i += 3
			}
			start = i
			continue
		}
		r, size := decodeRune(s[i:])
		if r < 0 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			start = i + size
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// FormatNumber is ECMAScript Number::toString(f) (String(f) in JavaScript): the shortest digits that round-trip,
// in decimal notation when 1e-7 ≤ |f| < 1e21 and as d.ddde±x otherwise; -0 is "0".
func FormatNumber(f float64) string { return string(appendNumber(nil, f)) }

func appendNumber(dst []byte, f float64) []byte {
	switch {
	case f != f:
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		return append(dst, '0')
	case f == math.Trunc(f) && math.Abs(f) < 1<<53:
		// Below 2^53 every integer is exact and needs all its digits to round-trip.
		return strconv.AppendInt(dst, int64(f), 10)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Go's shortest formatting picks the same digits as ECMAScript: the fewest that round-trip, closest to f.
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d[.ddd]e±XX
	var digits [20]byte
	k := 0
	j := 0
	for ; e[j] != 'e'; j++ {
		if e[j] != '.' {
			digits[k] = e[j]
			k++
		}
	}
	exp, _ := strconv.Atoi(string(e[j+1:]))
	n := exp + 1 // the decimal point sits after n digits
	d := digits[:k]
	switch {
	case k <= n && n <= 21:
		dst = append(dst, d...)
		for ; n > k; n-- {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, d[:n]...)
		dst = append(dst, '.')
		dst = append(dst, d[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for ; n < 0; n++ {
			dst = append(dst, '0')
		}
		dst = append(dst, d...)
	default:
		dst = append(dst, d[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, d[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}
