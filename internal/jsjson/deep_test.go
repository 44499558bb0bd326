package jsjson

import (
	"bytes"
	"errors"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func nestedArrays(depth int) []byte {
	return append(bytes.Repeat([]byte("["), depth), bytes.Repeat([]byte("]"), depth)...)
}

func nestedObjects(depth int) []byte {
	b := bytes.Repeat([]byte(`{"a":`), depth)
	b = append(b, '1')
	return append(b, bytes.Repeat([]byte("}"), depth)...)
}

// mixedNesting alternates arrays and objects, each level also holding a sibling so that nothing is trivially
// the last child.
func mixedNesting(depth int) []byte {
	var b []byte
	for i := 0; i < depth; i++ {
		if i%2 == 0 {
			b = append(b, `[0,`...)
		} else {
			b = append(b, `{"k":true,"v":`...)
		}
	}
	b = append(b, "null"...)
	for i := depth - 1; i >= 0; i-- {
		if i%2 == 0 {
			b = append(b, ']')
		} else {
			b = append(b, '}')
		}
	}
	return b
}

// timed fails when f takes longer than limit. It guards against work that grows faster than the depth (at five
// million levels a quadratic step never finishes), not against a slow machine: the limits are a minute, far above
// the seconds a loaded two-core machine takes, and the time is logged (speed itself is the benchmarks' business).
func timed(t *testing.T, what string, limit time.Duration, f func()) {
	t.Helper()
	start := time.Now()
	f()
	d := time.Since(start)
	t.Logf("%s: %v", what, d)
	if d > limit && !testing.Short() {
		t.Errorf("%s took %v, more than %v", what, d, limit)
	}
}

// JSON.parse has no depth limit, so neither may Parse or Scan: a hostile blob five million levels deep must
// parse, quickly, and report its depth.
func TestDeepNesting(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("allocates a few hundred MB")
	}
	for _, tc := range []struct {
		name  string
		depth int
		doc   func(int) []byte
		top   Kind
	}{
		{"arrays", 5_000_000, nestedArrays, Array},
		{"objects", 5_000_000, nestedObjects, Object},
		{"mixed", 2_000_000, mixedNesting, Array},
	} {
		// Give back the previous case's few hundred MB before building the next.
		runtime.GC()
		debug.FreeOSMemory()
		t.Run(tc.name, func(t *testing.T) {
			depth, doc := tc.depth, tc.doc(tc.depth)
			var res ScanResult
			var err error
			timed(t, "Scan", time.Minute, func() { res, err = Scan(doc) })
			if err != nil || res.Depth != depth || res.TopKind != tc.top {
				t.Fatalf("Scan: depth %d, kind %v, err %v", res.Depth, res.TopKind, err)
			}
			var v *Value
			timed(t, "Parse", time.Minute, func() { v, err = Parse(doc) })
			if err != nil {
				t.Fatal(err)
			}
			var d int
			timed(t, "Depth", time.Minute, func() { d = Depth(v) })
			if d != depth {
				t.Fatalf("Depth = %d, want %d", d, depth)
			}
			var out []byte
			timed(t, "Stringify", time.Minute, func() { out = Stringify(v) })
			if !bytes.Equal(out, doc) {
				t.Fatalf("Stringify does not reproduce the compact input (%d vs %d bytes)", len(out), len(doc))
			}

			// Unclosed, it fails at the end of the input, having seen the whole depth.
			open := doc[:len(doc)/2]
			res, err = Scan(open)
			var se *SyntaxError
			if !errors.As(err, &se) || se.Offset != int64(len(open)) || res.Depth < depth/2-1 {
				t.Fatalf("Scan of the unclosed half: depth %d, %v", res.Depth, err)
			}
			if _, err := Parse(open); err == nil || err.Error() != se.Error() {
				t.Fatalf("Parse of the unclosed half: %v, Scan said %v", err, se)
			}
		})
	}
}

// Stringify and Depth walk a million levels without recursion, well past where V8's recursive
// JSON.stringify gives up (about 4,000 levels).
func TestDeepStringify(t *testing.T) {
	t.Parallel()
	const depth = 1_000_000
	for _, doc := range [][]byte{nestedArrays(depth), nestedObjects(depth)} {
		v, err := Parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		if got := Stringify(v); !bytes.Equal(got, doc) {
			t.Fatalf("Stringify of a %d-deep value differs from its input", depth)
		}
		if d := Depth(v); d != depth {
			t.Fatalf("Depth = %d", d)
		}
	}
}
