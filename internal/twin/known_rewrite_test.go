package twin

import (
	"slices"
	"testing"
	"time"
)

// A known blob rewritten days after it was written (a drain's re-upload, a worker start's) expires by its new
// Last-Modified: the lifecycle rule keeps it past the old date and takes it at the new one — and the oldest
// known time moves on with it.
func TestAKnownBlobRewrittenExpiresByItsNewTime(t *testing.T) {
	t.Parallel()
	k := newKnownSet()
	d0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	k.set("A/2026/11/1/9/rewritten.json", `"1"`, d0)
	k.set("A/2026/11/1/10/kept.json", `"2"`, d0.Add(time.Hour))
	k.set("A/2026/11/1/9/rewritten.json", `"3"`, d0.Add(72*time.Hour)) // three days on
	before := func(t time.Time) func(time.Time) bool { return func(lm time.Time) bool { return lm.Before(t) } }
	if got := k.modifiedBy(before(d0.Add(48 * time.Hour))); !slices.Equal(got, []string{"A/2026/11/1/10/kept.json"}) {
		t.Fatalf("due by its old time: %v", got)
	}
	if oldest, _ := k.oldest(); !oldest.Equal(d0.Add(time.Hour)) {
		t.Fatalf("oldest %v: the rewritten blob's old time is gone", oldest)
	}
	if got := k.modifiedBy(before(d0.Add(73 * time.Hour))); !slices.Equal(got, []string{"A/2026/11/1/10/kept.json", "A/2026/11/1/9/rewritten.json"}) {
		t.Fatalf("due by its new time: %v", got)
	}
	if lm, _ := k.lastModified("A/2026/11/1/9/rewritten.json"); !lm.Equal(d0.Add(72 * time.Hour)) {
		t.Fatalf("last modified %v", lm)
	}
}
