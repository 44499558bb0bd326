package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store/dirstore"
)

// twinDir is a directory container whose service time is a twin's clock file, as a twin's directory is opened.
func twinDir(t *testing.T, c dirstore.Clock) *dirstore.Dir {
	t.Helper()
	d, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(c)
	path := filepath.Join(t.TempDir(), "clock.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	d.UseClockFile(path)
	return d
}

// In a rehearsal the dashboard's service time — what an ack, a drain's record and a repair are stamped with — is
// the twin's clock: stopped while it is paused, however long the operator waits (found by a fresh-eyes test: an
// ack made after a pause was dated later than the paused clock), and running as fast as the twin runs.
func TestServiceTimeIsTheTwinsClock(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 10, 3, 0, 0, 0, time.UTC)
	hs := newHarness(t, twinDir(t, dirstore.Clock{At: at}), rules.DefaultConfig(), 120, 30)
	hs.now = hs.now.Add(time.Hour) // the operator waits an hour, the twin paused
	if got := hs.m.serviceNow(); !got.Equal(at) {
		t.Fatalf("paused at %s, the dashboard's service time is %s", at, got)
	}

	wall := time.Now()
	hs = newHarness(t, twinDir(t, dirstore.Clock{At: at, Wall: wall, Speed: 3600}), rules.DefaultConfig(), 120, 30)
	time.Sleep(20 * time.Millisecond)
	got := hs.m.serviceNow()
	if elapsed := time.Since(wall); got.Before(at.Add(20*time.Millisecond*3600)) || got.After(at.Add(elapsed*3600)) {
		t.Fatalf("at ×3600 for %s of wall time, the dashboard's service time is %s after the clock's start", elapsed, got.Sub(at))
	}
}
