package jsjson

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"
)

// checkAgreement verifies, for one input, that the fast path (Scan, Fields, Unquote) tells the same story as
// Parse: same verdict, same error, same depth, same elements, same members with last-duplicate-wins.
func checkAgreement(t *testing.T, doc []byte) {
	t.Helper()
	res, serr := Scan(doc)
	v, perr := Parse(doc)
	if (serr == nil) != (perr == nil) {
		t.Fatalf("%q: Scan says %v, Parse says %v", doc, serr, perr)
	}
	if perr != nil {
		var ps, ss *SyntaxError
		if !errors.As(perr, &ps) || !errors.As(serr, &ss) || *ps != *ss {
			t.Fatalf("%q: Scan error %v, Parse error %v", doc, serr, perr)
		}
		if ps.Offset < 0 || ps.Offset > int64(len(doc)) {
			t.Fatalf("%q: offset %d outside the input", doc, ps.Offset)
		}
		return
	}
	// Scan's depth is that of the text; a duplicate key can discard a deeper value than the one JSON.parse keeps.
	if res.TopKind != v.Kind() || res.Depth != textDepth(doc) || res.Depth < Depth(v) {
		t.Fatalf("%q: Scan kind %v depth %d, Parse kind %v depth %d, text depth %d",
			doc, res.TopKind, res.Depth, v.Kind(), Depth(v), textDepth(doc))
	}
	var elems []*Value
	if v.Kind() == Array {
		if len(res.Elements) != v.Len() {
			t.Fatalf("%q: Scan found %d elements, Parse %d", doc, len(res.Elements), v.Len())
		}
		for i, sp := range res.Elements {
			raw := doc[sp.Start:sp.End]
			ev, err := Parse(raw)
			if err != nil || !bytes.Equal(Stringify(ev), Stringify(v.Index(i))) {
				t.Fatalf("%q: element %d span %q parses to %v / %v", doc, i, raw, ev, err)
			}
			if len(raw) > 0 && (isSpace[raw[0]] || isSpace[raw[len(raw)-1]]) {
				t.Fatalf("%q: element %d span %q is not trimmed", doc, i, raw)
			}
			elems = append(elems, v.Index(i))
		}
	} else if len(res.Elements) != 0 {
		t.Fatalf("%q: elements reported for a %v", doc, v.Kind())
	}

	// Fields on the top-level object and on every object element, against Members.
	check := func(raw []byte, obj *Value) {
		if obj.Kind() != Object {
			return
		}
		got := map[string][]byte{}
		var order []string
		Fields(raw, func(key string, val []byte) {
			if _, ok := got[key]; !ok {
				order = append(order, key)
			}
			got[key] = val // the last duplicate wins, as in JSON.parse
		})
		if len(got) != obj.Len() {
			t.Fatalf("%q: Fields saw %d distinct keys, Parse %d", raw, len(got), obj.Len())
		}
		for _, m := range obj.Members() {
			val, ok := got[m.Key]
			if !ok {
				t.Fatalf("%q: Fields never saw key %q", raw, m.Key)
			}
			fv, err := Parse(val)
			if err != nil || !bytes.Equal(Stringify(fv), Stringify(m.Val)) {
				t.Fatalf("%q: key %q: Fields value %q, Parse value %s", raw, m.Key, val, Stringify(m.Val))
			}
			if m.Val.Kind() == String && Unquote(val) != m.Val.Str() {
				t.Fatalf("%q: Unquote(%q) = %q, Parse %q", raw, val, Unquote(val), m.Val.Str())
			}
		}
		// Non-index keys keep the order of their first appearance.
		var named []string
		for _, k := range order {
			if _, isIndex := arrayIndex(k); !isIndex {
				named = append(named, k)
			}
		}
		j := 0
		for _, m := range obj.Members() {
			if _, isIndex := arrayIndex(m.Key); !isIndex {
				if m.Key != named[j] {
					t.Fatalf("%q: member %q out of order, expected %q", raw, m.Key, named[j])
				}
				j++
			}
		}
	}
	if v.Kind() == Object {
		check(doc, v)
	}
	for i, e := range elems {
		check(doc[res.Elements[i].Start:res.Elements[i].End], e)
	}
	if v.Kind() == String {
		tok := bytes.TrimLeft(bytes.TrimRight(doc, " \t\r\n"), " \t\r\n")
		if Unquote(tok) != v.Str() {
			t.Fatalf("%q: Unquote %q, Parse %q", doc, Unquote(tok), v.Str())
		}
	}
}

func TestScanAgreesWithParse(t *testing.T) {
	t.Parallel()
	docs := corpus(3, 20000)
	valid := 0
	for _, doc := range docs {
		checkAgreement(t, doc)
		if _, err := Scan(doc); err == nil {
			valid++
		}
	}
	t.Logf("%d documents, %d valid", len(docs), valid)
}

