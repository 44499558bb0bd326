package tui

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
	"github.com/muesli/termenv"
)

// updating reports -update (the flag is registered by x/exp/golden, which teatest brings in).
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

var fixedNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// hostileName holds terminal escape sequences: they must reach the screen escaped.
const hostileName = "HOSTILE/2026/11/30/9/\x1b[2J\x1b]0;pwned\x07.json"

// fixture is the incident scenario in memory at a pinned clock, plus a hostile blob.
func fixture(t testing.TB, count int) (*storetest.Mem, replay.Config) {
	t.Helper()
	mem := storetest.NewMem(fixedNow)
	cfg := replay.DefaultConfig()
	if _, err := scenario.Seed(context.Background(), mem, scenario.SeedOptions{Count: count, Seed: 7, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	body := `[{"id":"x\u001b[31m","subject":"\u001b[2J\u001b]0;pwned\u0007","eventType":"ProcessPushNotification","dataVersion":"1"}]`
	mem.Write(context.Background(), hostileName, []byte(body), store.WriteOptions{})
	mem.Backdate(context.Background(), hostileName, fixedNow.Add(-3*time.Hour))
	cfg.Handlers = scenario.IncidentRegister
	return mem, cfg
}

func asciiRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return r
}

func newModel(c store.Container, cfg replay.Config, readOnly bool) *Model {
	l := replay.NewLoader(c, cfg)
	return New(Options{Loader: l, Check: replay.CheckOptions{}, ReadOnly: readOnly, Interval: time.Hour,
		Renderer: asciiRenderer(), Clock: func() time.Time { return fixedNow }})
}

// drive feeds messages to the model and runs the commands it returns, feeding their messages back, until
// nothing more arrives. A command that does not answer within the grace (a polling tick) is dropped.
func drive(t testing.TB, m *Model, msgs ...tea.Msg) {
	t.Helper()
	queue := append([]tea.Msg(nil), msgs...)
	for steps := 0; len(queue) > 0; steps++ {
		if steps > 100000 {
			t.Fatal("the model never went quiet")
		}
		msg := queue[0]
		queue = queue[1:]
		_, cmd := m.Update(msg)
		queue = append(queue, run(cmd)...)
	}
}

// run executes a command (a batch's parts concurrently) and returns the messages that arrive within the grace.
func run(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	select {
	case msg := <-ch:
		switch msg := msg.(type) {
		case nil, tea.QuitMsg:
			return nil
		case tea.BatchMsg:
			results := make([][]tea.Msg, len(msg))
			var wg sync.WaitGroup
			for i, c := range msg {
				wg.Add(1)
				go func() { defer wg.Done(); results[i] = run(c) }()
			}
			wg.Wait()
			var out []tea.Msg
			for _, r := range results {
				out = append(out, r...)
			}
			return out
		}
		if reflect.TypeOf(msg).String() == "tea.sequenceMsg" {
			return nil
		}
		return []tea.Msg{msg}
	case <-time.After(150 * time.Millisecond): // a timer (polling, cursor blink): not waited for
		return nil
	}
}

func keys(s string) []tea.Msg {
	var out []tea.Msg
	for _, r := range s {
		out = append(out, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	return out
}

func special(t tea.KeyType) tea.Msg { return tea.KeyMsg{Type: t} }

func size(w, h int) tea.Msg { return tea.WindowSizeMsg{Width: w, Height: h} }

// golden compares a screen with testdata/golden/<name>.txt (go test ./tui -update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	if strings.Contains(got, "\x1b") {
		t.Fatalf("%s: the ASCII screen holds an escape sequence:\n%q", name, got)
	}
	path := filepath.Join("..", "testdata", "golden", name+".txt")
	if updating() {
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update once)", err)
	}
	if string(want) != got {
		t.Fatalf("%s differs from %s:\n--- got ---\n%s\n--- want ---\n%s", name, path, got, want)
	}
}

// checkSize fails unless the view is exactly w columns by h lines.
func checkSize(t *testing.T, label, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != h {
		t.Fatalf("%s at %dx%d: %d lines", label, w, h, len(lines))
	}
	for i, l := range lines {
		if lw := width(l); lw != w || ansi.StringWidth(l) != w {
			t.Fatalf("%s at %dx%d: line %d is %d wide: %q", label, w, h, i, lw, l)
		}
	}
}
