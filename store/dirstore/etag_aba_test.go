package dirstore

import (
	"context"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
)

// Under a twin's stopped clock every write of a blob lands at the same modification time; rewrites of the same
// size must still give a new ETag each time, or a writer holding an old ETag would pass If-Match on a blob
// changed twice since (the filesystem reuses the inode number the first rewrite freed).
func TestAnETagIsNeverGivenTwiceUnderAStoppedClock(t *testing.T) {
	t.Parallel()
	d, err := Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	d.SetClock(func() time.Time { return at })
	ctx := context.Background()
	seen := map[string]int{}
	for i := range 200 {
		body := []byte{'[', ']', byte('a' + i%2)}
		bi, err := d.Write(ctx, "S/x.json", body, store.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if j, ok := seen[bi.ETag]; ok {
			t.Fatalf("write %d got the ETag of write %d: %s", i, j, bi.ETag)
		}
		seen[bi.ETag] = i
	}
}

// An ETag an earlier deadletter kept (before the change time was part of it) names the same version of a blob.
func TestALegacyETagNamesTheSameVersion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{`"9b-1a-18e-3"`, `"9b-18e-3"`, true},
		{`"9b-18e-3"`, `"9b-1a-18e-3"`, true},
		{`"9b-1a-18e-3"`, `"9b-1a-18e-3"`, true},
		{`"9b-1a-18e-3"`, `"9b-1b-18e-3"`, false},
		{`"9b-1a-18e-3"`, `"9c-18e-3"`, false},
		{`"9b-18e-3"`, `"9b-18e-4"`, false},
	} {
		if got := SameETag(c.a, c.b); got != c.same {
			t.Errorf("SameETag(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
