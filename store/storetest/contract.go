package storetest

import (
	"context"
	"errors"
	"fmt"
	"github.com/deadletter/deadletter/internal/blob"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// Contract is what every store.Container keeps — the conditions, the typed errors, paging and the clock — run by
// each backend's own tests against a fresh container.
func Contract(t *testing.T, c store.Container) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, c store.Container)
	}{
		{"if-none-match", contractIfNoneMatch},
		{"if-match", contractIfMatch},
		{"delete", contractDelete},
		{"list", contractList},
		{"file-folder", contractFileFolder},
		{"too-large", contractTooLarge},
		{"race", contractRace},
		{"now", contractNow},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, c) })
	}
}

// mustWrite writes a blob or fails the test.
func mustWrite(t *testing.T, c store.Container, name, body string, o store.WriteOptions) store.BlobInfo {
	t.Helper()
	bi, err := c.Write(context.Background(), name, []byte(body), o)
	if err != nil {
		t.Fatalf("write %q: %v", name, err)
	}
	return bi
}

func contractIfNoneMatch(t *testing.T, c store.Container) {
	ctx := context.Background()
	mustWrite(t, c, "A/1.json", "[]", store.WriteOptions{IfNoneMatchAny: true, ContentType: "application/json"})
	_, err := c.Write(ctx, "A/1.json", []byte("[1]"), store.WriteOptions{IfNoneMatchAny: true})
	if !errors.Is(err, store.ErrAlreadyExists) || !strings.Contains(err.Error(), "A/1.json") {
		t.Fatalf("second create: %v", err)
	}
	b, _ := c.Read(ctx, "A/1.json", 100)
	if string(b.Body) != "[]" {
		t.Fatalf("an existing copy must be left as it is, got %q", b.Body)
	}
}

func contractIfMatch(t *testing.T, c store.Container) {
	ctx := context.Background()
	v1 := mustWrite(t, c, "B/1.json", "one", store.WriteOptions{ContentType: "application/json", Metadata: map[string]string{"origin": "test"}})
	v2 := mustWrite(t, c, "B/1.json", "two", store.WriteOptions{IfMatch: v1.ETag, ContentType: "application/json", Metadata: map[string]string{"drainCount": "1"}})
	if v1.ETag == v2.ETag || v2.ETag == "" {
		t.Fatalf("ETag did not change: %s %s", v1.ETag, v2.ETag)
	}
	if _, err := c.Write(ctx, "B/1.json", []byte("three"), store.WriteOptions{IfMatch: v1.ETag}); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("stale If-Match: %v", err)
	}
	if _, err := c.Write(ctx, "B/missing.json", []byte("x"), store.WriteOptions{IfMatch: v1.ETag}); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("If-Match on a missing blob: %v", err)
	}
	b, err := c.Read(ctx, "B/1.json", 100)
	if err != nil || string(b.Body) != "two" || b.ETag != v2.ETag || b.ContentType != "application/json" {
		t.Fatalf("read back: %+v %v", b, err)
	}
	if v, ok := blob.MetaGet(b.Metadata, "drainCount"); !ok || v != "1" {
		t.Fatalf("metadata did not survive: %v", b.Metadata)
	}
	st, err := c.Stat(ctx, "B/1.json")
	if err != nil || st.ETag != v2.ETag {
		t.Fatalf("stat: %+v %v", st, err)
	}
}

func contractDelete(t *testing.T, c store.Container) {
	ctx := context.Background()
	v1 := mustWrite(t, c, "C/1.json", "x", store.WriteOptions{})
	v2 := mustWrite(t, c, "C/1.json", "y", store.WriteOptions{})
	if err := c.Delete(ctx, "C/1.json", v1.ETag); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("stale delete: %v", err)
	}
	if err := c.Delete(ctx, "C/1.json", v2.ETag); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "C/1.json", v2.ETag); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("delete of a gone blob with If-Match: %v", err)
	}
	if _, err := c.Read(ctx, "C/1.json", 10); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("read gone: %v", err)
	}
	if _, err := c.Stat(ctx, "C/1.json"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("stat gone: %v", err)
	}
}

