package rules

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"
)

// The incident picture: when dead letters started, on which subscriptions, for which reasons, what the replay
// will do with them, and what the lifecycle rule deletes before anyone acts — the same facts for the dashboard's
// overview and for `deadletter report`, from one snapshot.

// Fate is what becomes of an event once the replay function reads it (the verdict it acts on), or of a whole
// blob it cannot take (crash, malformed).
type Fate uint8

// The fates, in the order the picture lists them.
const (
	FateReplay Fate = iota
	FateCap
	FateNotIdempotent
	FateUnroutable
	FateUnknown
	FateCrash
	FateMalformed
	numFates
)

var fateNames = [numFates]string{"replay", "cap", "notIdempotent", "unroutable", "unknown", "crash", "malformed"}

// AllFates lists the fates in order.
var AllFates = [numFates]Fate{FateReplay, FateCap, FateNotIdempotent, FateUnroutable, FateUnknown, FateCrash, FateMalformed}

func (f Fate) String() string { return fateNames[f] }

// FateCounts counts events per fate.
type FateCounts [numFates]int

// PictureOptions bound the picture's timeline.
type PictureOptions struct {
	// Window is how far back the timeline reaches from the service time (72h by default).
	Window time.Duration
}

// Picture is the incident at a glance. Event counts come from payloads read so far; Unread says how many blobs
// are still to be read.
type Picture struct {
	Now    time.Time
	Window time.Duration
	// Hours are the timeline's hours, oldest first; Subscriptions by events, most first.
	Hours         []time.Time
	Subscriptions []string
	// Timeline[h][s] is the events dead-lettered in hour h by subscription s (the hour of the blob's name, when
	// Event Grid wrote it). Handled root blobs count through their copy, so no event counts twice.
	Timeline [][]int
	// Before counts the events older than the window, or in blobs whose name carries no hour.
	Before int
	// BurstStart is the first hour of the latest run of hours with dead letters (gaps of up to two quiet hours
	// do not end a run); zero when the window holds none.
	BurstStart time.Time
	// Reasons are the deadLetterReasons, most events first; Matrix[s][r] the events of subscription s with
	// reason r and what their deliveries last ended in.
	Reasons []string
	Matrix  [][]Cell
	// Fates[s] is what the replay function will do with subscription s's waiting events (live and stranded
	// root blobs, not handled).
	Fates []FateCounts
	// Totals[s] is every event of subscription s the picture counts, in the window or not.
	Totals []int
	// Loss is what the lifecycle rule deletes within 24 and 72 hours of stranded and quarantined blobs.
	Loss []Loss
	// Blobs and Events are what the picture counts (Events of the blobs read, a payload that does not parse counting
	// one); Unread the blobs not read yet.
	Blobs, Events, Unread int
}

// Cell is one subscription × reason of the matrix.
type Cell struct {
	Events int
	// Outcome is the most frequent lastDeliveryOutcome of those events' blobs.
	Outcome  string
	outcomes Counts
}

// Loss is what the lifecycle rule takes within a horizon if nobody acts.
type Loss struct {
	Within        time.Duration
	Blobs, Events int
	// Unread counts the blobs among them whose events are not known yet.
	Unread int
}

// LossHorizons are the horizons the picture reports.
var LossHorizons = []time.Duration{24 * time.Hour, 72 * time.Hour}

// Picture works the snapshot out into the incident picture.
func (c Config) Picture(s *Snapshot, o PictureOptions) Picture {
	b := c.NewPictureBuilder(o)
	for i := range s.Items {
		b.pb.add(s.Items[i], c.AlertsOf(s.Items[i], s.Now))
	}
	b.pb.now(s.Now)
	return b.Picture()
}

// PictureBuilder adds the picture up page by page, as Checker adds up a check, so a report of a million blobs
// holds tallies, never the container. Each page is judged at its own service time (its alerts, the lifecycle's
// horizons); the timeline ends at the hour of the latest.
type PictureBuilder struct {
	cfg Config
	pb  *pictureBuilder
}

// NewPictureBuilder starts an empty picture.
func (c Config) NewPictureBuilder(o PictureOptions) *PictureBuilder {
	if o.Window <= 0 {
		o.Window = 72 * time.Hour
	}
	return &PictureBuilder{cfg: c, pb: newPictureBuilder(o.Window)}
}

// Add takes blobs classified at the service time now, their payloads read where they could be and their
// replay copies marked (ArchivedTwin, QuarantineTwin).
func (b *PictureBuilder) Add(items []Item, now time.Time) {
	b.pb.now(now)
	for i := range items {
		b.pb.add(&items[i], b.cfg.AlertsOf(&items[i], now))
	}
}

