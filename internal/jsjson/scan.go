package jsjson

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// SyntaxError is a JSON.parse failure. Offset counts bytes of the original input (not UTF-16 units of the
// decoded string, as V8's messages do), so that it can be shown against the blob as stored.
type SyntaxError struct {
	// Offset is the offset of the first byte of the offending character, or the input's length when the
	// input ends too early.
	Offset int64
	Msg    string
}

func (e *SyntaxError) Error() string {
	return "JSON syntax error at byte offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Msg
}

// Span is a half-open byte range [Start, End) of the input.
type Span struct{ Start, End int }

// ScanResult is what Scan learns without building a tree.
type ScanResult struct {
	// TopKind is the kind of the top-level value, judged from its first byte (meaningless on most failures).
	TopKind Kind
	// Elements are the spans of the top-level array's elements, without surrounding whitespace; empty unless
	// TopKind is Array. On failure they are the elements completed before the error.
	Elements []Span
	// Depth is the maximum nesting (as Depth counts it) of the text, over the part read before any error. It
	// equals Depth(Parse(b)) except when a duplicate key discards a value nested deeper than everything kept:
	// JSON.parse still had to build that value, so a blob is as deep as its text says.
	Depth int
}

// Scan validates b exactly as JSON.parse(Buffer.from(b).toString("utf8")) would, without building anything:
// it runs on every blob during hydration. On failure the error is a *SyntaxError with the same offset and
// message Parse reports (Parse runs this very validator first).
func Scan(b []byte) (ScanResult, error) {
	var buf [8]Span
	top, depth, spans, err := scan(b, buf[:0], true)
	res := ScanResult{TopKind: top, Depth: depth}
	if len(spans) > 0 {
		res.Elements = make([]Span, len(spans))
		copy(res.Elements, spans)
	}
	if err != nil {
		return res, err
	}
	return res, nil
}

var (
	// isSpace holds JSON's four whitespace bytes; JSON.parse accepts nothing else (no U+00A0, no U+FEFF).
	isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}
	// strStop marks the bytes that end a run of ordinary string content.
	strStop = func() (t [256]bool) {
		for c := 0; c < 0x20; c++ {
			t[c] = true
		}
		t['"'], t['\\'] = true, true
		return t
	}()
	// structural marks the bytes a skip over validated text must look at.
	structural = [256]bool{'"': true, '[': true, ']': true, '{': true, '}': true}
	// scalarEnd marks the bytes that can follow a number or literal in valid JSON.
	scalarEnd = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, ',': true, ']': true, '}': true}
)