func contractList(t *testing.T, c store.Container) {
	ctx := context.Background()
	names := []string{"S/2026/1/1/1/a.json", "archived/S/2026/1/1/1/a.json", "quarantine/S/x.json", "with space/a%20b.json", "ünï/☃.json",
		"Archived/look-alike", "archivedX/y", strings.Repeat("n", 200) + "/" + strings.Repeat("m", 200) + "/" + strings.Repeat("o", 200)}
	for _, n := range names {
		mustWrite(t, c, n, `[]`, store.WriteOptions{ContentType: "application/json", Metadata: map[string]string{"k": "v"}})
	}
	l, err := store.ListAll(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]store.BlobInfo{}
	for _, b := range l.Blobs {
		got[b.Name] = b
	}
	for _, n := range names {
		b, ok := got[n]
		if !ok {
			t.Fatalf("%q not listed; have %d blobs", n, len(l.Blobs))
		}
		if b.Size != 2 || b.ETag == "" || b.LastModified.IsZero() || b.Metadata["k"] != "v" {
			t.Fatalf("listed %q as %+v", n, b)
		}
		// A listing's ETag must be the one a read sees, or every listed blob looks changed.
		if st, err := c.Stat(ctx, n); err != nil || st.ETag != b.ETag || !st.LastModified.Equal(b.LastModified) {
			t.Fatalf("%q: listed ETag %s, stat %s (%v)", n, b.ETag, st.ETag, err)
		}
	}
	if d := time.Since(l.ServiceTime); d > 5*time.Minute || d < -5*time.Minute {
		t.Fatalf("service time %s is far from the local clock", l.ServiceTime)
	}
}

func contractFileFolder(t *testing.T, c store.Container) {
	ctx := context.Background()
	// A blob named like a prefix folder: Azure holds both; a directory cannot, and says so.
	mustWrite(t, c, "quarantine/q.json", "[]", store.WriteOptions{})
	_, err := c.Write(ctx, "quarantine", []byte("[]"), store.WriteOptions{})
	if _, isDir := c.(*dirstore.Dir); isDir {
		if err == nil || !strings.Contains(err.Error(), "cannot hold this name in a directory") {
			t.Fatalf("dir: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
}

func contractTooLarge(t *testing.T, c store.Container) {
	ctx := context.Background()
	mustWrite(t, c, "big.json", strings.Repeat("x", 4096), store.WriteOptions{})
	if _, err := c.Read(ctx, "big.json", 1024); !errors.Is(err, store.ErrTooLarge) {
		t.Fatalf("read over the limit: %v", err)
	}
}

func contractRace(t *testing.T, c store.Container) {
	ctx := context.Background()
	// Sixteen writers holding the same ETag: exactly one wins, the rest see ErrConditionFailed.
	v := mustWrite(t, c, "R/1.json", "base", store.WriteOptions{})
	var wins, lost atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := c.Write(ctx, "R/1.json", []byte(fmt.Sprint(i)), store.WriteOptions{IfMatch: v.ETag})
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, store.ErrConditionFailed):
				lost.Add(1)
			default:
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	if wins.Load() != 1 || lost.Load() != 15 {
		t.Fatalf("wins %d lost %d", wins.Load(), lost.Load())
	}
	// Creators racing with If-None-Match: exactly one creates.
	wins.Store(0)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Write(ctx, "R/new.json", []byte("x"), store.WriteOptions{IfNoneMatchAny: true}); err == nil {
				wins.Add(1)
			} else if !errors.Is(err, store.ErrAlreadyExists) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d creators won", wins.Load())
	}
}

func contractNow(t *testing.T, c store.Container) {
	ctx := context.Background()
	now, err := c.Now(ctx)
	if err != nil || time.Since(now).Abs() > 5*time.Minute {
		t.Fatalf("now %s %v", now, err)
	}
}
