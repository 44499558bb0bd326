package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

// Every payload of testdata/hostile, plus the generated giants, opened in the dashboard: the detail renders,
// fits its window and holds no raw control character.
func TestHostileCorpusInTheDashboard(t *testing.T) {
	mem := storetest.NewMem(fixedNow)
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "hostile", "*.json"))
	bodies := map[string][]byte{}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		bodies[filepath.Base(f)] = b
	}
	bodies["nesting-100000.json"] = []byte(strings.Repeat("[", 100000) + strings.Repeat("]", 100000))
	var batch []string
	for i := 0; i < 10000; i++ {
		batch = append(batch, `{"id":"e`+strings.Repeat("x", i%5)+`","subject":"s","eventType":"ProcessPushNotification","dataVersion":"1"}`)
	}
	bodies["batch-10000.json"] = []byte("[" + strings.Join(batch, ",") + "]")
	bodies["data-50MB.json"] = []byte(`[{"id":"huge","subject":"s","eventType":"ProcessPushNotification","dataVersion":"1","data":"` + strings.Repeat("A", 50<<20) + `"}]`)
	if len(bodies) < 15 {
		t.Fatalf("corpus has %d payloads", len(bodies))
	}
	for f, b := range bodies {
		name := "HOSTILE \x1b[7m/2026/11/30/1/" + f
		mem.Write(context.Background(), name, b, store.WriteOptions{})
		mem.Backdate(context.Background(), name, fixedNow.Add(-2*time.Hour))
	}
	cfg := replay.DefaultConfig()
	cfg.Handlers = scenario.IncidentRegister
	m := newModel(mem, cfg, false)
	drive(t, m, size(100, 30), m.Init()())
	tb := m.tables[m.active]
	if len(tb.rows) != len(bodies) {
		t.Fatalf("%d rows for %d blobs", len(tb.rows), len(bodies))
	}
	for i := range tb.rows {
		tb.cursor = i
		start := time.Now()
		drive(t, m, special(tea.KeyEnter))
		v := m.View()
		checkSize(t, "detail", v, 100, 30)
		if strings.ContainsAny(v, "\x1b\x07") {
			t.Fatalf("raw control characters on screen:\n%q", v)
		}
		if !strings.Contains(v, `HOSTILE \x1b[7m`) {
			t.Fatalf("the name is not shown escaped:\n%s", v)
		}
		for _, k := range []tea.KeyType{tea.KeyPgDown, tea.KeyPgDown, tea.KeyEnd} {
			drive(t, m, special(k))
			checkSize(t, "scrolled detail", m.View(), 100, 30)
		}
		drive(t, m, special(tea.KeyEsc))
		if d := time.Since(start); d > 20*time.Second {
			t.Fatalf("opening row %d took %s", i, d)
		}
	}
}
