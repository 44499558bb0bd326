package pool

import (
	"sync/atomic"
	"testing"
)

func TestEachBoundsAndCovers(t *testing.T) {
	for _, limit := range []int{-1, 0, 1, 3, 100} {
		var running, peak atomic.Int64
		done := make([]atomic.Bool, 50)
		Each(limit, len(done), func(i int) {
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			if done[i].Swap(true) {
				t.Errorf("limit %d: %d done twice", limit, i)
			}
			running.Add(-1)
		})
		for i := range done {
			if !done[i].Load() {
				t.Fatalf("limit %d: %d never done", limit, i)
			}
		}
		if want := int64(max(1, min(limit, 50))); peak.Load() > want {
			t.Fatalf("limit %d: %d ran at once", limit, peak.Load())
		}
	}
	Each(4, 0, func(int) { t.Fatal("no work, no call") })
}
