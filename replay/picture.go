package replay

import (
	"sort"
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
	// Blobs and Events are what the picture counts (Events of the blobs read); Unread the blobs not read yet.
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
	if o.Window <= 0 {
		o.Window = 72 * time.Hour
	}
	p := Picture{Now: s.Now, Window: o.Window}
	last := s.Now.UTC().Truncate(time.Hour)
	first := last.Add(-o.Window + time.Hour)
	for h := first; !h.After(last); h = h.Add(time.Hour) {
		p.Hours = append(p.Hours, h)
	}
	for _, w := range LossHorizons {
		p.Loss = append(p.Loss, Loss{Within: w})
	}
	subIndex := map[string]int{}
	reasonIndex := map[string]int{}
	type perSub struct {
		hours   map[int]int
		cells   map[int]*Cell
		fates   FateCounts
		total   int
		outside int
	}
	var subs []*perSub
	sub := func(name string) *perSub {
		i, ok := subIndex[name]
		if !ok {
			i = len(subs)
			subIndex[name] = i
			subs = append(subs, &perSub{hours: map[int]int{}, cells: map[int]*Cell{}})
		}
		return subs[i]
	}
	reasonTotals := map[string]int{}
	for i := range s.Items {
		it := &s.Items[i]
		a := c.AlertsOf(it, s.Now)
		if (it.Pane == PaneStranded || it.Pane == PaneQuarantine) && !a.Handled {
			for k := range p.Loss {
				if a.DeletesIn <= p.Loss[k].Within {
					p.Loss[k].Blobs++
					if it.Summary == nil {
						p.Loss[k].Unread++
					} else {
						p.Loss[k].Events += it.Summary.Events
					}
				}
			}
		}
		if a.Handled {
			continue // its copy counts its events
		}
		p.Blobs++
		sm := it.Summary
		if sm == nil {
			if it.ReadErr == "" {
				p.Unread++
			}
			continue
		}
		name := it.Parsed.Subscription
		if name == "" {
			name = "(other)"
		}
		ps := sub(name)
		ps.total += sm.Events
		p.Events += sm.Events
		if h := it.Parsed.Hour; !h.IsZero() && !h.Before(first) && !h.After(last) {
			ps.hours[int(h.Sub(first)/time.Hour)] += sm.Events
		} else {
			p.Before += sm.Events
		}
		for _, r := range sm.Reasons {
			ri, ok := reasonIndex[r.Value]
			if !ok {
				ri = len(reasonIndex)
				reasonIndex[r.Value] = ri
			}
			reasonTotals[r.Value] += r.N
			cell := ps.cells[ri]
			if cell == nil {
				cell = &Cell{}
				ps.cells[ri] = cell
			}
			cell.Events += r.N
			if o := sm.Outcomes.Top(); o != "" {
				cell.outcomes.addN(o, r.N)
			}
		}
		if IsRoot(it.Name) {
			switch {
			case sm.Malformed:
				ps.fates[FateMalformed] += sm.Events
			case sm.CrashDepth > 0:
				ps.fates[FateCrash] += sm.Events
			default:
				for _, v := range AllVerdicts {
					ps.fates[verdictFate(v)] += sm.Verdicts.Of(v)
				}
			}
		}
	}
	// Subscriptions by events, most first; reasons likewise.
	names := make([]string, 0, len(subIndex))
	for n := range subIndex {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := subs[subIndex[names[i]]].total, subs[subIndex[names[j]]].total
		return a > b || a == b && names[i] < names[j]
	})
	p.Subscriptions = names
	for r := range reasonIndex {
		p.Reasons = append(p.Reasons, r)
	}
	sort.Slice(p.Reasons, func(i, j int) bool {
		a, b := reasonTotals[p.Reasons[i]], reasonTotals[p.Reasons[j]]
		return a > b || a == b && p.Reasons[i] < p.Reasons[j]
	})
	p.Timeline = make([][]int, len(p.Hours))
	for h := range p.Timeline {
		p.Timeline[h] = make([]int, len(names))
	}
	p.Matrix = make([][]Cell, len(names))
	p.Fates = make([]FateCounts, len(names))
	p.Totals = make([]int, len(names))
	for si, n := range names {
		ps := subs[subIndex[n]]
		for h, e := range ps.hours {
			p.Timeline[h][si] = e
		}
		p.Matrix[si] = make([]Cell, len(p.Reasons))
		for ri, r := range p.Reasons {
			if cell := ps.cells[reasonIndex[r]]; cell != nil {
				cell.outcomes.sort()
				p.Matrix[si][ri] = Cell{Events: cell.Events, Outcome: cell.outcomes.Top()}
			}
		}
		p.Fates[si] = ps.fates
		p.Totals[si] = ps.total
	}
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
