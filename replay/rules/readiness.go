package rules

import (
	"sort"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
)

// Readiness answers the question an on-call asks before draining: has this subscription's handler recovered, or
// will its events only dead-letter again? The container holds the evidence: Event Grid writes a dead letter only
// when an event's delivery attempts ran out, so a subscription with a dead letter written inside the last TTL
// window still had a failing handler then.
type Readiness struct {
	Subscription string
	// NewestDeadLetter is when Event Grid last wrote a dead letter of this subscription, as far as the container
	// tells (see DeadLetteredAt); zero when none is there.
	NewestDeadLetter time.Time
	// LastWindow counts the dead-letter blobs written within the last TTL window.
	LastWindow int
	// Failing: the newest dead letter is inside the window — the handler was still failing then, so drained
	// events of this subscription will most likely dead-letter again, one attempt further on.
	Failing bool
}

// DeadLetteredAt is when Event Grid wrote the dead letter a blob holds, as far as its listing tells: Event Grid
// names a dead letter by the hour it wrote it, so it is within that hour — at the blob's Last-Modified when that
// falls inside the hour (a root blob as written, or the replay's copy of it made at once), else at the end of the
// hour (the blob was drained since, or the replay took it later). Restored copies are not dead letters (ok false),
// nor are names without an hour whose blob was rewritten.
func DeadLetteredAt(bi blob.Info, name BlobName) (time.Time, bool) {
	marks := MarksOf(bi.Metadata)
	if marks.Restored() {
		return time.Time{}, false
	}
	if name.Hour().IsZero() {
		return bi.LastModified, !marks.Drained()
	}
	end := name.Hour().Add(time.Hour - time.Second)
	switch {
	case bi.LastModified.Before(name.Hour()):
		return name.Hour(), true
	case bi.LastModified.After(end):
		return end, true
	}
	return bi.LastModified, true
}

// Readiness works out, per subscription of the items (every pane: the replay's copies are evidence too), when its
// newest dead letter was written and whether its handler was still failing within the TTL before now. Most
// recently failing first, then by name.
func (c Config) Readiness(items []*Item, now time.Time) []Readiness {
	b := c.NewReadinessBuilder()
	for _, it := range items {
		b.add(&it.Info, it.Parsed, now)
	}
	return b.readiness(now)
}

// ReadinessBuilder adds readiness up page by page (a report streams the container): it keeps, per subscription,
// the newest dead letter and the times of those within a TTL of their page's clock — all a later clock can still
// count in its window.
type ReadinessBuilder struct {
	ttl    time.Duration
	latest time.Time
	by     map[string]*readinessTally
}

type readinessTally struct {
	newest time.Time
	recent []int64 // when the dead letters inside the window were written, in Unix nanoseconds
}

// NewReadinessBuilder starts with no dead letter seen.
func (c Config) NewReadinessBuilder() *ReadinessBuilder {
	return &ReadinessBuilder{ttl: c.TTL, by: map[string]*readinessTally{}}
}

// Add takes blobs listed at the service time now.
func (b *ReadinessBuilder) Add(items []Item, now time.Time) {
	for i := range items {
		b.add(&items[i].Info, items[i].Parsed, now)
	}
	if now.After(b.latest) {
		b.latest = now
	}
}

func (b *ReadinessBuilder) add(bi *blob.Info, name BlobName, now time.Time) {
	sub := name.Subscription
	if sub == "" || bi.Refused != "" {
		return
	}
	at, ok := DeadLetteredAt(*bi, name)
	if !ok {
		return
	}
	t := b.by[sub]
	if t == nil {
		t = &readinessTally{}
		b.by[sub] = t
	}
	if at.After(t.newest) {
		t.newest = at
	}
	if b.inWindow(now, at) {
		t.recent = append(t.recent, at.UnixNano())
	}
}

// inWindow reports whether a dead letter written at at is within the TTL before now: its handler was still
// failing then.
func (b *ReadinessBuilder) inWindow(now, at time.Time) bool { return now.Sub(at) < b.ttl }

// Readiness is every subscription's readiness at the latest clock added, ordered as Config.Readiness orders it.
func (b *ReadinessBuilder) Readiness() []Readiness { return b.readiness(b.latest) }

func (b *ReadinessBuilder) readiness(now time.Time) []Readiness {
	out := make([]Readiness, 0, len(b.by))
	for sub, t := range b.by {
		r := Readiness{Subscription: sub, NewestDeadLetter: t.newest, Failing: b.inWindow(now, t.newest)}
		for _, at := range t.recent {
			if b.inWindow(now, time.Unix(0, at)) {
				r.LastWindow++
			}
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].NewestDeadLetter.Equal(out[j].NewestDeadLetter) {
			return out[i].NewestDeadLetter.After(out[j].NewestDeadLetter)
		}
		return out[i].Subscription < out[j].Subscription
	})
	return out
}

