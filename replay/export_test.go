package replay_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// A source blob under the directory's own folder (.deadletter/ in any case) is refused for that — never as a name
// that "differs only by case" from another.
func TestAnExportRefusesTheDirectorysOwnFolderForWhatItIs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := storetest.NewMem(time.Now())
	src.Write(ctx, ".deadletter/meta/x.json", []byte("[]"), store.WriteOptions{})
	src.Write(ctx, ".Deadletter/y.json", []byte("[]"), store.WriteOptions{})
	src.Write(ctx, "S/ok.json", []byte("[]"), store.WriteOptions{})
	dst, err := dirstore.CreatePrivate(t.TempDir() + "/export")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	why := map[string]string{}
	ex, err := replay.StartExport(ctx, dst, src, "mem", func(c store.Copied) {
		mu.Lock()
		defer mu.Unlock()
		if c.Err != nil {
			why[c.Name] = c.Err.Error()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := store.ListAll(ctx, src)
	for _, b := range l.Blobs {
		ex.Add(b)
	}
	if err := ex.Finish(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{".deadletter/meta/x.json", ".Deadletter/y.json"} {
		if got := why[n]; !strings.Contains(got, ".deadletter/") || strings.Contains(got, "differs only by case") {
			t.Errorf("%s refused as %q", n, got)
		}
	}
	if len(why) != 2 {
		t.Fatalf("refused %v", why)
	}
}
