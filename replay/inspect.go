package replay

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unique"

	"github.com/deadletter/deadletter/store"
)

// Summary is what a blob's payload says at a glance: the ls row and the dashboard's table row. A dashboard
// holds one per blob, 100,000 of them in a large incident, so it is kept small: counts are short sorted slices
// and a fixed array, not maps, and repeated strings are interned.
type Summary struct {
	Events           int
	Malformed        bool
	Error            string
	MaxReplayAttempt int
	Reasons          Counts
	Outcomes         Counts
	// Verdicts counts each event's primary verdict; for quarantine blobs, the derived quarantine reason.
	Verdicts    VerdictCounts
	Uncountable int
}

// Count is how many events carry one value.
type Count struct {
	Value string
	N     int
}

// Counts is a small multiset of values, most frequent first (ties by value).
type Counts []Count

func (cs *Counts) add(v string) {
	for i := range *cs {
		if (*cs)[i].Value == v {
			(*cs)[i].N++
			return
		}
	}
	*cs = append(*cs, Count{Value: unique.Make(v).Value(), N: 1})
}

func (cs Counts) sort() {
	sort.Slice(cs, func(i, j int) bool { return cs[i].N > cs[j].N || cs[i].N == cs[j].N && cs[i].Value < cs[j].Value })
}

// Top is the most frequent value, or "".
func (cs Counts) Top() string {
	if len(cs) == 0 {
		return ""
	}
	return cs[0].Value
}

// Map returns the counts as a map (JSON output).
func (cs Counts) Map() map[string]int {
	m := make(map[string]int, len(cs))
	for _, c := range cs {
		m[c.Value] = c.N
	}
	return m
}

// VerdictCounts counts events per verdict, in the order of AllVerdicts.
type VerdictCounts [5]int

func verdictIndex(v Verdict) int {
	for i, x := range AllVerdicts {
		if x == v {
			return i
		}
	}
	return len(AllVerdicts) - 1
}

// Of is the count of one verdict.
func (vc VerdictCounts) Of(v Verdict) int { return vc[verdictIndex(v)] }

func (vc *VerdictCounts) add(v Verdict, n int) { vc[verdictIndex(v)] += n }

// Map returns the non-zero counts as a map (JSON output).
func (vc VerdictCounts) Map() map[Verdict]int {
	m := map[Verdict]int{}
	for i, n := range vc {
		if n > 0 {
			m[AllVerdicts[i]] = n
		}
	}
	return m
}

// Summarize reads a parsed payload of the blob name into a Summary.
func (c Config) Summarize(name string, p *Payload) Summary {
	s := Summary{Events: len(p.Events)}
	if p.Malformed() {
		s.Malformed, s.Error = true, p.Err.Error()
	}
	quarantined := strings.HasPrefix(name, QuarantinePrefix)
	for _, ev := range p.Events {
		if ev.DeadLetterReason != "" {
			s.Reasons.add(ev.DeadLetterReason)
		}
		if ev.LastDeliveryOutcome != "" {
			s.Outcomes.add(ev.LastDeliveryOutcome)
		}
		j := c.Judge(ev.ID, ev.EventType)
		if j.Attempt > s.MaxReplayAttempt {
			s.MaxReplayAttempt = j.Attempt
		}
		if j.Uncountable {
			s.Uncountable++
		}
		if s.Malformed {
			continue
		}
		if quarantined {
			s.Verdicts.add(c.QuarantineReason(ev.ID, ev.EventType), 1)
		} else {
			s.Verdicts.add(j.Primary(), 1)
		}
	}
	s.Reasons.sort()
	s.Outcomes.sort()
	return s
}

// Item is one blob of a snapshot: its properties, pane and clock facts, and its payload summary once hydrated.
type Item struct {
	store.BlobInfo
	Pane      Pane
	Age       time.Duration
	ExpiresAt time.Time
	Parsed    BlobName
	// Summary is nil until the payload has been read.
	Summary *Summary
	// ReadErr says why the payload could not be read (too large, gone, forbidden).
	ReadErr string
	// ReadFailed is set when reading failed for a reason that says nothing about the blob (network,
	// permissions): a check that could not read it cannot call the container healthy.
	ReadFailed bool
}

// Snapshot is one refresh of the container.
type Snapshot struct {
	Container string
	// Now is the service's clock at the listing; every age is measured against it.
	Now   time.Time
	Items []Item

	index map[string]int // name → position in Items, built on first use
}

