package replay

import (
	"testing"
	"time"
)

// The per-blob CPU cost of hydration: parse a typical 1–5 event dead letter and summarize it.
func BenchmarkParseAndSummarize(b *testing.B) {
	gen := NewBulk(1, time.Now(), DefaultConfig())
	bodies := make([][]byte, 64)
	for i := range bodies {
		_, bodies[i] = gen.Next()
	}
	cfg := cfgWith(Register{"ProcessPushNotification": true})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cfg.Summarize("S/x.json", ParsePayload(bodies[i%len(bodies)]))
	}
}
