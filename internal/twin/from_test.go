package twin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// A twin started --from a container and interrupted mid-copy is resumed by the next start on the same
// directory: it copies what is missing, puts right a Last-Modified the interruption left, copies again a blob cut
// short, and ends with a twin
// that holds every blob as the source does (names, sizes, Last-Modified), its account balanced; a third start
// refuses (the twin exists). The source is never written.
func TestAnInterruptedStartFromResumes(t *testing.T) {
	src, _ := started(t, "incident")
	ctx := context.Background()
	d, err := dirstore.Open(src.root)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config()
	snap, err := replay.NewLoader(d, cfg).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	blobs, script := SnapshotOf(snap, cfg, rules.WitnessReport{})
	if len(blobs) < 20 {
		t.Fatalf("the source holds %d blobs", len(blobs))
	}
	before, _ := store.ListAll(ctx, d)
	dir := filepath.Join(t.TempDir(), "twin")
	cut, stop := context.WithCancel(ctx)
	n := 0
	f := From{Source: d, Describe: "directory " + src.root, Blobs: blobs, Now: snap.Now, Config: cfg, Script: script,
		Progress: func(c store.Copied) {
			if n++; n == 10 {
				stop()
			}
		}}
	if _, err := StartFrom(cut, dir, f); err == nil || !strings.Contains(err.Error(), "resumes") {
		t.Fatalf("an interrupted start: %v", err)
	}
	// The interruption's worst: a blob copied whose Last-Modified was not yet put back.
	copied, _ := store.ListAll(ctx, mustOpen(t, dir))
	if len(copied.Blobs) == 0 || len(copied.Blobs) == len(blobs) {
		t.Fatalf("%d of %d copied before the interruption", len(copied.Blobs), len(blobs))
	}
	if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(copied.Blobs[0].Name)), snap.Now, snap.Now); err != nil {
		t.Fatal(err)
	}
	// …and one cut short (its bytes not flushed when the machine stopped).
	if err := os.Truncate(filepath.Join(dir, filepath.FromSlash(copied.Blobs[1].Name)), 0); err != nil {
		t.Fatal(err)
	}
	f.Progress = nil
	tw, err := StartFrom(ctx, dir, f)
	if err != nil {
		t.Fatalf("the resumed start: %v", err)
	}
	got, _ := store.ListAll(ctx, tw.dir)
	if len(got.Blobs) != len(before.Blobs) {
		t.Fatalf("the twin holds %d blobs, the source %d", len(got.Blobs), len(before.Blobs))
	}
	for i, b := range before.Blobs {
		g := got.Blobs[i]
		if g.Name != b.Name || g.Size != b.Size || !g.LastModified.Equal(b.LastModified) {
			t.Fatalf("blob %d: the twin %s %d %s, the source %s %d %s", i, g.Name, g.Size, g.LastModified, b.Name, b.Size, b.LastModified)
		}
	}
	holds(t, tw, "a resumed twin")
	tw.Close()
	if _, err := StartFrom(ctx, dir, f); err == nil || !strings.Contains(err.Error(), "already holds a twin") {
		t.Fatalf("a third start: %v", err)
	}
	after, _ := store.ListAll(ctx, d)
	for i := range before.Blobs {
		if before.Blobs[i].ETag != after.Blobs[i].ETag {
			t.Fatalf("the source's %s changed", before.Blobs[i].Name)
		}
	}
}

func mustOpen(t *testing.T, dir string) *dirstore.Dir {
	t.Helper()
	d, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