// Count returns how many blobs are in each pane.
func (s *Snapshot) Count() map[Pane]int {
	m := map[Pane]int{}
	for i := range s.Items {
		m[s.Items[i].Pane]++
	}
	return m
}

// InPane returns the items of one pane, in snapshot order.
func (s *Snapshot) InPane(p Pane) []Item {
	var out []Item
	for _, it := range s.Items {
		if it.Pane == p {
			out = append(out, it)
		}
	}
	return out
}

// MakeItem classifies one listed blob against the service clock now.
func (c Config) MakeItem(bi store.BlobInfo, now time.Time) Item {
	age := now.Sub(bi.LastModified)
	return Item{BlobInfo: bi, Pane: c.Classify(bi.Name, age), Age: age, ExpiresAt: c.ExpiresAt(bi.LastModified), Parsed: ParseBlobName(bi.Name)}
}

// Loader lists and reads a container. Payload summaries are cached by (name, ETag), so a refresh never downloads
// an unchanged blob twice.
type Loader struct {
	Container store.Container
	Config    Config
	// Concurrency bounds parallel downloads (default 16).
	Concurrency int

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	etag    string
	summary *Summary
	readErr string
}

// NewLoader makes a loader.
func NewLoader(c store.Container, cfg Config) *Loader {
	return &Loader{Container: c, Config: cfg, Concurrency: 16, cache: map[string]cached{}}
}

// List enumerates the container and classifies every blob; summaries already cached for the same ETag are
// filled in, nothing is downloaded.
func (l *Loader) List(ctx context.Context) (*Snapshot, error) {
	lst, err := l.Container.List(ctx)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Container: l.Container.Describe(), Now: lst.ServiceTime, Items: make([]Item, len(lst.Blobs))}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, bi := range lst.Blobs {
		snap.Items[i] = l.Config.MakeItem(bi, lst.ServiceTime)
		if c, ok := l.cache[bi.Name]; ok && c.etag == bi.ETag {
			snap.Items[i].Summary, snap.Items[i].ReadErr = c.summary, c.readErr
		}
	}
	return snap, nil
}

// Hydrated is the outcome of reading one blob's payload.
type Hydrated struct {
	Name    string
	ETag    string
	Summary *Summary
	ReadErr string
	// Failed: the read failed for a reason outside the blob (see Item.ReadFailed).
	Failed bool
}

// Hydrate reads and summarizes the given blobs with bounded concurrency and returns what it found, in the order
// given. A blob that cannot be read gets a ReadErr and never stops the others; once ctx is cancelled the blobs
// not yet started are left out.
func (l *Loader) Hydrate(ctx context.Context, blobs []store.BlobInfo) []Hydrated {
	n := l.Concurrency
	if n <= 0 {
		n = 16
	}
	out := make([]Hydrated, len(blobs))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < n && w < len(blobs); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out[i] = l.hydrateOne(ctx, blobs[i])
			}
		}()
	}
feed:
	for i := range blobs {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	done := out[:0]
	for _, h := range out {
		if h.Name != "" {
			done = append(done, h)
		}
	}
	return done
}

func (l *Loader) hydrateOne(ctx context.Context, bi store.BlobInfo) Hydrated {
	l.mu.Lock()
	c, ok := l.cache[bi.Name]
	l.mu.Unlock()
	if ok && c.etag == bi.ETag {
		return Hydrated{Name: bi.Name, ETag: bi.ETag, Summary: c.summary, ReadErr: c.readErr}
	}
	h := Hydrated{Name: bi.Name, ETag: bi.ETag}
	b, err := l.Container.Read(ctx, bi.Name, store.MaxBlobBytes)
	switch {
	case err != nil && ctx.Err() != nil:
		return h // cancelled: cache nothing
	case err != nil:
		h.ReadErr = readError(err)
		h.Failed = !errors.Is(err, store.ErrTooLarge) && !errors.Is(err, store.ErrNotFound)
	default:
		h.ETag = b.ETag
		s := l.Config.Summarize(bi.Name, ParsePayload(b.Body))
		h.Summary = &s
	}
	if h.Summary != nil || errors.Is(err, store.ErrTooLarge) {
		l.mu.Lock()
		l.cache[bi.Name] = cached{etag: h.ETag, summary: h.Summary, readErr: h.ReadErr}
		l.mu.Unlock()
	}
	return h
}

func readError(err error) string {
	if errors.Is(err, store.ErrTooLarge) {
		return fmt.Sprintf("not read: larger than %d MiB, so not a dead letter Event Grid wrote", store.MaxBlobBytes>>20)
	}
	return err.Error()
}