// Picture is the picture of every blob added.
func (b *PictureBuilder) Picture() Picture { return b.pb.finish() }

// pictureBuilder adds the picture up one blob at a time, then lays it out at the latest service time.
type pictureBuilder struct {
	p            Picture
	noHour       int // events in blobs whose name carries no hour
	losses       []lossEntry
	subIndex     map[string]int
	subs         []*subTally
	reasonIndex  map[string]int
	reasonTotals map[string]int
}

// lossEntry is a stranded or quarantined blob the lifecycle rule will delete: when (Unix nanoseconds), and its
// events (unread: not known yet).
type lossEntry struct {
	at     int64
	events int
	unread bool
}

// subTally is what one subscription adds up to.
type subTally struct {
	hours map[int64]int // events by the hour of the blob's name, in hours since the Unix epoch
	cells map[int]*Cell
	fates FateCounts
	total int
}

func newPictureBuilder(window time.Duration) *pictureBuilder {
	pb := &pictureBuilder{p: Picture{Window: window}, subIndex: map[string]int{}, reasonIndex: map[string]int{}, reasonTotals: map[string]int{}}
	for _, w := range LossHorizons {
		pb.p.Loss = append(pb.p.Loss, Loss{Within: w})
	}
	return pb
}

func (pb *pictureBuilder) now(now time.Time) {
	if now.After(pb.p.Now) {
		pb.p.Now = now
	}
}

func (pb *pictureBuilder) sub(name string) *subTally {
	if name == "" {
		name = "(other)"
	}
	i, ok := pb.subIndex[name]
	if !ok {
		i = len(pb.subs)
		pb.subIndex[name] = i
		pb.subs = append(pb.subs, &subTally{hours: map[int64]int{}, cells: map[int]*Cell{}})
	}
	return pb.subs[i]
}

func (pb *pictureBuilder) add(it *Item, a Alerts) {
	p := &pb.p
	if (it.Pane == PaneStranded || it.Pane == PaneQuarantine) && !a.Handled {
		pb.addLoss(it, a)
	}
	if a.Handled {
		return // its copy counts its events
	}
	p.Blobs++
	sm := it.Summary
	if sm == nil {
		if it.ReadErr == "" {
			p.Unread++
		}
		return
	}
	st := pb.sub(it.Parsed.Subscription)
	// A blob whose events cannot be counted (a payload that does not parse) is at least one dead letter: it
	// counts one, so no number that leads to it reads "·".
	n := max(sm.Events, 1)
	st.total += n
	p.Events += n
	if h := it.Parsed.Hour(); !h.IsZero() {
		st.hours[h.Unix()/3600] += n
	} else {
		pb.noHour += n
	}
	pb.addReasons(st, sm)
	if IsRoot(it.Name) {
		addFates(&st.fates, sm, n)
	}
}

// addLoss keeps when the lifecycle rule deletes the blob: the horizons are counted from the latest clock, at the
// end (a blob listed minutes before it is that much nearer its deletion by then).
func (pb *pictureBuilder) addLoss(it *Item, a Alerts) {
	e := lossEntry{at: a.ExpiresAt.UnixNano(), unread: it.Summary == nil}
	if it.Summary != nil {
		e.events = it.Summary.Events
	}
	pb.losses = append(pb.losses, e)
}

// countLoss counts the blobs the lifecycle rule deletes within each horizon of now.
func (pb *pictureBuilder) countLoss(p *Picture) {
	for k := range p.Loss {
		l := &p.Loss[k]
		for _, e := range pb.losses {
			if time.Unix(0, e.at).Sub(p.Now) > l.Within {
				continue
			}
			l.Blobs++
			if e.unread {
				l.Unread++
			} else {
				l.Events += e.events
			}
		}
	}
}

func (pb *pictureBuilder) addReasons(st *subTally, sm *Summary) {
	for _, r := range sm.Reasons {
		ri, ok := pb.reasonIndex[r.Value]
		if !ok {
			ri = len(pb.reasonIndex)
			pb.reasonIndex[r.Value] = ri
		}
		pb.reasonTotals[r.Value] += r.N
		cell := st.cells[ri]
		if cell == nil {
			cell = &Cell{}
			st.cells[ri] = cell
		}
		cell.Events += r.N
		if o := sm.Outcomes.Top(); o != "" {
			cell.outcomes.addN(o, r.N)
		}
	}
}

