package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/replay/rules"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/charmbracelet/x/vt"
	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

// backend is a seeded container where stranded blobs exist: a backdated directory, or Azurite with a short TTL
// the seeded blobs have passed.
func backend(t *testing.T, kind string, wrap func(store.Container) store.Container) (store.Container, rules.Config) {
	t.Helper()
	cfg := rules.DefaultConfig()
	var c store.Container
	if kind == "dir" {
		c = storetest.Dir(t)
	} else {
		c = storetest.Azure(t)
		cfg.TTL = 2 * time.Second
	}
	if _, err := scenario.Seed(context.Background(), c, scenario.SeedOptions{Count: 12, Seed: 3, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	cfg.Handlers = scenario.IncidentRegister
	if kind != "dir" {
		waitStranded(t, c, cfg)
	}
	if wrap != nil {
		c = wrap(c)
	}
	return c, cfg
}

// waitStranded waits (bounded) until Azurite's clock takes every seeded root blob past the TTL.
func waitStranded(t *testing.T, c store.Container, cfg rules.Config) {
	l := replay.NewLoader(c, cfg)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		s, err := l.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if s.Count()[rules.PaneLive] == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("seeded blobs never passed the TTL")
		}
	}
}

func waitScreen(t *testing.T, tm *teatest.TestModel, want ...string) {
	t.Helper()
	var b bytes.Buffer
	err := waitErr(tm, &b, want...)
	if err != nil {
		tm.Quit()
		t.Fatalf("screen never showed %q; the model's last view:\n%s", want, tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).View().Content)
	}
}

