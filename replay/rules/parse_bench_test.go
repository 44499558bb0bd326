package rules_test

import (
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules/rulestest"

	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/replay/rules"
)

// The per-blob CPU cost of hydration: parse a typical 1–5 event dead letter and summarize it.
func BenchmarkParseAndSummarize(b *testing.B) {
	gen := scenario.NewBulk(1, time.Now(), rules.DefaultConfig())
	bodies := make([][]byte, 64)
	for i := range bodies {
		_, bodies[i] = gen.Next()
	}
	cfg := rulestest.ConfigWith(rules.Register{"ProcessPushNotification": true})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cfg.Summarize("S/x.json", rules.ParsePayload(bodies[i%len(bodies)]))
	}
}
