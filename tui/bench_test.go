package tui

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

// big is the dashboard over n blobs whose payloads are all read (the loader's cache holds them), at 160×48.
func big(b *testing.B, n int) *harness {
	b.Helper()
	mem := storetest.NewMem(fixedNow)
	cfg := rules.DefaultConfig()
	cfg.Handlers = scenario.IncidentRegister
	subs := []string{"PUSH-NOTIFICATIONS", "FRIEND-REQUESTS", "THREAD-REPLIES", "WEBHOOKS", "BLOB-DELETIONS"}
	for i := 0; i < n; i++ {
		age := time.Duration(i%(30*24*60)) * time.Minute
		name := rules.DeadLetterName(subs[i%len(subs)], fixedNow.Add(-age), fmt.Sprintf("%08x-0000-0000-0000-%012x", i, i))
		if i%7 == 0 {
			name = rules.QuarantinePrefix + name
		}
		body := fmt.Sprintf(`[{"id":"e%d|%d","subject":"s","eventType":"ProcessPushNotification","dataVersion":"1","data":{},"deadLetterReason":"MaxDeliveryAttemptsExceeded","lastDeliveryOutcome":"Busy"}]`, i, i%3)
		mem.Write(context.Background(), name, []byte(body), store.WriteOptions{})
		mem.Backdate(context.Background(), name, fixedNow.Add(-age))
	}
	hs := newHarness(b, mem, cfg, 160, 48)
	for hs.m.unread > 0 {
		hs.run(hs.m.hydrate())
	}
	return hs
}

var down = tea.KeyPressMsg{Code: tea.KeyDown}

// The targets: at 100,000 blobs a cursor move (Update + View) and View alone ≤ 0.5 ms; the overview's View ≤ 5 ms.
func BenchmarkCursorMove100k(b *testing.B) {
	hs := big(b, 100_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hs.m.Update(down)
		_ = hs.m.View()
	}
}

func BenchmarkView100k(b *testing.B) {
	hs := big(b, 100_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = hs.m.View()
	}
}

func BenchmarkOverviewView100k(b *testing.B) {
	hs := big(b, 100_000)
	hs.press("o")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = hs.m.View()
	}
}

// A keystroke in the filter (the filtering itself is debounced and measured below).
func BenchmarkFilterKeystroke100k(b *testing.B) {
	hs := big(b, 100_000)
	hs.m.Update(tea.KeyPressMsg{Code: '/', Text: "/"})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hs.m.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
		_ = hs.m.View()
	}
}

func BenchmarkFilterApply100k(b *testing.B) {
	hs := big(b, 100_000)
	hs.m.filter.typed = "webhooks"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hs.m.applyFilter(true)
	}
}

// countWriter counts the bytes a program writes to its terminal.
type countWriter struct{ n atomic.Int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n.Add(int64(len(p))); return len(p), nil }

// The bytes the renderer writes to the terminal for one cursor move at 100,000 rows, in colour: what an operator
// over SSH pays per keystroke. (Each move waits for a frame: the renderer draws at most 60 a second.)
func BenchmarkFrameBytesCursorMove100k(b *testing.B) {
	hs := big(b, 100_000)
	hs.m.opt.Theme = Theme{Profile: colorprofile.TrueColor}
	hs.m.st = NewStyles(hs.m.opt.Theme)
	var out countWriter
	p := tea.NewProgram(hs.m, tea.WithInput(nil), tea.WithOutput(&out), tea.WithWindowSize(160, 48),
		tea.WithColorProfile(colorprofile.TrueColor), tea.WithoutSignalHandler())
	done := make(chan struct{})
	go func() { p.Run(); close(done) }()
	time.Sleep(500 * time.Millisecond) // the first frame, whole
	b.ResetTimer()
	start := out.n.Load()
	for i := 0; i < b.N; i++ {
		p.Send(down)
		time.Sleep(40 * time.Millisecond)
	}
	b.ReportMetric(float64(out.n.Load()-start)/float64(b.N), "bytes/move")
	b.StopTimer()
	p.Quit()
	<-done
}

// At a million rows (run with -bench 1M: building the fixture takes a minute).
func BenchmarkCursorMove1M(b *testing.B) {
	hs := big(b, 1_000_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hs.m.Update(down)
		_ = hs.m.View()
	}
}
