package tui

import (
	"fmt"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

// big is a model holding n hydrated blobs, as after a refresh of a very large container.
func big(b *testing.B, n int) *Model {
	cfg := replay.DefaultConfig()
	cfg.Handlers = scenario.IncidentRegister
	snap := &replay.Snapshot{Container: "bench/deadletter", Now: fixedNow, Items: make([]replay.Item, n)}
	subs := []string{"PUSH-NOTIFICATIONS", "FRIEND-REQUESTS", "THREAD-REPLIES", "WEBHOOKS", "BLOB-DELETIONS"}
	for i := range snap.Items {
		age := time.Duration(i%(30*24*60)) * time.Minute
		name := replay.DeadLetterName(subs[i%len(subs)], fixedNow.Add(-age), fmt.Sprintf("%08x-0000-0000-0000-%012x", i, i))
		if i%7 == 0 {
			name = replay.QuarantinePrefix + name
		}
		it := cfg.MakeItem(store.BlobInfo{Name: name, Size: 2048, ETag: fmt.Sprint(i), LastModified: fixedNow.Add(-age)}, fixedNow)
		it.Summary = &replay.Summary{Events: 1 + i%50, MaxReplayAttempt: replay.Attempt(i % 3), Reasons: replay.Counts{{Value: "MaxDeliveryAttemptsExceeded", N: 3}},
			Outcomes: replay.Counts{{Value: "Busy", N: 3}}, Verdicts: replay.VerdictCounts{2, 1}}
		snap.Items[i] = it
	}
	m := newModel(storetest.NewMem(fixedNow), cfg, false)
	m.Update(size(160, 48))
	m.Update(refreshMsg{seq: m.refreshSeq, snap: snap})
	return m
}

var down = tea.KeyMsg{Type: tea.KeyDown}

// The targets: at 100,000 blobs, one cursor move (Update + View) ≤ 0.5 ms and View alone ≤ 0.5 ms.
func BenchmarkCursorMove100k(b *testing.B) {
	m := big(b, 100_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Update(down)
		_ = m.View()
	}
}

func BenchmarkView100k(b *testing.B) {
	m := big(b, 100_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

// A keystroke in the filter (the filtering itself is debounced and measured below).
func BenchmarkFilterKeystroke100k(b *testing.B) {
	m := big(b, 100_000)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a")})
		_ = m.View()
	}
}

func BenchmarkFilterApply100k(b *testing.B) {
	m := big(b, 100_000)
	m.filter.SetValue("webhooks")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.applyFilter()
	}
}