// addFates counts what the replay will do with a root blob's events (n of them, as the picture counts it).
func addFates(f *FateCounts, sm *Summary, n int) {
	switch {
	case sm.Malformed:
		f[FateMalformed] += n
	case sm.CrashDepth > 0:
		f[FateCrash] += n
	default:
		for _, v := range AllVerdicts {
			f[verdictFate(v)] += sm.Verdicts.Of(v)
		}
	}
}

// byCount sorts names by their count, most first, ties by name.
func byCount(names []string, count func(string) int) {
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(count(b), count(a)), strings.Compare(a, b)) })
}

// finish orders subscriptions and reasons by events and lays the tallies out in that order.
func (pb *pictureBuilder) finish() Picture {
	p := pb.p
	last := p.Now.UTC().Truncate(time.Hour)
	first := last.Add(-p.Window + time.Hour)
	p.Hours = nil
	for h := first; !h.After(last); h = h.Add(time.Hour) {
		p.Hours = append(p.Hours, h)
	}
	p.Before = pb.noHour
	p.Subscriptions = slices.Collect(maps.Keys(pb.subIndex))
	byCount(p.Subscriptions, func(n string) int { return pb.subs[pb.subIndex[n]].total })
	p.Reasons = slices.Collect(maps.Keys(pb.reasonIndex))
	byCount(p.Reasons, func(r string) int { return pb.reasonTotals[r] })
	n := len(p.Subscriptions)
	p.Timeline = make([][]int, len(p.Hours))
	for h := range p.Timeline {
		p.Timeline[h] = make([]int, n)
	}
	p.Matrix, p.Fates, p.Totals = make([][]Cell, n), make([]FateCounts, n), make([]int, n)
	for si, name := range p.Subscriptions {
		st := pb.subs[pb.subIndex[name]]
		for h, e := range st.hours {
			// (by the hour's time, not its number: a window of 150m starts on a half hour)
			if at := time.Unix(h*3600, 0).UTC(); !at.Before(first) && !at.After(last) {
				p.Timeline[int(at.Sub(first)/time.Hour)][si] += e
			} else {
				p.Before += e
			}
		}
		p.Matrix[si] = make([]Cell, len(p.Reasons))
		for ri, r := range p.Reasons {
			if cell := st.cells[pb.reasonIndex[r]]; cell != nil {
				cell.outcomes.sort()
				p.Matrix[si][ri] = Cell{Events: cell.Events, Outcome: cell.outcomes.Top()}
			}
		}
		p.Fates[si], p.Totals[si] = st.fates, st.total
	}
	p.Loss = slices.Clone(pb.p.Loss) // (counted afresh: a picture asked for twice counts once)
	pb.countLoss(&p)
	p.BurstStart = burstStart(p)
	return p
}

// verdictFate maps a verdict the replay acts on to its fate.
func verdictFate(v Verdict) Fate {
	switch v {
	case VerdictReplay:
		return FateReplay
	case VerdictCap:
		return FateCap
	case VerdictNotIdempotent:
		return FateNotIdempotent
	case VerdictUnroutable:
		return FateUnroutable
	}
	return FateUnknown
}

// maxBurstGap is how many quiet hours a burst may hold and still be one.
const maxBurstGap = 2

func burstStart(p Picture) time.Time {
	total := func(h int) int {
		n := 0
		for _, e := range p.Timeline[h] {
			n += e
		}
		return n
	}
	end := -1
	for h := len(p.Hours) - 1; h >= 0; h-- {
		if total(h) > 0 {
			end = h
			break
		}
	}
	if end < 0 {
		return time.Time{}
	}
	start, quiet := end, 0
	for h := end - 1; h >= 0; h-- {
		if total(h) > 0 {
			start, quiet = h, 0
			continue
		}
		if quiet++; quiet > maxBurstGap {
			break
		}
	}
	return p.Hours[start]
}

// HourTotal is the events of hour h over every subscription.
func (p Picture) HourTotal(h int) int {
	n := 0
	for _, e := range p.Timeline[h] {
		n += e
	}
	return n
}

// SubscriptionEvents is the events of subscription s in the window.
func (p Picture) SubscriptionEvents(s int) int {
	n := 0
	for h := range p.Timeline {
		n += p.Timeline[h][s]
	}
	return n
}

// addN counts v n more times.
func (cs *Counts) addN(v string, n int) {
	for i := range *cs {
		if (*cs)[i].Value == v {
			(*cs)[i].N += n
			return
		}
	}
	*cs = append(*cs, Count{Value: v, N: n})
}
