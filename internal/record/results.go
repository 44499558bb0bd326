package record

import (
	"context"
	"sync"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// Intended is the intent's blobs: each name with the ETag it was shown at.
func Intended(bis []store.BlobInfo) []Blob {
	out := make([]Blob, 0, len(bis))
	for _, bi := range bis {
		out = append(out, Blob{Name: bi.Name, ETag: bi.ETag})
	}
	return out
}

// Outcomes is the outcome's blobs: each result with the ETag it was shown at (from intended, by name), the
// outcome, the reason as a code and its facts, and — for the blobs it wrote — the ETag the write returned, else the
// one the written blob has now (asked of st, a few at a time; "" where it cannot be told).
func Outcomes(ctx context.Context, st replay.Statter, intended []Blob, res []rules.Result) []Blob {
	before := make(map[string]string, len(intended))
	for _, b := range intended {
		before[b.Name] = b.ETag
	}
	out := make([]Blob, len(res))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, r := range res {
		b := Blob{Name: r.Name, ETag: before[r.Name], Target: r.Target, Outcome: string(r.Outcome), Retired: r.Retired}
		if r.Target == r.Name {
			b.Target = ""
		}
		b.Why = WhyOf(r.Reason)
		out[i] = b
		written := r.Name
		if r.Target != "" {
			written = r.Target
		}
		if r.NewETag != "" {
			out[i].ETagAfter = r.NewETag
			continue
		}
		if st == nil || !r.Outcome.Done() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if bi, err := st.Stat(context.WithoutCancel(ctx), written); err == nil {
				out[i].ETagAfter = bi.ETag
			}
		}()
	}
	wg.Wait()
	return out
}
