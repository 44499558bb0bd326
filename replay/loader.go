package replay

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
)

// Loader lists and reads a container. Payload summaries are cached by (name, ETag), so a refresh never downloads
// an unchanged blob twice; a complete listing drops the entries of blobs that are gone, so the cache holds no
// more than the container does.
type Loader struct {
	Container store.Container
	Config    rules.Config
	// Concurrency bounds parallel downloads (DefaultConcurrency when ≤ 0).
	Concurrency int
	// NoCache keeps no summaries between listings: a single look (check, ls) has no next listing to save a
	// download for, and a cache of a million summaries is the container held in memory.
	NoCache bool

	mu    sync.Mutex
	cache map[string]cached
	gen   uint32
	// inFlight bounds the payload bytes being read and parsed at once (see hydrateBudget).
	inFlight *semaphore.Weighted
}

// hydrateBudget is how many payload bytes the loader reads and parses at once. Dead letters are small and flow
// at full concurrency; a payload of tens of MiB holding a million tiny events takes about 35 times its size to
// parse, so the big ones go one at a time — a check over a dozen 60 MiB blobs needs about 2 GB, not 5.
const hydrateBudget = 32 << 20

type cached struct {
	etag    string
	summary *rules.Summary
	readErr string
	failed  bool
	gen     uint32 // the listing that last saw the blob
}

// NewLoader makes a loader.
func NewLoader(c store.Container, cfg rules.Config) *Loader {
	return &Loader{Container: c, Config: cfg, Concurrency: rules.DefaultConcurrency, cache: map[string]cached{}, inFlight: semaphore.NewWeighted(hydrateBudget)}
}

// Stream lists the container page by page: each page's blobs are classified against that page's service clock,
// given the summaries already cached for the same ETag (nothing is downloaded), and handed to visit. When the
// listing completes, cache entries of blobs it did not see are dropped.
func (l *Loader) Stream(ctx context.Context, visit func(items []rules.Item, now time.Time) error) error {
	l.mu.Lock()
	l.gen++
	gen := l.gen
	l.mu.Unlock()
	dated := false
	err := l.Container.List(ctx, "", func(p store.Page) error {
		dated = dated || !p.ServiceTime.IsZero()
		items := make([]rules.Item, len(p.Blobs))
		l.mu.Lock()
		for i, bi := range p.Blobs {
			items[i] = l.Config.MakeItem(bi, p.ServiceTime)
			if c, ok := l.cache[bi.Name]; ok && c.etag == bi.ETag {
				items[i].Summary, items[i].ReadErr, items[i].ReadFailed = c.summary, c.readErr, c.failed
				c.gen = gen
				l.cache[bi.Name] = c
			}
		}
		l.mu.Unlock()
		return visit(items, p.ServiceTime)
	})
	if err != nil {
		return err
	}
	if !dated {
		// An empty container: no page carried the service's clock, so ask for it — a pass, a report or a watch
		// line dated year 1 is no answer.
		now, err := l.Container.Now(ctx)
		if err != nil {
			return err
		}
		if err := visit(nil, now.UTC()); err != nil {
			return err
		}
	}
	l.mu.Lock()
	for name, c := range l.cache {
		if c.gen != gen {
			delete(l.cache, name)
		}
	}
	l.mu.Unlock()
	return nil
}

