package dirstore_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// A bulk copy's unsynced writes land as any write does and Flush makes them durable; where the system has no
// flush for a whole file system (anything but Linux) the Dir refuses to stop syncing.
func TestUnsyncedWritesAndFlush(t *testing.T) {
	t.Parallel()
	d, err := dirstore.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	on := d.SetUnsynced(true)
	if on != (runtime.GOOS == "linux") {
		t.Fatalf("SetUnsynced on %s: %v", runtime.GOOS, on)
	}
	ctx := context.Background()
	if _, err := d.Write(ctx, "A/b.json", []byte(`[]`), store.WriteOptions{IfNoneMatchAny: true, Metadata: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	d.SetUnsynced(false)
	b, err := d.Read(ctx, "A/b.json", 10)
	if err != nil || string(b.Body) != "[]" || b.Metadata["k"] != "v" {
		t.Fatalf("read back %q %v: %v", b.Body, b.Metadata, err)
	}
}