// Apply puts hydrated results into the snapshot (matching by name and ETag, so a result for an older version
// of a blob is dropped).
func (s *Snapshot) Apply(hs ...Hydrated) {
	for _, h := range hs {
		if i, ok := s.Lookup(h.Name); ok && s.Items[i].ETag == h.ETag {
			s.Items[i].Summary, s.Items[i].ReadErr, s.Items[i].ReadFailed = h.Summary, h.ReadErr, h.Failed
		}
	}
}

// Lookup finds a blob's position in Items by name.
func (s *Snapshot) Lookup(name string) (int, bool) {
	if s.index == nil {
		s.index = make(map[string]int, len(s.Items))
		for i := range s.Items {
			s.index[s.Items[i].Name] = i
		}
	}
	i, ok := s.index[name]
	return i, ok
}

// HydrateWhere reads the payloads of the snapshot's items that keep accepts (nil: all) and have none yet, and
// puts the summaries in place.
func (l *Loader) HydrateWhere(ctx context.Context, s *Snapshot, keep func(*Item) bool) {
	var todo []store.BlobInfo
	for i := range s.Items {
		if it := &s.Items[i]; it.Summary == nil && (keep == nil || keep(it)) {
			todo = append(todo, it.BlobInfo)
		}
	}
	s.Apply(l.Hydrate(ctx, todo)...)
}

// InPaneFilter keeps the items of one pane (for HydrateWhere).
func InPaneFilter(p Pane) func(*Item) bool { return func(it *Item) bool { return it.Pane == p } }

// Detail is everything about one blob: the show command and the dashboard's detail view.
type Detail struct {
	Item
	Body       []byte
	Payload    *Payload
	Judgements []Judgement
	// Reasons are the derived quarantine reasons (quarantine blobs only), aligned with Payload.Events.
	Reasons []Verdict
	Preview *Preview
	Restore *RestorePlan
	Summary Summary
}

// EventVerdicts is what to show for event i: the derived reason of a quarantine blob (derived is then true),
// the judged verdicts of a root or archived one, and none for a malformed payload, which is quarantined whole.
func (d *Detail) EventVerdicts(i int) (vs []Verdict, derived bool) {
	switch {
	case i < len(d.Reasons):
		return []Verdict{d.Reasons[i]}, true
	case d.Payload.Malformed() || i >= len(d.Judgements):
		return []Verdict{}, false
	}
	return d.Judgements[i].Verdicts, false
}

// VerdictLabel is EventVerdicts for humans: "cap+notIdempotent", "cap (derived)".
func (d *Detail) VerdictLabel(i int) string {
	vs, derived := d.EventVerdicts(i)
	if derived {
		return VerdictsString(vs) + " (derived)"
	}
	return VerdictsString(vs)
}

// Inspect reads one blob and works out everything the estate will do with it.
func (l *Loader) Inspect(ctx context.Context, name string) (*Detail, error) {
	b, err := l.Container.Read(ctx, name, store.MaxBlobBytes)
	if err != nil && !errors.Is(err, store.ErrTooLarge) {
		return nil, err
	}
	now := b.ServiceTime
	if now.IsZero() {
		if now, err = l.Container.Now(ctx); err != nil {
			return nil, err
		}
	}
	d := &Detail{Item: l.Config.MakeItem(b.BlobInfo, now)}
	if b.Body == nil && b.Size > 0 {
		d.ReadErr = readError(store.ErrTooLarge)
		d.Payload = &Payload{Err: &MalformedError{Offset: -1, Element: -1, Msg: d.ReadErr}}
		return d, nil
	}
	d.Body = b.Body
	d.Payload = ParsePayload(b.Body)
	d.Summary = l.Config.Summarize(name, d.Payload)
	d.Item.Summary = &d.Summary
	for _, ev := range d.Payload.Events {
		d.Judgements = append(d.Judgements, l.Config.Judge(ev.ID, ev.EventType))
		if d.Pane == PaneQuarantine && !d.Payload.Malformed() {
			d.Reasons = append(d.Reasons, l.Config.QuarantineReason(ev.ID, ev.EventType))
		}
	}
	switch d.Pane {
	case PaneLive, PaneStranded:
		pv := l.Config.Plan(name, b.Body, d.Payload)
		d.Preview = &pv
	case PaneQuarantine:
		rp := l.Config.PlanRestore(name, b.Body, d.Payload, now)
		d.Restore = &rp
	}
	return d, nil
}
