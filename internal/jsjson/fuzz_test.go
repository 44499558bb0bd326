package jsjson

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

func addSeeds(f *testing.F) {
	for _, doc := range corpus(5, 300) {
		f.Add(doc)
	}
	f.Add(nestedArrays(100))
	f.Add(mixedNesting(50))
	f.Add(realisticBlob())
}

// FuzzParse: Parse never panics, its output is a fixed point (Parse∘Stringify∘Parse = Parse), and Scan, Fields
// and Unquote agree with it.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgreement(t, data)
		v, err := Parse(data)
		if err != nil {
			return
		}
		out := Stringify(v)
		if !utf8.Valid(out) {
			t.Fatalf("%q: Stringify produced invalid UTF-8 %q", data, out)
		}
		v2, err := Parse(out)
		if err != nil {
			t.Fatalf("%q: Stringify gave %q, which does not parse: %v", data, out, err)
		}
		if out2 := Stringify(v2); !bytes.Equal(out, out2) {
			t.Fatalf("%q: not stable: %q then %q", data, out, out2)
		}
		if Depth(v2) != Depth(v) {
			t.Fatalf("%q: depth %d after a round trip, %d before", data, Depth(v2), Depth(v))
		}
	})
}

// FuzzRaw feeds arbitrary bytes to everything that takes them, validated or not: nothing may panic, and the
// string helpers must keep their invariants.
func FuzzRaw(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		Fields(data, func(string, []byte) {})
		u := Unquote(data)
		d := DecodeUTF8(data)
		if !utf8.ValidString(d) {
			t.Fatalf("DecodeUTF8(%q) = %q is not valid UTF-8", data, d)
		}
		if utf8.Valid(data) && d != string(data) {
			t.Fatalf("DecodeUTF8 changed valid UTF-8 %q", data)
		}
		for _, s := range []string{u, string(data)} {
			q := AppendString(nil, s)
			if !utf8.Valid(q) {
				t.Fatalf("AppendString(%q) = %q is not valid UTF-8", s, q)
			}
			v, err := Parse(q)
			if err != nil || v.Kind() != String {
				t.Fatalf("AppendString(%q) = %q does not parse back: %v", s, q, err)
			}
			// Re-quoting is the identity on what JSON.parse can produce.
			if q2 := AppendString(nil, v.Str()); !bytes.Equal(q, q2) {
				t.Fatalf("AppendString not stable: %q then %q", q, q2)
			}
		}
		s := string(data)
		for i := range s {
			Surrogate(s, i)
			DecodeRune(s[i:])
		}
	})
}