// ReadinessOf keeps, of ready, the subscriptions the items belong to (in ready's order): what a drain of the items
// needs to know. Never nil.
func ReadinessOf(ready []Readiness, items []Item) []Readiness {
	subs := map[string]bool{}
	for i := range items {
		subs[items[i].Parsed.Subscription] = true
	}
	out := []Readiness{}
	for _, r := range ready {
		if subs[r.Subscription] {
			out = append(out, r)
		}
	}
	return out
}

// CyclesLeft is how many more times the events of these items may be republished and dead-letter again before
// the cap quarantines them: the fewest over the items that hold an event the replay republishes (their highest
// attempt), or -1 when none such has been read.
func (c Config) CyclesLeft(items []Item) int {
	t := NewRepublishTally()
	for i := range items {
		c.AddRepublish(&t, &items[i])
	}
	return t.CyclesLeft
}

// Republishes reports whether a drain of items would have the replay republish any event — false only when
// every one was read and none holds an event the replay would (or, without a register, may) republish — all
// quarantined, malformed, crashing:
// a failing handler then makes no difference to them.
func Republishes(items []Item) bool {
	for i := range items {
		if ItemRepublishes(&items[i]) {
			return true
		}
	}
	return false
}

// RepublishTally is Republishes and CyclesLeft added up item by item (AddRepublish), for a caller that groups a
// large drain's items without keeping a copy of them.
type RepublishTally struct {
	Republishes bool
	CyclesLeft  int // -1 until an item that holds an event the replay republishes is added
}

// NewRepublishTally is the tally of no item.
func NewRepublishTally() RepublishTally { return RepublishTally{CyclesLeft: -1} }

// AddRepublish adds one item to t.
func (c Config) AddRepublish(t *RepublishTally, it *Item) {
	s := it.Summary
	t.Republishes = t.Republishes || ItemRepublishes(it)
	if s == nil || s.Malformed || !mayRepublish(s) {
		return // nothing of it is republished: the cap does not count it down
	}
	n := c.MaxReplays - 1 - int(min(float64(s.MaxReplayAttempt), float64(c.MaxReplays)))
	if t.CyclesLeft < 0 || n < t.CyclesLeft {
		t.CyclesLeft = max(n, 0)
	}
}

// ItemRepublishes is Republishes of one item: unread, or read and holding an event the replay would (or may)
// republish, neither malformed nor crashing it.
func ItemRepublishes(it *Item) bool {
	s := it.Summary
	return s == nil || !s.Malformed && s.CrashDepth == 0 && mayRepublish(s)
}

// mayRepublish: the summary holds an event the replay republishes, or one it may (its handler unknown without a
// register).
func mayRepublish(s *Summary) bool {
	return s.Verdicts.Of(VerdictReplay)+s.Verdicts.Of(VerdictUnknown) > 0
}

// Handler verdicts combined from both witnesses (HandlerNow).
const (
	// NowFailing: Event Grid says the handler is failing now, or — with no word from Event Grid — the container
	// got a dead letter of it within the TTL.
	NowFailing = "failing"
	// NowRecovered: the container got a dead letter within the TTL, but Event Grid says deliveries succeed since
	// (healthy or recovering): the handler came back; the container, a TTL behind, has not caught up yet.
	NowRecovered = "recovered"
	// NowHealthy: Event Grid says deliveries succeed, and the container got no dead letter within the TTL.
	NowHealthy = "healthy"
	// NowQuiet: no dead letter within the TTL and no word from Event Grid that says more (none configured, not
	// read, or no deliveries in its window): nothing says it fails, nothing proves it works.
	NowQuiet = "quiet"
)

// HandlerNow is the one verdict on a subscription's handler, from the container's witness (r: a TTL behind) and
// Event Grid's (v: minutes behind, HandlerUnknown when there is none), and which witness decided it. The fresher
// witness decides when it has something to say; the container decides only when Event Grid is silent.
func HandlerNow(r Readiness, v HandlerVerdict) (verdict, by string) {
	switch {
	case v == HandlerFailing:
		return NowFailing, "eventGrid"
	case (v == HandlerHealthy || v == HandlerRecovering) && r.Failing:
		return NowRecovered, "eventGrid"
	case v == HandlerHealthy || v == HandlerRecovering:
		return NowHealthy, "eventGrid"
	case r.Failing:
		return NowFailing, "container"
	}
	return NowQuiet, "container"
}
