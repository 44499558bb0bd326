package replay

import (
	"context"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"golang.org/x/sync/errgroup"
)

// MatchEvents reads the payloads of the given blobs and judges their events against the query's event terms
// (rules.Query.MatchesEvents), with the loader's bounded concurrency and byte budget. The answer holds every blob
// it read, matching or not; a blob it could not read — refused, gone, too large, or not reached before ctx ended —
// is left out, not judged, so the query never matches it.
func (l *Loader) MatchEvents(ctx context.Context, blobs []store.BlobInfo, q rules.Query) rules.EventMatches {
	type verdict struct{ read, match bool }
	out := make([]verdict, len(blobs))
	n := l.Concurrency
	if n <= 0 {
		n = rules.DefaultConcurrency
	}
	var g errgroup.Group
	g.SetLimit(n)
	for i, bi := range blobs {
		if bi.Refused != "" {
			continue
		}
		g.Go(func() error {
			if ctx.Err() != nil {
				return nil
			}
			weight := min(max(bi.Size, 1), hydrateBudget)
			if l.inFlight.Acquire(ctx, weight) != nil {
				return nil
			}
			defer l.inFlight.Release(weight)
			b, err := l.Container.Read(ctx, bi.Name, store.MaxBlobBytes)
			if err != nil {
				return nil
			}
			out[i] = verdict{read: true, match: q.MatchesEvents(l.Config, rules.ParsePayload(b.Body).Events)}
			return nil
		})
	}
	g.Wait()
	m := make(rules.EventMatches, len(blobs))
	for i, v := range out {
		if v.read {
			m[blobs[i].Name] = v.match
		}
	}
	return m
}
