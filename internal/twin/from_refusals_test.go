package twin

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// twin start --from refuses a directory that already holds a blob (a twin starts on an empty one: the copy would
// mix the operator's blob into the estate's), and a half-made twin whose lock another process holds (a start
// still copying): each says why, names the holder, and writes nothing.
func TestAStartFromRefusesABlobAlreadyThereAndAHeldLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := storetest.NewMem(opens)
	if _, err := src.Write(ctx, "WEBHOOKS/2026/12/1/9/a.json", []byte(`[]`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	f := From{Source: src, Describe: "a test container", Config: Config()}

	full := filepath.Join(t.TempDir(), "full")
	d, err := dirstore.CreatePrivate(full)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write(ctx, "mine.json", []byte(`{"the operator's":1}`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := StartFrom(ctx, full, f); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Fatalf("into a directory holding a blob: %v", err)
	}
	if l, _ := store.ListAll(ctx, d); len(l.Blobs) != 1 {
		t.Fatalf("the refused start wrote: %v", l.Blobs)
	}
	if _, err := made.Find(full); !made.IsNotMade(err) {
		t.Fatalf("the refused start left a mark: %v", err)
	}

	// A start interrupted mid-copy, then resumed while another start (here: this test) still holds its lock.
	busy := filepath.Join(t.TempDir(), "busy")
	if _, err := dirstore.CreatePrivate(busy); err != nil {
		t.Fatal(err)
	}
	place, err := made.Make(busy, made.Twin)
	if err != nil {
		t.Fatal(err)
	}
	if err := made.WriteFile(place.File(copyingFile), []byte("a test container\n")); err != nil {
		t.Fatal(err)
	}
	held, err := place.Lock("twin start --from")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	_, err = StartFrom(ctx, busy, f)
	var b *made.Busy
	if !errors.As(err, &b) || !strings.Contains(err.Error(), "twin start --from") {
		t.Fatalf("a start whose lock is held: %v", err)
	}
	if l, _ := store.ListAll(ctx, mustOpen(t, busy)); len(l.Blobs) != 0 {
		t.Fatalf("the refused start copied: %v", l.Blobs)
	}
}

// A blob exactly one TTL old when the twin is made from it is past its hour: Event Grid's trigger for it has run
// out, so the twin owes the replay nothing for it (it is stranded); a second younger, it is still owed.
func TestATwinOwesNothingForABlobExactlyATTLOld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := Config()
	src := storetest.NewMem(opens)
	event := `[{"id":"%s","subject":"s","eventType":"ProcessPushNotification","dataVersion":"1","data":{}}]`
	for name, age := range map[string]time.Duration{
		"PUSH-NOTIFICATIONS/2026/12/1/11/at-the-ttl.json":      cfg.TTL,
		"PUSH-NOTIFICATIONS/2026/12/1/11/a-second-inside.json": cfg.TTL - time.Second,
	} {
		if _, err := src.Write(ctx, name, fmt.Appendf(nil, event, name), store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := src.Backdate(ctx, name, opens.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	tw, err := StartFrom(ctx, filepath.Join(t.TempDir(), "twin"), From{Source: src, Describe: "a test container", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	var owed []string
	for _, o := range tw.st.owed {
		owed = append(owed, o.name)
	}
	if len(owed) != 1 || !strings.HasSuffix(owed[0], "a-second-inside.json") {
		t.Fatalf("owed a BlobCreated for %v: want only the blob a second inside the TTL", owed)
	}
}