// List enumerates the whole container into one snapshot.
func (l *Loader) List(ctx context.Context) (*rules.Snapshot, error) {
	snap := rules.NewSnapshot(l.Container.Describe())
	snap.Begin()
	err := l.Stream(ctx, func(items []rules.Item, now time.Time) error {
		snap.Merge(items, now)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// Hydrate reads and summarizes the given blobs with bounded concurrency and returns what it found, in the order
// given. A blob that cannot be read gets a ReadErr and never stops the others; once ctx is cancelled the blobs
// not yet started are left out.
func (l *Loader) Hydrate(ctx context.Context, blobs []store.BlobInfo) []rules.Hydrated {
	out := make([]rules.Hydrated, len(blobs))
	n := l.Concurrency
	if n <= 0 {
		n = rules.DefaultConcurrency
	}
	var g errgroup.Group
	g.SetLimit(n)
	for i := range blobs {
		g.Go(func() error {
			if ctx.Err() == nil {
				out[i] = l.hydrateOne(ctx, blobs[i])
			}
			return nil
		})
	}
	g.Wait()
	done := out[:0]
	for _, h := range out {
		if h.Name != "" {
			done = append(done, h)
		}
	}
	return done
}

func (l *Loader) hydrateOne(ctx context.Context, bi store.BlobInfo) rules.Hydrated {
	if bi.Refused != "" {
		return rules.Hydrated{Name: bi.Name, ETag: bi.ETag, ReadErr: "refused: " + bi.Refused, Failed: true}
	}
	l.mu.Lock()
	c, ok := l.cache[bi.Name]
	gen := l.gen
	l.mu.Unlock()
	if ok && c.etag == bi.ETag {
		return rules.Hydrated{Name: bi.Name, ETag: bi.ETag, Summary: c.summary, ReadErr: c.readErr, Failed: c.failed}
	}
	h := rules.Hydrated{Name: bi.Name, ETag: bi.ETag}
	weight := min(max(bi.Size, 1), hydrateBudget)
	if err := l.inFlight.Acquire(ctx, weight); err != nil {
		return rules.Hydrated{} // cancelled while waiting: nothing learned
	}
	defer l.inFlight.Release(weight)
	b, err := l.Container.Read(ctx, bi.Name, store.MaxBlobBytes)
	switch {
	case err != nil && ctx.Err() != nil:
		return rules.Hydrated{} // cancelled: nothing learned, nothing cached
	case err != nil:
		h.ReadErr = readError(err)
		// Gone since the listing: nothing is there to judge. Anything else — over the size limit included — leaves
		// a blob whose contents are unknown, which no check may call healthy.
		h.Failed = !errors.Is(err, store.ErrNotFound)
	default:
		h.ETag = b.ETag
		s := l.Config.Summarize(bi.Name, rules.ParsePayload(b.Body))
		h.Summary = &s
	}
	if !l.NoCache && (h.Summary != nil || errors.Is(err, store.ErrTooLarge)) {
		l.mu.Lock()
		l.cache[bi.Name] = cached{etag: h.ETag, summary: h.Summary, readErr: h.ReadErr, failed: h.Failed, gen: gen}
		l.mu.Unlock()
	}
	return h
}

func readError(err error) string {
	if errors.Is(err, store.ErrTooLarge) {
		return rules.TooLargeToRead()
	}
	return err.Error()
}

// HydrateWhere reads the payloads of the snapshot's items that keep accepts (nil: all) and have none yet, and
// puts the summaries in place.
func (l *Loader) HydrateWhere(ctx context.Context, s *rules.Snapshot, keep func(*rules.Item) bool) {
	// A chunk at a time: what is read of a backlog is applied as it comes, not gathered whole first (a million
	// blobs' infos and results were 160 MB beside the summaries).
	todo := make([]store.BlobInfo, 0, hydrateChunk)
	for _, it := range s.Items {
		if it.Unread() && (keep == nil || keep(it)) {
			todo = append(todo, it.Info)
		}
		if len(todo) == hydrateChunk {
			s.Apply(l.Hydrate(ctx, todo)...)
			todo = todo[:0]
		}
	}
	if len(todo) > 0 {
		s.Apply(l.Hydrate(ctx, todo)...)
	}
}

// hydrateChunk is how many blobs HydrateWhere reads at once.
const hydrateChunk = 4096

// CacheSize is how many payload summaries the loader holds (bounded by the blobs of the last listing).
func (l *Loader) CacheSize() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.cache)
}

// ReadinessOf is a subscription's readiness (rules.Config.Readiness) as the container witnesses it now: only its
// own blobs are listed — at the root, and the replay's archived/ and quarantine/ copies, which are evidence too —
// so a command about one blob (show) says what the dashboard says of it without listing the whole container. Nil
// when the subscription has no dead letter left.
func (l *Loader) ReadinessOf(ctx context.Context, sub string, now time.Time) (*rules.Readiness, error) {
	var items []*rules.Item
	for _, prefix := range []string{sub + "/", rules.ArchivedPrefix + sub + "/", rules.QuarantinePrefix + sub + "/"} {
		err := l.Container.List(ctx, prefix, func(p store.Page) error {
			for _, bi := range p.Blobs {
				it := l.Config.MakeItem(bi, now)
				items = append(items, &it)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, r := range l.Config.Readiness(items, now) {
		if r.Subscription == sub {
			return &r, nil
		}
	}
	return nil, nil
}
