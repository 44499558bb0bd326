package record

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
	"github.com/deadletter/deadletter/replay/rules"
)

// A blob an action found gone because the replay had taken it just before (its copy older than the action) is
// told as taken before the action reached it — not "gone: nothing of it is left", which reads as a loss.
func TestFollowTellsACopyFromBeforeTheAction(t *testing.T) {
	cfg := rules.DefaultConfig()
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	const name = "FRIEND-REQUESTS/2026/12/7/5/2e51e3bd-f71c-f6a4-24fa-06d2db9dc90a.json"
	snap := rules.NewSnapshot("dir:/twin")
	snap.Merge([]rules.Item{cfg.MakeItem(blob.Info{Name: "archived/" + name, ETag: "e", LastModified: at.Add(-10 * time.Minute)}, at)}, at)
	snap.Sweep()
	svc := at
	r := Record{Intent: Line{ID: "r1", Action: ActDrain, Service: &svc, Blobs: []Blob{{Name: name, ETag: "old"}}},
		Outcome: &Line{ID: "r1", Blobs: []Blob{{Name: name, ETag: "old", Outcome: string(rules.OutcomeGone)}}}}
	f := slices.Collect(Follow(context.Background(), snap, r))
	if len(f) != 1 || !strings.Contains(f[0].Fate, "archived") || !strings.Contains(f[0].Fate, "before this action reached it") {
		t.Fatalf("%+v", f)
	}
	// With no copy at all, it is gone.
	empty := rules.NewSnapshot("dir:/twin")
	empty.Sweep()
	if f := slices.Collect(Follow(context.Background(), empty, r)); !strings.HasPrefix(f[0].Fate, "gone") {
		t.Fatalf("%+v", f)
	}
}
