package replay_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules/rulestest"

	"github.com/deadletter/deadletter/internal/blob"
	"github.com/deadletter/deadletter/replay/rules"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// interloper is a container on which another action runs, once, just before this action's first write: two
// operators acting on one blob at the same moment.
type interloper struct {
	store.Container
	once   sync.Once
	before func()
}

func (c *interloper) Write(ctx context.Context, name string, body []byte, o store.WriteOptions) (store.BlobInfo, error) {
	c.once.Do(c.before)
	return c.Container.Write(ctx, name, body, o)
}

// stoppedDir is a directory whose service clock stands still: every action on it happens in the same second, as
// two drains on Azure (whose clock has a second's grain) can.
func stoppedDir(t *testing.T, at time.Time) *dirstore.Dir {
	t.Helper()
	d, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d.SetClock(func() time.Time { return at })
	return d
}

// Two drains of one blob in the same second: only the one whose write landed reports drained; the other says the
// blob changed. Once told apart by the time stamp they share, both said drained.
func TestTwoDrainsAtOnceReportWhatEachDid(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	d := stoppedDir(t, at.Add(-2*time.Hour))
	name := "PUSH/2026/11/30/10/a.json"
	put(t, d, name, ev("a", "Push", ""))
	d.SetClock(func() time.Time { return at })
	cfg := rulestest.ConfigWith(rulestest.Register())
	var first []rules.Result
	c := &interloper{Container: d, before: func() {
		first, _ = replay.Drain(bg, d, cfg, named(name), rules.DrainOptions{})
	}}
	second, err := replay.Drain(bg, c, cfg, named(name), rules.DrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if outcomes(first)[name] != rules.OutcomeDrained || outcomes(second)[name] == rules.OutcomeDrained {
		t.Fatalf("the first drain %v, the second %v: exactly one drained it", outcomes(first), outcomes(second))
	}
	b, _ := d.Read(bg, name, 1<<20)
	if n, _ := blob.MetaGet(b.Metadata, rules.MetaDrainCount); n != "1" {
		t.Fatalf("drainCount %s: the blob was written twice", n)
	}
}

// Two restores of one quarantine copy at once: one restored it; the other finds the copy written and the
// quarantine copy gone, and says gone — not restored — and one restored copy stands.
func TestTwoRestoresAtOnceReportWhatEachDid(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	d := stoppedDir(t, at)
	name := "quarantine/PUSH/2026/11/30/10/a.json"
	put(t, d, name, ev("a|10", "Push", ""))
	cfg := rulestest.ConfigWith(rulestest.Register())
	o := replay.RestoreOptions{Force: true}
	var first []rules.Result
	c := &interloper{Container: d, before: func() { first, _ = replay.Restore(bg, d, cfg, []string{name}, o) }}
	second, err := replay.Restore(bg, c, cfg, []string{name}, o)
	if err != nil {
		t.Fatal(err)
	}
	if outcomes(first)[name] != rules.OutcomeRestored || outcomes(second)[name] != rules.OutcomeGone {
		t.Fatalf("the first restore %v, the second %v: exactly one restored it", outcomes(first), outcomes(second))
	}
	l, _ := store.ListAll(bg, d)
	if len(l.Blobs) != 1 {
		t.Fatalf("after two restores at once: %d blobs", len(l.Blobs))
	}
}