func skipWS(b []byte, i int) int {
	for i < len(b) && isSpace[b[i]] {
		i++
	}
	return i
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// zeroBytes flags (in bit 7 of each byte) the bytes of x that are zero. Only the lowest flag is exact (a
// borrow can flag a byte above a true match), which is all the callers use.
func zeroBytes(x uint64) uint64 { return (x - lsb) &^ x & msb }

// stringStops flags the lowest byte of w that is '"', '\\' or a control character, eight bytes at a time:
// string contents are most of a dead letter and this is where Scan spends its time.
func stringStops(w uint64) uint64 {
	return zeroBytes(w^(lsb*'"')) | zeroBytes(w^(lsb*'\\')) | ((w - lsb*0x20) &^ w & msb)
}

// quoteOrBackslash flags the lowest byte of w that is '"' or '\\'.
func quoteOrBackslash(w uint64) uint64 {
	return zeroBytes(w^(lsb*'"')) | zeroBytes(w^(lsb*'\\'))
}

func kindOfByte(c byte) Kind {
	switch {
	case c == '[':
		return Array
	case c == '{':
		return Object
	case c == '"':
		return String
	case c == 't' || c == 'f':
		return Bool
	case c == '-' || c-'0' < 10:
		return Number
	}
	return Null
}

// scan is the one validator behind Scan and Parse, so that both report the same errors by construction. It is
// a goto state machine over an explicit bit stack (one bit per open container: object or array) because the
// input may nest tens of millions of levels deep. With wantSpans it records the top-level array's elements.
func scan(b []byte, spans []Span, wantSpans bool) (top Kind, maxLevel int, _ []Span, err *SyntaxError) {
	var (
		n                = len(b)
		i, level, start  int
		inObj, rootArray bool
		stackBuf         [4]uint64
		stack            = stackBuf[:]
		c                byte
	)
	i = skipWS(b, 0)
	if i < n {
		top = kindOfByte(b[i])
		rootArray = wantSpans && b[i] == '['
	}
value:
	if i >= n {
		return top, maxLevel, spans, endOfInput(n)
	}
	if rootArray && level == 1 {
		start = i
	}
	c = b[i]
	switch {
	case c == '"':
		if i, err = scanString(b, i); err != nil {
			return top, maxLevel, spans, err
		}
	case c == '[' || c == '{':
		if level>>6 >= len(stack) {
			stack = append(stack, 0)
		}
		inObj = c == '{'
		if inObj {
			stack[level>>6] |= 1 << (level & 63)
		} else {
			stack[level>>6] &^= 1 << (level & 63)
		}
		level++
		if level > maxLevel {
			maxLevel = level
		}
		i = skipWS(b, i+1)
		if i < n && b[i] == c+2 { // ']' is '['+2 and '}' is '{'+2
			i++
			goto pop
		}
		if inObj {
			goto key
		}
		goto value
	case c == '-' || c-'0' < 10:
		if i, err = scanNumber(b, i); err != nil {
			return top, maxLevel, spans, err
		}
	case c == 't':
		if i, err = scanLiteral(b, i, "true"); err != nil {
			return top, maxLevel, spans, err
		}
	case c == 'f':
		if i, err = scanLiteral(b, i, "false"); err != nil {
			return top, maxLevel, spans, err
		}
	case c == 'n':
		if i, err = scanLiteral(b, i, "null"); err != nil {
			return top, maxLevel, spans, err
		}
	default:
		return top, maxLevel, spans, unexpected(b, i, "a value")
	}
after:
	if level == 0 {
		if i = skipWS(b, i); i < n {
			return top, maxLevel, spans, &SyntaxError{int64(i), "unexpected data after the JSON value"}
		}
		return top, maxLevel, spans, nil
	}
	if rootArray && level == 1 {
		spans = append(spans, Span{start, i})
	}
	if i = skipWS(b, i); i >= n {
		return top, maxLevel, spans, endOfInput(n)
	}
	switch b[i] {
	case ',':
		i = skipWS(b, i+1)
		if inObj {
			goto key
		}
		goto value
	case ']':
		if !inObj {
			i++
			goto pop
		}
	case '}':
		if inObj {
			i++
			goto pop
		}
	}
	if inObj {
		return top, maxLevel, spans, unexpected(b, i, "',' or '}'")
	}
	return top, maxLevel, spans, unexpected(b, i, "',' or ']'")
pop:
	level--
	inObj = level > 0 && stack[(level-1)>>6]>>((level-1)&63)&1 != 0
	goto after
key:
	if i >= n {
		return top, maxLevel, spans, endOfInput(n)
	}
	if b[i] != '"' {
		return top, maxLevel, spans, unexpected(b, i, "a double-quoted property name")
	}
	if i, err = scanString(b, i); err != nil {
		return top, maxLevel, spans, err
	}
	if i = skipWS(b, i); i >= n {
		return top, maxLevel, spans, endOfInput(n)
	}
	if b[i] != ':' {
		return top, maxLevel, spans, unexpected(b, i, "':'")
	}
	i = skipWS(b, i+1)
	goto value
}

// scanString validates the string token starting at b[i] == '"' and returns the offset just past it. Invalid
// UTF-8 is not an error inside a string (the decoder has already turned it into U+FFFD), so the only checks
// are the escapes and raw control characters.
func scanString(b []byte, i int) (int, *SyntaxError) {
	n := len(b)
	i++
	for {
		for i+8 <= n {
			if m := stringStops(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto stop
			}
			i += 8
		}
		for i < n && !strStop[b[i]] {
			i++
		}
		if i >= n {
			return n, &SyntaxError{int64(n), "unterminated string"}
		}
	stop:
		switch c := b[i]; c {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 >= n {
				return n, &SyntaxError{int64(n), "unterminated string"}
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for j := i + 2; j < i+6; j++ {
					if j >= n {
						return n, &SyntaxError{int64(n), "unterminated string"}
					}
					if unhex(b[j]) < 0 {
						return j, &SyntaxError{int64(j), "bad escape \\u" + string(b[i+2:j]) + ": " + describe(b, j) + " is not a hex digit"}
					}
				}
				i += 6
			default:
				if e := b[i+1]; e > ' ' && e < 0x7F {
					return i + 1, &SyntaxError{int64(i + 1), "bad escape \\" + string(e)}
				}
				return i + 1, &SyntaxError{int64(i + 1), "bad escape: backslash before " + describe(b, i+1)}
			}
		default:
			return i, &SyntaxError{int64(i), "control character " + uPlus(rune(c)) + " in a string"}
		}
	}
}

func unhex(c byte) int {
	switch {
	case c-'0' < 10:
		return int(c - '0')
	case c-'a' < 6:
		return int(c-'a') + 10
	case c-'A' < 6:
		return int(c-'A') + 10
	}
	return -1
}

// scanNumber validates the number token starting at b[i] (a '-' or a digit) and returns the offset past it.
// A leading zero ends the number ("01" is 0 followed by stray data), as in JSON.parse.
func scanNumber(b []byte, i int) (int, *SyntaxError) {
	n := len(b)
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= n:
		return n, endOfInput(n)
	case b[i] == '0':
		i++
	case b[i]-'1' < 9:
		for i++; i < n && b[i]-'0' < 10; i++ {
		}
	default:
		return i, unexpected(b, i, "a digit")
	}
	if i < n && b[i] == '.' {
		if i++; i >= n {
			return n, endOfInput(n)
		}
		if b[i]-'0' >= 10 {
			return i, unexpected(b, i, "a digit")
		}
		for i++; i < n && b[i]-'0' < 10; i++ {
		}
	}
	if i < n && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < n && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= n {
			return n, endOfInput(n)
		}
		if b[i]-'0' >= 10 {
			return i, unexpected(b, i, "a digit")
		}
		for i++; i < n && b[i]-'0' < 10; i++ {
		}
	}
	return i, nil
}

