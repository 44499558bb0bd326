// Package heap tunes the Go runtime for what deadletter holds: one large, long-lived snapshot of the container
// (a few hundred bytes per listed blob, a million of them at scale) and little garbage beside it.
package heap

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// GCPercent is the garbage collector's target the deadletter binaries run with (GOGC, unless the environment
// sets it): collect once the heap has grown by 40% of the live set, not by all of it. With Go's default of 100
// the heap grows to twice the snapshot before each collection: at a million blobs a dashboard holding 440 MB
// peaked at 1.3 GB of RSS (./bench.sh -phases scale: GOGC 100 → 1.35 GB, 50 → 0.95 GB, 40 → 0.85 GB, 30 → 0.80 GB).
const GCPercent = 40

// Headroom and Floor make the soft memory limit the runtime keeps to (GOMEMLIMIT, unless the environment sets
// it): the live heap of the last collection times the collector's own goal (1 + GCPercent/100), never under
// Floor. GOGC bounds when the collector runs, not what the process keeps mapped: pages freed while a
// million-blob listing grows stayed resident until the background scavenger got to them, and the peak RSS was
// 1.7 times the live heap. At the goal, the limit has the runtime return them as it goes without collecting more
// often (a tighter limit, 1.25, cut another 50 MB but made a frame at a million rows four times slower, with the
// collector running beside it). It follows the live heap, so a container larger than any fixed limit never makes
// the collector run without pause.
const (
	Headroom = 1 + GCPercent/100.0
	Floor    = 256 << 20
	every    = 250 * time.Millisecond
)

// Tune applies GCPercent and starts following the live heap with the memory limit, each unless the
// environment's GOGC or GOMEMLIMIT says otherwise. It runs for the life of the process.
func Tune() {
	tuned.Store(true)
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(GCPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	debug.SetMemoryLimit(Floor)
	go func() {
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		last := int64(Floor)
		for range time.Tick(every) {
			metrics.Read(live)
			if live[0].Value.Kind() != metrics.KindUint64 {
				return // a runtime without the metric: GOGC alone, as before
			}
			if l := limitAt(live[0].Value.Uint64(), math.Float64frombits(headroom.Load())); l != last {
				debug.SetMemoryLimit(l)
				last = l
			}
		}
	}()
}

// LimitFor is the soft memory limit for a live heap of that many bytes.
func LimitFor(live uint64) int64 { return limitAt(live, Headroom) }

func limitAt(live uint64, headroom float64) int64 {
	return max(Floor, int64(float64(live)*headroom))
}

// headroom is the limit's multiple of the live heap Tune follows (float64 bits): Headroom, or OneShotHeadroom.
var headroom atomic.Uint64

func init() { headroom.Store(math.Float64bits(Headroom)) }

// OneShotGCPercent and OneShotHeadroom are the collector's settings for a command that holds the listing to
// answer once and exits — ls, trace, log, a drain's or a restore's plan, a report's record: no frame waits on a
// collection there, so the heap may grow by a quarter of the live set, not 40%, before one — more collections
// traded for the peak a laptop feels (the dashboard keeps GCPercent: a tighter limit made its frames four times
// slower). docs/performance.md has both measured at a million blobs.
const (
	OneShotGCPercent = 25
	OneShotHeadroom  = 1 + OneShotGCPercent/100.0
)

// tuned says Tune ran: the process is a deadletter binary, not a test running commands in its own process.
var tuned atomic.Bool

// OneShot tightens what Tune set — the collector to OneShotGCPercent and the followed limit to OneShotHeadroom,
// each unless the environment sets GOGC or GOMEMLIMIT. Without Tune (a test binary running command after command
// in one process) it does nothing.
func OneShot() {
	if !tuned.Load() {
		return
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(OneShotGCPercent)
	}
	headroom.Store(math.Float64bits(OneShotHeadroom))
}

// StreamGCPercent is the collector's setting while a command streams a container page by page and keeps nothing
// (ls --jsonl): its live heap is one page, so the runtime's own share of its memory is the part that counts —
// collecting at 20% growth instead of 40% keeps a million-blob stream under 40 MB (docs/performance.md).
const StreamGCPercent = 20

// Streaming sets StreamGCPercent (unless GOGC is set: the environment wins) and returns what puts it back.
func Streaming() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	was := debug.SetGCPercent(StreamGCPercent)
	return func() { debug.SetGCPercent(was) }
}
