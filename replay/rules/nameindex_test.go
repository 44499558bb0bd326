package rules

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The snapshot's name index against a map, through growth, misses and a rebuild after a sweep.
func TestNameIndexAgreesWithAMap(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	var items []*Item
	var x nameIndex
	want := map[string]int{}
	for i := range 20_000 {
		name := fmt.Sprintf("SUB-%d/2026/12/1/%d/%08x.json", r.IntN(7), r.IntN(24), r.Uint32())
		if _, dup := want[name]; dup {
			continue
		}
		items = append(items, &Item{})
		items[len(items)-1].Name = name
		x.add(items, len(items)-1)
		want[name] = len(items) - 1
		if i%997 == 0 {
			for n, p := range want {
				if got, ok := x.lookup(items, n); !ok || got != p {
					t.Fatalf("after %d: %q at %d, %v; want %d", len(items), n, got, ok, p)
				}
			}
		}
	}
	for _, miss := range []string{"", "SUB-1", "SUB-9/2026/12/1/1/0.json"} {
		if p, ok := x.lookup(items, miss); ok {
			t.Fatalf("%q found at %d", miss, p)
		}
	}
	swept := items[0].Name
	kept := items[:0]
	for i, it := range items {
		if i%3 != 0 {
			kept = append(kept, it)
		} else {
			delete(want, it.Name)
		}
	}
	x.rebuild(kept, 2*len(kept))
	for i, it := range kept {
		want[it.Name] = i
	}
	for n, p := range want {
		if got, ok := x.lookup(kept, n); !ok || got != p {
			t.Fatalf("after the sweep: %q at %d, %v; want %d", n, got, ok, p)
		}
	}
	if _, ok := x.lookup(kept, swept); ok {
		t.Fatal("a swept name is still found")
	}
}