func scanLiteral(b []byte, i int, lit string) (int, *SyntaxError) {
	for j := 1; j < len(lit); j++ {
		if i+j >= len(b) {
			return len(b), endOfInput(len(b))
		}
		if b[i+j] != lit[j] {
			return i + j, unexpected(b, i+j, strconv.Quote(lit))
		}
	}
	return i + len(lit), nil
}

func endOfInput(n int) *SyntaxError { return &SyntaxError{int64(n), "unexpected end of input"} }

func unexpected(b []byte, i int, want string) *SyntaxError {
	if i >= len(b) {
		return endOfInput(len(b))
	}
	msg := "unexpected character " + describe(b, i)
	if i == 0 && len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		msg += " (a byte order mark; JSON.parse refuses it)"
	} else if want != "" {
		msg += ", expected " + want
	}
	return &SyntaxError{int64(i), msg}
}

// describe names the character at b[i] for an error message, saying when the bytes there are not UTF-8 at all
// (JavaScript sees U+FFFD there).
func describe(b []byte, i int) string {
	c := b[i]
	if c > ' ' && c < 0x7F {
		return "'" + string(c) + "'"
	}
	r, size := decodeRune(b[i:])
	if r < 0 {
		s := "byte"
		if size > 1 {
			s = "bytes"
		}
		for _, x := range b[i : i+size] {
			s += " 0x" + strconv.FormatUint(uint64(x)|0x100, 16)[1:]
		}
		return s + " (invalid UTF-8, read as U+FFFD)"
	}
	if r >= 0xA0 && r != 0xFEFF && r != 0x2028 && r != 0x2029 && utf8.ValidRune(r) {
		return uPlus(r) + " '" + string(r) + "'"
	}
	return uPlus(r)
}

func uPlus(r rune) string {
	s := strconv.FormatUint(uint64(r), 16)
	for len(s) < 4 {
		s = "0" + s
	}
	return "U+" + toUpperHex(s)
}

func toUpperHex(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// stringEnd returns the offset of the quote closing a string whose contents start at b[i] (len(b) if there is
// none) and whether the contents may need decoding: an escape, or a byte above 0x7F (reported conservatively:
// bytes just past the quote can set it). It trusts that the text was validated.
func stringEnd(b []byte, i int) (end int, special bool) {
	n := len(b)
	var high uint64
	for {
		for i+8 <= n {
			w := binary.LittleEndian.Uint64(b[i:])
			high |= w
			if m := quoteOrBackslash(w); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto stop
			}
			i += 8
		}
		for i < n && b[i] != '"' && b[i] != '\\' {
			high |= uint64(b[i])
			i++
		}
		if i >= n {
			return n, special || high&msb != 0
		}
	stop:
		if b[i] == '"' {
			return i, special || high&msb != 0
		}
		special = true
		i += 2
		if i > n {
			return n, true
		}
	}
}

