package dirstore

import (
	"context"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
)

// A directory with a clock of its own reads its time from it — Now, the pages' and reads' service time — and
// stamps every write with it, as Azure stamps a blob with its own clock. A running clock moves at its speed.
func TestDirectoryClock(t *testing.T) {
	root := t.TempDir()
	at := time.Date(2026, 11, 1, 4, 0, 0, 0, time.UTC)
	if err := WriteClock(root, Clock{At: at, Wall: time.Now()}); err != nil {
		t.Fatal(err)
	}
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if now, _ := d.Now(ctx); !now.Equal(at) {
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
	if err := WriteClock(root, Clock{At: at, Wall: time.Now().Add(-2 * time.Second), Speed: 3600}); err != nil {
		t.Fatal(err)
	}
	d2, _ := Open(root)
	if now, _ := d2.Now(ctx); now.Sub(at) < 2*time.Hour || now.Sub(at) > 3*time.Hour {
		t.Fatalf("a clock running at 3600× for 2s reads %v past its start", now.Sub(at))
	}
}
