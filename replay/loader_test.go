package replay_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// Big payloads are read one at a time (parsing one of tens of MiB takes about 35 times its size), while small
// ones still flow at full concurrency.
func TestHydrateReadsBigPayloadsOneAtATime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	mem := storetest.NewMem(now)
	big := "[" + strings.Repeat(" ", 20<<20) + "]" // 20 MiB of valid JSON
	for i := range 4 {
		mem.Write(ctx, fmt.Sprintf("BIG/%d.json", i), []byte(big), store.WriteOptions{})
	}
	for i := range 32 {
		mem.Write(ctx, fmt.Sprintf("SMALL/%d.json", i), []byte(`[]`), store.WriteOptions{})
	}
	var inBig, maxBig, inSmall, maxSmall atomic.Int64
	h := &storetest.Hooked{Container: slowReads{mem, func(name string, start bool) {
		c, m := &inSmall, &maxSmall
		if strings.HasPrefix(name, "BIG/") {
			c, m = &inBig, &maxBig
		}
		if !start {
			c.Add(-1)
			return
		}
		n := c.Add(1)
		for old := m.Load(); n > old && !m.CompareAndSwap(old, n); old = m.Load() {
		}
	}}}
	l := replay.NewLoader(h, rules.DefaultConfig())
	snap, err := l.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var infos []store.BlobInfo
	for _, it := range snap.Items {
		infos = append(infos, it.Info)
	}
	for _, got := range l.Hydrate(ctx, infos) {
		if got.Summary == nil {
			t.Fatalf("%s not read: %s", got.Name, got.ReadErr)
		}
	}
	if maxBig.Load() != 1 || maxSmall.Load() < 2 {
		t.Fatalf("at once: %d big, %d small", maxBig.Load(), maxSmall.Load())
	}
}

// slowReads holds every read a moment, so overlapping reads overlap.
type slowReads struct {
	store.Container
	at func(name string, start bool)
}

func (s slowReads) Read(ctx context.Context, name string, max int64) (store.Blob, error) {
	s.at(name, true)
	defer s.at(name, false)
	time.Sleep(20 * time.Millisecond)
	return s.Container.Read(ctx, name, max)
}

// A payload that could not be read stays unreadable on the next pass of the same loader (watch keeps one): the
// cache carries the failure, so a second check never calls the container healthy.
func TestUnreadableSurvivesTheCache(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, n := range []string{"S/huge.json", "quarantine/S/huge.json"} {
		p := filepath.Join(root, filepath.FromSlash(n))
		os.MkdirAll(filepath.Dir(p), 0o755)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(store.MaxBlobBytes + 1) // sparse: nothing is written
		f.Close()
	}
	d, err := dirstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rules.DefaultConfig()
	l := replay.NewLoader(d, cfg)
	for pass := range 3 {
		s, err := l.List(bg)
		if err != nil {
			t.Fatal(err)
		}
		l.HydrateWhere(bg, s, nil)
		if r := cfg.Check(s, rules.CheckOptions{}); r.Healthy || r.Unreadable != 2 {
			t.Fatalf("pass %d: healthy %v, %d unreadable", pass, r.Healthy, r.Unreadable)
		}
	}
}