// skipValue returns the offset just past the validated value starting at b[i].
func skipValue(b []byte, i int) int {
	n := len(b)
	if i >= n {
		return n
	}
	switch b[i] {
	case '"':
		end, _ := stringEnd(b, i+1)
		return min(end+1, n)
	case '[', '{':
		depth := 0
		for i < n {
			for i < n && !structural[b[i]] {
				i++
			}
			if i >= n {
				break
			}
			switch b[i] {
			case '"':
				end, _ := stringEnd(b, i+1)
				i = end + 1
				continue
			case '[', '{':
				depth++
			default:
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return n
	}
	for i < n && !scalarEnd[b[i]] {
		i++
	}
	return i
}

// Fields calls visit for each top-level member of the object whose validated text is obj (an element span
// from Scan, say), in source order, with the decoded key (WTF-8, escapes resolved, invalid UTF-8 replaced as
// JavaScript does) and the raw value bytes. Duplicate keys are all visited; JSON.parse keeps the last value, so
// should the caller. Common Event Grid and CloudEvents keys come back without allocating. On text that is not
// a valid object Fields stops quietly at the first surprise; it never panics.
func Fields(obj []byte, visit func(key string, val []byte)) {
	n := len(obj)
	i := skipWS(obj, 0)
	if i >= n || obj[i] != '{' {
		return
	}
	i = skipWS(obj, i+1)
	for i < n && obj[i] == '"' {
		end, special := stringEnd(obj, i+1)
		if end >= n {
			return
		}
		key := keyString(obj[i+1:end], special)
		if i = skipWS(obj, end+1); i >= n || obj[i] != ':' {
			return
		}
		i = skipWS(obj, i+1)
		vEnd := skipValue(obj, i)
		if vEnd <= i {
			return
		}
		visit(key, obj[i:vEnd])
		if i = skipWS(obj, vEnd); i >= n || obj[i] != ',' {
			return
		}
		i = skipWS(obj, i+1)
	}
}

// knownKey interns the property names of Event Grid and CloudEvents dead letters, so that Fields, run on every
// event of every blob during hydration, does not allocate them. A switch on string(raw) neither allocates nor
// hashes, and beats a map lookup here.
func knownKey(raw []byte) (string, bool) {
	switch string(raw) {
	case "id":
		return "id", true
	case "subject":
		return "subject", true
	case "eventType":
		return "eventType", true
	case "dataVersion":
		return "dataVersion", true
	case "data":
		return "data", true
	case "metadataVersion":
		return "metadataVersion", true
	case "eventTime":
		return "eventTime", true
	case "topic":
		return "topic", true
	case "deadLetterReason":
		return "deadLetterReason", true
	case "deliveryAttempts":
		return "deliveryAttempts", true
	case "lastDeliveryOutcome":
		return "lastDeliveryOutcome", true
	case "lastHttpStatusCode":
		return "lastHttpStatusCode", true
	case "publishTime":
		return "publishTime", true
	case "lastDeliveryAttemptTime":
		return "lastDeliveryAttemptTime", true
	case "specversion":
		return "specversion", true
	case "type":
		return "type", true
	case "source":
		return "source", true
	case "time":
		return "time", true
	case "datacontenttype":
		return "datacontenttype", true
	case "dataschema":
		return "dataschema", true
	case "data_base64":
		return "data_base64", true
	}
	return "", false
}

// keyString returns raw decoded; special says it may hold escapes or non-ASCII bytes.
func keyString(raw []byte, special bool) string {
	if !special {
		if k, ok := knownKey(raw); ok {
			return k
		}
		return string(raw)
	}
	return string(appendUnquoted(make([]byte, 0, len(raw)+8), raw))
}

// Unquote decodes one raw JSON string token, quotes included, to WTF-8 as JSON.parse would: escapes resolved,
// escaped surrogate pairs combined, lone surrogates kept, invalid UTF-8 replaced per WHATWG. A token that is
// not valid JSON gets a best effort (a malformed escape is kept literally); it never panics.
func Unquote(tok []byte) string {
	if len(tok) > 0 && tok[0] == '"' {
		tok = tok[1:]
		if len(tok) > 0 && tok[len(tok)-1] == '"' {
			tok = tok[:len(tok)-1]
		}
	}
	if bytes.IndexByte(tok, '\\') >= 0 {
		return string(appendUnquoted(make([]byte, 0, len(tok)), tok))
	}
	if utf8.Valid(tok) {
		return string(tok)
	}
	return string(appendDecoded(make([]byte, 0, len(tok)+8), tok))
}

// appendUnquoted appends the decoded contents of a string token (without its quotes) to dst.
func appendUnquoted(dst, s []byte) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 && c != '\\' {
			i++
			continue
		}
		if c >= 0x80 {
			r, size := decodeRune(s[i:])
			if r < 0 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\uFFFD"...)
				start = i + size
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		if i+1 >= len(s) {
			start = i // a lone trailing backslash: keep it
			break
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			dst = append(dst, e)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(s, i+2)
			if r < 0 {
				start = i // malformed: keep the backslash and go on as if it were ordinary text
				i++
				continue
			}
			i += 6
			if r >= 0xD800 && r < 0xDC00 && i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
				if lo := hex4(s, i+2); lo >= 0xDC00 && lo < 0xE000 {
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
					i += 6
				}
			}
			dst = appendWTF8(dst, r)
			start = i
			continue
		default:
			start = i
			i++
			continue
		}
		i += 2
		start = i
	}
	return append(dst, s[start:]...)
}

// hex4 returns the value of the four hex digits at s[i:], or -1.
func hex4(s []byte, i int) rune {
	if i+4 > len(s) {
		return -1
	}
	var r rune
	for _, c := range s[i : i+4] {
		d := unhex(c)
		if d < 0 {
			return -1
		}
		r = r<<4 | rune(d)
	}
	return r
}