func waitErr(tm *teatest.TestModel, _ *bytes.Buffer, want ...string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	ft := &fakeTB{}
	term, fed := terminalOf(tm), 0
	teatest.WaitFor(ft, tm.Output(), func(b []byte) bool {
		term.Write(b[fed:]) // (each wait reads on from where the last one stopped)
		fed = len(b)
		screen := term.String()
		for _, w := range want {
			if !strings.Contains(screen, w) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	if ft.failed {
		return fmt.Errorf("not shown")
	}
	return nil
}

// terminals are the terminal each test program draws on: Bubble Tea v2's renderer writes only the cells that
// changed, so text on the screen is not text in the byte stream — a terminal emulator, fed everything the program
// wrote, reads the screen back.
var terminals sync.Map // *teatest.TestModel → *vt.Emulator

func terminalOf(tm *teatest.TestModel) *vt.Emulator {
	if e, ok := terminals.Load(tm); ok {
		return e.(*vt.Emulator)
	}
	emu := vt.NewEmulator(240, 80)
	go io.Copy(io.Discard, emu) // (its answers to the program's queries, which nobody reads here)
	emu.WriteString("\x1b[20h") // a newline returns the carriage, as the tty's output processing does
	terminals.Store(tm, emu)
	return emu
}

// fakeTB lets a failed wait be reported with the model's own view instead of the renderer's byte stream.
type fakeTB struct {
	testing.TB
	failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Fatal(args ...any)     { f.failed = true }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }

func press(tm *teatest.TestModel, s string) {
	for _, r := range s {
		tm.Send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// resumes is the GUID's start of the seed's quarantine blob whose events the cap stopped: restored, they resume.
const resumes = "cd15cda6"

func TestFlow(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"dir", "azurite"} {
		t.Run(kind, func(t *testing.T) {
			c, cfg := backend(t, kind, nil)
			m := New(Options{Session: session.Over(replay.NewLoader(c, cfg), session.Spec{RecordDir: filepath.Join(t.TempDir(), "record")}), Interval: time.Hour, Theme: Theme{}, Clipboard: io.Discard})
			tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
			waitScreen(t, tm, "[1 Stranded", "▲STRANDED")

			// Switch panes.
			tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
			waitScreen(t, tm, "[2 Quarantine")
			press(tm, "3")
			waitScreen(t, tm, "[3 Live")
			// Filter, then clear it.
			press(tm, "1/WEBHOOKS")
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
			waitScreen(t, tm, "filter: WEBHOOKS")
			press(tm, "/")
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
			// Open a blob and come back.
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
			waitScreen(t, tm, "what the estate will do", "event #0 (")
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
			// Drain everything stranded.
			tm.Send(tea.KeyPressMsg{Code: 'a', Mod: tea.ModCtrl})
			press(tm, "d")
			waitScreen(t, tm, "stranded blob(s)?", "republish")
			press(tm, "y")
			waitScreen(t, tm, "Drain finished")
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
			// Restore the quarantine blob whose capped events resume (named: on Azurite every blob has one age, so
			// no order puts it first).
			press(tm, "2/"+resumes)
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
			waitScreen(t, tm, "filter: "+resumes)
			press(tm, " ")
			waitScreen(t, tm, "[2 Quarantine", "1 selected")
			press(tm, "r")
			waitScreen(t, tm, "Restore 1 quarantined blob(s)?", "event(s) resume")
			press(tm, "y")
			waitScreen(t, tm, "Restore finished", "1 restored")
			tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
			tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))

			// The container, not the model, says what happened: one restored copy at the root.
			l, _ := store.ListAll(context.Background(), c)
			restored := 0
			for _, b := range l.Blobs {
				if rules.IsRoot(b.Name) && strings.Contains(b.Name, ".restored-") {
					restored++
				}
			}
			if restored != 1 {
				t.Fatalf("%d restored copies, want 1", restored)
			}
			// Every drained blob carries the drain's metadata.
			drained := 0
			for _, b := range l.Blobs {
				if _, ok := blob.MetaGet(b.Metadata, rules.MetaDrainCount); ok {
					drained++
				}
			}
			if drained == 0 {
				t.Fatal("no blob was drained")
			}
		})
	}
}

// A drain cancelled mid-way finishes what is in flight, touches nothing after the cancel, and says so.
func TestFlowCancelDrain(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"dir", "azurite"} {
		t.Run(kind, func(t *testing.T) {
			release := make(chan struct{})
			var once sync.Once
			free := func() { once.Do(func() { close(release) }) }
			t.Cleanup(free) // a failed wait must not leave the writers blocked
			started := make(chan struct{}, 100)
			var hooked *storetest.Hooked
			c, cfg := backend(t, kind, func(c store.Container) store.Container {
				hooked = &storetest.Hooked{Container: c, BeforeWrite: func(string, store.WriteOptions) error {
					started <- struct{}{}
					<-release
					return nil
				}}
				return hooked
			})
			before, _ := store.ListAll(context.Background(), c)
			etags := map[string]string{}
			for _, b := range before.Blobs {
				etags[b.Name] = b.ETag
			}
			m := New(Options{Session: session.Over(replay.NewLoader(c, cfg), session.Spec{RecordDir: filepath.Join(t.TempDir(), "record")}), Interval: time.Hour, Theme: Theme{}, Concurrency: 2, Clipboard: io.Discard})
			tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
			waitScreen(t, tm, "[1 Stranded")
			tm.Send(tea.KeyPressMsg{Code: 'a', Mod: tea.ModCtrl})
			press(tm, "d")
			waitScreen(t, tm, "stranded blob(s)?")
			press(tm, "y")
			<-started
			<-started // both workers are inside a write
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
			waitScreen(t, tm, "cancelling")
			free()
			waitScreen(t, tm, "Drain finished", "cancelled")
			tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
			tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
			// Exactly the two blobs in flight were drained; every other stranded blob is as it was.
			after, _ := store.ListAll(context.Background(), c)
			changed := 0
			for _, b := range after.Blobs {
				if etags[b.Name] != b.ETag {
					changed++
				}
			}
			if changed != 2 {
				t.Fatalf("%d blobs changed; the two in flight, and nothing after the cancel, should have", changed)
			}
		})
	}
}

// What the restore dialog showed is what is restored: a quarantine copy rewritten after its plan was read is
// skipped as changed, and nothing of it reaches the root.
func TestFlowRestoreHeldToWhatWasShown(t *testing.T) {
	t.Parallel()
	c, cfg := backend(t, "dir", nil)
	m := New(Options{Session: session.Over(replay.NewLoader(c, cfg), session.Spec{RecordDir: filepath.Join(t.TempDir(), "record")}), Interval: time.Hour, Theme: Theme{}, Clipboard: io.Discard})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	waitScreen(t, tm, "[1 Stranded")
	press(tm, "2/"+resumes)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitScreen(t, tm, "filter: "+resumes)
	press(tm, " ")
	waitScreen(t, tm, "[2 Quarantine", "1 selected")
	press(tm, "r")
	waitScreen(t, tm, "Restore 1 quarantined blob(s)?", "event(s) resume")
	// Another hand rewrites every quarantine copy while the dialog is open.
	ctx := context.Background()
	before, _ := store.ListAll(ctx, c)
	for _, bi := range before.Blobs {
		if strings.HasPrefix(bi.Name, rules.QuarantinePrefix) {
			b, err := c.Read(ctx, bi.Name, store.MaxBlobBytes)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write(ctx, bi.Name, append(b.Body, ' '), store.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	press(tm, "y")
	waitScreen(t, tm, "Restore finished", "1 changed")
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	after, _ := store.ListAll(ctx, c)
	for _, b := range after.Blobs {
		if strings.Contains(b.Name, ".restored-") {
			t.Fatalf("%s was restored from a copy nobody was shown", b.Name)
		}
	}
}

// restoreDialogOn opens the dashboard on the seeded directory (through wrap, when set) at w×h and asks to restore
// the one quarantine blob whose name holds frag.
func restoreDialogOn(t *testing.T, wrap func(store.Container) store.Container, w, h int, frag string) (*teatest.TestModel, store.Container) {
	t.Helper()
	c, cfg := backend(t, "dir", wrap)
	m := New(Options{Session: session.Over(replay.NewLoader(c, cfg), session.Spec{RecordDir: filepath.Join(t.TempDir(), "record")}), Interval: time.Hour, Theme: Theme{}, Clipboard: io.Discard})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h))
	waitScreen(t, tm, "[1 Stranded")
	press(tm, "2/"+frag)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitScreen(t, tm, "filter: "+frag)
	press(tm, "r")
	return tm, c
}

// closeAndQuit closes the dialog and quits.
func closeAndQuit(t *testing.T, tm *teatest.TestModel) {
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// A restore where every blob is refused says so in its title and will not start: y says why, nothing is written.
func TestFlowRestoreOfRefusedBlobsDoesNotStart(t *testing.T) {
	t.Parallel()
	tm, c := restoreDialogOn(t, nil, 120, 40, "3a41f14b")
	waitScreen(t, tm, "Restore 0 of 1 quarantined blob(s)? (1 refused: left where they are)", "press f")
	press(tm, "y")
	waitScreen(t, tm, "nothing would be restored: every blob here is refused (f forces)")
	closeAndQuit(t, tm)
	after, _ := store.ListAll(context.Background(), c)
	for _, b := range after.Blobs {
		if strings.Contains(b.Name, ".restored-") {
			t.Fatalf("%s was restored", b.Name)
		}
	}
}

// A quarantine copy whose plan could not be read is counted apart, never restored unseen (even when it can be read
// by the time the operator says yes), and reported as failed.
func TestFlowRestoreOfAnUnreadableCopy(t *testing.T) {
	t.Parallel()
	var failing atomic.Bool
	failing.Store(true)
	tm, _ := restoreDialogOn(t, func(c store.Container) store.Container {
		return &storetest.Hooked{Container: c, BeforeRead: func(name string) error {
			if failing.Load() && strings.Contains(name, "5871f7a4") {
				return errors.New("connection reset by peer")
			}
			return nil
		}}
	}, 120, 40, "5871f7a4")
	waitScreen(t, tm, "Restore 0 of 1 quarantined blob(s)? (1 could not be read: left where they are)", "reported as failed")
	failing.Store(false)
	press(tm, "y")
	waitScreen(t, tm, "nothing would be restored")
	closeAndQuit(t, tm)
}

// --force over a copy whose original lingers says so at the top of the dialog, where it is read before y.
func TestFlowForcedRestoreOfALingeringCopySaysSo(t *testing.T) {
	t.Parallel()
	tm, _ := restoreDialogOn(t, nil, 80, 24, "ccad22f7")
	waitScreen(t, tm, "1 refused", "press f to restore them anyway")
	press(tm, "f")
	waitScreen(t, tm, "Restore 1 quarantined blob(s)?", "still have their original at the root")
	closeAndQuit(t, tm)
}
