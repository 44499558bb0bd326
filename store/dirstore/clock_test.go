package dirstore

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
)

func writeClock(t *testing.T, path string, c Clock) {
	t.Helper()
	b, _ := json.Marshal(c)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A directory given a twin's clock file reads its time from it — Now, the pages' and reads' service time — and
// stamps every write with it, as Azure stamps a blob with its own clock. A running clock moves at its speed.
func TestDirectoryClock(t *testing.T) {
	t.Parallel()
	root, kept := t.TempDir(), filepath.Join(t.TempDir(), "clock.json")
	at := time.Date(2026, 11, 1, 4, 0, 0, 0, time.UTC)
	writeClock(t, kept, Clock{At: at, Wall: time.Now()})
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	d.UseClockFile(kept)
	ctx := context.Background()
	if now, _ := d.Now(ctx); !now.Equal(at) || !d.Rehearsal() {
		t.Fatalf("Now %v, want the stopped clock's %v", now, at)
	}
	bi, err := d.Write(ctx, "A/2026/11/1/4/x.json", []byte("[]"), store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bi.LastModified.Equal(at) {
		t.Fatalf("written at %v, want %v", bi.LastModified, at)
	}
	b, _ := d.Read(ctx, bi.Name, 100)
	l, _ := store.ListAll(ctx, d)
	if !b.ServiceTime.Equal(at) || !l.ServiceTime.Equal(at) || !l.Blobs[0].LastModified.Equal(at) || l.Blobs[0].ETag != bi.ETag {
		t.Fatalf("read %v, listed %v %+v", b.ServiceTime, l.ServiceTime, l.Blobs[0])
	}
	// Running at an hour a second, set on the Dir itself (as the twin steps it), then from the file again.
	d.SetClock(func() time.Time { return at.Add(time.Hour) })
	if now, _ := d.Now(ctx); !now.Equal(at.Add(time.Hour)) {
		t.Fatalf("Now %v with a clock set on the Dir", now)
	}
	d.SetClock(nil)
	writeClock(t, kept, Clock{At: at, Wall: time.Now().Add(-2 * time.Second), Speed: 3600})
	d2, _ := Open(root)
	d2.UseClockFile(kept)
	if now, _ := d2.Now(ctx); now.Sub(at) < 2*time.Hour || now.Sub(at) > 3*time.Hour {
		t.Fatalf("a clock running at 3600× for 2s reads %v past its start", now.Sub(at))
	}
}

// A clock file inside the container is data: a directory not given a clock reads the local clock, whatever its
// .deadletter folder holds.
func TestAClockInTheContainerIsNotObeyed(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, stateDir), 0o755)
	writeClock(t, filepath.Join(root, stateDir, "clock.json"), Clock{At: time.Now().Add(-40 * 24 * time.Hour), Wall: time.Now()})
	d, _ := Open(root)
	if now, _ := d.Now(context.Background()); time.Since(now).Abs() > time.Minute || d.Rehearsal() {
		t.Fatalf("a planted clock file set the service time to %v", now)
	}
}

// No clock value runs time backwards or out of range: a speed too large or NaN, a time before 2000 or past
// 9000 is refused naming the field, and a good clock read at a wall time before its own stays at At.
func TestClockBounds(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 1, 4, 0, 0, 0, time.UTC)
	for _, c := range []Clock{{At: at, Speed: 1e15, Wall: at}, {At: at, Speed: math.NaN(), Wall: at}, {At: at, Speed: -1, Wall: at},
		{At: time.Date(273, 1, 1, 0, 0, 0, 0, time.UTC), Wall: at}, {At: at, Wall: time.Time{}, Speed: 2}} {
		path := filepath.Join(t.TempDir(), "clock.json")
		b, _ := json.Marshal(c)
		if math.IsNaN(c.Speed) {
			b = []byte(`{"at":"2026-11-01T04:00:00Z","wall":"2026-11-01T04:00:00Z","speed":NaN}`)
		}
		os.WriteFile(path, b, 0o600)
		if _, _, err := ReadClock(path); err == nil {
			t.Errorf("clock %s was read", b)
		}
	}
	c := Clock{At: at, Wall: at, Speed: MaxSpeed}
	if got := c.Now(at.Add(-time.Hour)); !got.Equal(at) {
		t.Fatalf("read before its wall instant the clock says %v", got)
	}
	if got := (Clock{At: at, Wall: at, Speed: 1e300}).Now(at.Add(1000 * time.Hour)); got.After(MaxTime) || got.Before(at) {
		t.Fatalf("an unchecked huge speed reads %v", got)
	}
}