// The examples the product spec gives for Buffer.toString, and a few more in the same spirit; the node
// differential test covers the rest.
func TestDecodeUTF8SpecExamples(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"\xe2\x82\x41":     "\uFFFDA",
		"\xf0\x90\x80\x78": "\uFFFDx",
		"\xed\xa0\x80":     "\uFFFD\uFFFD\uFFFD",
		"\xc0\x80":         "\uFFFD\uFFFD",
		"\xff":             "\uFFFD",
		"\xe2\x82":         "\uFFFD",
		"\xf4\x90\x80\x80": "\uFFFD\uFFFD\uFFFD\uFFFD",
		"a\xc3\xa9\xa9b":   "aé\uFFFDb",
	} {
		if got := DecodeUTF8([]byte(in)); got != want {
			t.Errorf("DecodeUTF8(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSurrogateAndWTF8(t *testing.T) {
	t.Parallel()
	v, err := Parse([]byte(`"a\uD800b\uDBFF\uDC00\uDFFF"`))
	if err != nil {
		t.Fatal(err)
	}
	s := v.Str()
	if s != "a\xed\xa0\x80b\U0010FC00\xed\xbf\xbf" {
		t.Fatalf("WTF-8 = % x", s)
	}
	var units []rune
	for i := 0; i < len(s); {
		if r, ok := Surrogate(s, i); ok {
			units = append(units, r)
			i += 3
			continue
		}
		r, size := DecodeRune(s[i:])
		if r >= 0xD800 && r <= 0xDFFF {
			t.Fatalf("DecodeRune found a surrogate Surrogate missed at %d", i)
		}
		i += size
	}
	if len(units) != 2 || units[0] != 0xD800 || units[1] != 0xDFFF {
		t.Fatalf("Surrogate found %U", units)
	}
	if r, size := DecodeRune(s[1:]); r != 0xD800 || size != 3 {
		t.Fatalf("DecodeRune(lone surrogate) = %U, %d", r, size)
	}
	if got := string(Stringify(v)); got != `"a\ud800b`+"\U0010FC00"+`\udfff"` {
		t.Fatalf("Stringify = %q", got)
	}
	// A pair split into two generalized encodings (never made by Parse) is one character to JavaScript.
	if got := string(AppendString(nil, "\xed\xa0\xbd\xed\xb8\x80")); got != "\"😀\"" {
		t.Fatalf("AppendString(split pair) = %q", got)
	}
	if got := string(AppendString(nil, "x\xffy")); got != "\"x\uFFFDy\"" || !utf8.ValidString(got) {
		t.Fatalf("AppendString(invalid) = %q", got)
	}
}

// Fields and Unquote are documented to take validated text, but must not panic on anything else.
func TestFastPathNeverPanics(t *testing.T) {
	t.Parallel()
	for _, doc := range corpus(4, 3000) {
		Fields(doc, func(string, []byte) {})
		Unquote(doc)
		for i := range doc {
			Fields(doc[i:], func(string, []byte) {})
			Unquote(doc[i:])
		}
	}
}

func TestValueAccessors(t *testing.T) {
	t.Parallel()
	v, err := Parse([]byte(`{"b":[1,"x",true,null,{}],"a":-0,"2":false,"1":1e400}`))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range v.Members() {
		keys = append(keys, m.Key)
	}
	if got := string(bytes.Join(func() (b [][]byte) {
		for _, k := range keys {
			b = append(b, []byte(k))
		}
		return
	}(), []byte(","))); got != "1,2,b,a" {
		t.Fatalf("member order %s", got)
	}
	b, ok := v.Get("b")
	if !ok || b.Kind() != Array || b.Len() != 5 || b.Index(0).Num() != 1 || b.Index(1).Str() != "x" ||
		!b.Index(2).Bool() || b.Index(3).Kind() != Null || b.Index(4).Kind() != Object || b.Index(5) != nil {
		t.Fatalf("array accessors wrong: %s", Stringify(b))
	}
	if a, _ := v.Get("a"); a.Num() != 0 || !signbit(a.Num()) {
		t.Fatalf("-0 lost its sign")
	}
	if _, ok := v.Get("c"); ok {
		t.Fatal("Get found a missing key")
	}
	var nilV *Value
	if nilV.Kind() != Null || nilV.Len() != 0 || nilV.Str() != "" || nilV.Index(0) != nil || nilV.Members() != nil {
		t.Fatal("nil *Value is not a quiet null")
	}
	if got := string(Stringify(nil)); got != "null" {
		t.Fatalf("Stringify(nil) = %s", got)
	}
	if Depth(nil) != 0 {
		t.Fatal("Depth(nil)")
	}
}

func signbit(f float64) bool { return 1/f < 0 }

// textDepth counts bracket nesting in valid JSON text, the dumb way, as an independent check of Scan.
func textDepth(doc []byte) int {
	depth, maxDepth, inString := 0, 0, false
	for i := 0; i < len(doc); i++ {
		switch c := doc[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			maxDepth = max(maxDepth, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return maxDepth
}
