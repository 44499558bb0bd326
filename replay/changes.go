package replay

import (
	"context"
	"errors"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"golang.org/x/sync/errgroup"
)

// Lost says which of the blobs prev found expiring the lifecycle rule has deleted by now: past their deadline,
// and nothing of them left — not the blob (a drain keeps its name), not a restored copy (a restore writes
// RestoreTarget, which the replay may have archived or quarantined since). A blob handled any of those ways is
// resolved, not lost.
func Lost(ctx context.Context, st store.Container, c rules.Config, prev *rules.Report, cur rules.Report, now time.Time) ([]string, error) {
	if prev == nil {
		return nil, nil
	}
	was, _ := prev.Find(rules.FindingExpiring)
	is, _ := cur.Find(rules.FindingExpiring)
	still := make(map[string]bool, len(is.Names))
	for _, n := range is.Names {
		still[n] = true
	}
	var due []int
	for i, n := range was.Names {
		if !still[n] && i < len(was.Written) && !now.Before(c.ExpiresAt(was.Written[i])) {
			due = append(due, i)
		}
	}
	lost, errs := make([]bool, len(due)), make([]error, len(due))
	var g errgroup.Group
	g.SetLimit(rules.DefaultConcurrency)
	for j := range due {
		g.Go(func() error {
			lost[j], errs[j] = nothingLeftOf(ctx, st, was.Names[due[j]], was.Written[due[j]], prev.Now)
			return nil
		})
	}
	g.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var out []string
	for j, i := range due {
		if lost[j] {
			out = append(out, was.Names[i])
		}
	}
	return out, nil
}

// nothingLeftOf reports whether nothing of the blob is left: not the blob, not the replay's copies of a root
// blob written since the pass that saw it (it took it in time; an older quarantine copy holds an earlier cycle's
// refused events, not necessarily these), not the copy a restore of a quarantined one would have made, nor the
// replay's copies of that.
func nothingLeftOf(ctx context.Context, st store.Container, name string, written, seen time.Time) (bool, error) {
	since := time.Time{}
	if rules.IsRoot(name) {
		since = seen
	}
	w, err := WhereIs(ctx, st, store.BlobInfo{Name: name, LastModified: written}, since)
	return w.Kind == WhereDeleted, err
}
