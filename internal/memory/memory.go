// Package memory tunes the Go runtime for deadletter's workload.
package memory

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's target for deadletter: collect once the heap has grown by 40% of the live
// set, not by all of it (Go's default, GOGC=100).
const GCPercent = 40

// Tune applies GCPercent unless GOGC is set in the environment (which then wins, as for any Go program).
//
// deadletter's heap is one large, long-lived snapshot — about 430 bytes per listed blob — and little garbage per
// page or frame. With the default, the heap grows to twice that snapshot before each collection: at a million
// blobs a dashboard holding 440 MB peaked at 1.3 GB of RSS. Measured on that million (./bench.sh -phases
// scale): GOGC 100 → 1.35 GB, 50 → 0.95 GB, 40 → 0.85 GB, 30 → 0.80 GB, with the full listing taking 10–13 s
// throughout. 40 keeps a margin under the 1 GB target without collecting all the time.
func Tune() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(GCPercent)
	}
}
