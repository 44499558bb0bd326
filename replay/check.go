package replay

import (
	"sort"
	"time"
)

// FindingKind names what needs a human.
type FindingKind string

// The findings check reports, worst first.
const (
	FindingExpiring      FindingKind = "expiring"
	FindingStranded      FindingKind = "stranded"
	FindingReplayStalled FindingKind = "replayStalled"
	FindingCrash         FindingKind = "crash"
	FindingQuarantine    FindingKind = "quarantine"
	FindingMalformed     FindingKind = "malformed"
)

// FindingKinds lists the kinds in the order reports give them.
var FindingKinds = [...]FindingKind{FindingExpiring, FindingStranded, FindingReplayStalled, FindingCrash, FindingQuarantine, FindingMalformed}

// Finding is one thing the estate's missing alerting would have paged about.
type Finding struct {
	Kind  FindingKind
	Count int
	// Oldest is the Last-Modified of the oldest blob concerned; FirstExpiry the earliest lifecycle deletion.
	Oldest, FirstExpiry time.Time
	// Names are the blobs concerned, oldest first (only when CheckOptions.Names asked for them).
	Names []string
}

// CheckOptions are the thresholds of a check beyond the Config's.
type CheckOptions struct {
	// MaxQuarantine: more quarantined blobs than this is a finding.
	MaxQuarantine int
	// Names collects the blobs behind each finding (check and watch name them; the dashboard's badges only count).
	Names bool
}

// Report is the container's health.
type Report struct {
	Healthy  bool
	Now      time.Time
	Counts   map[Pane]int
	Findings []Finding
	// Handled and Acked count the blobs kept out of the findings: lingering copies the replay already handled,
	// and blobs an operator acknowledged.
	Handled, Acked int
}

// Find returns the finding of a kind, if any.
func (r Report) Find(k FindingKind) (Finding, bool) {
	for _, f := range r.Findings {
		if f.Kind == k {
			return f, true
		}
	}
	return Finding{}, false
}

// Check computes the findings of a snapshot: the check command, watch, the metrics and the dashboard's badges all
// call it. Payload-derived findings (malformed, crash, handled through a quarantine copy) count the blobs read so
// far. One pass, no allocation per blob unless names are wanted.
func (c Config) Check(s *Snapshot, o CheckOptions) Report {
	r := Report{Now: s.Now, Counts: map[Pane]int{}, Findings: []Finding{}}
	for _, p := range Panes {
		r.Counts[p] = 0
	}
	var acc [len(FindingKinds)]findingAcc
	for i := range s.Items {
		it := &s.Items[i]
		r.Counts[it.Pane]++
		a := c.AlertsOf(it, s.Now)
		switch {
		case a.Acked:
			r.Acked++
			continue
		case a.Handled:
			r.Handled++
			continue
		}
		if it.Pane == PaneStranded {
			acc[iStranded].add(it, o.Names)
		}
		if it.Pane == PaneQuarantine {
			acc[iQuarantine].add(it, o.Names)
		}
		if a.Stalled {
			acc[iStalled].add(it, o.Names)
		}
		if a.Expiring {
			acc[iExpiring].add(it, o.Names)
		}
		if a.Malformed {
			acc[iMalformed].add(it, o.Names)
		}
		if a.Crash {
			acc[iCrash].add(it, o.Names)
		}
	}
	if acc[iQuarantine].count <= o.MaxQuarantine {
		acc[iQuarantine] = findingAcc{}
	}
	for i, k := range FindingKinds {
		if f, ok := acc[i].finding(k); ok {
			r.Findings = append(r.Findings, f)
		}
	}
	r.Healthy = len(r.Findings) == 0
	return r
}

// Positions in FindingKinds, for the accumulators of one pass.
const (
	iExpiring = iota
	iStranded
	iStalled
	iCrash
	iQuarantine
	iMalformed
)

type findingAcc struct {
	count               int
	oldest, firstExpiry time.Time
	items               []*Item
}

func (f *findingAcc) add(it *Item, names bool) {
	if f.count == 0 || it.LastModified.Before(f.oldest) {
		f.oldest = it.LastModified
	}
	if f.count == 0 || it.ExpiresAt.Before(f.firstExpiry) {
		f.firstExpiry = it.ExpiresAt
	}
	f.count++
	if names {
		f.items = append(f.items, it)
	}
}

func (f *findingAcc) finding(k FindingKind) (Finding, bool) {
	if f.count == 0 {
		return Finding{}, false
	}
	out := Finding{Kind: k, Count: f.count, Oldest: f.oldest, FirstExpiry: f.firstExpiry}
	if f.items != nil {
		sort.SliceStable(f.items, func(i, j int) bool {
			a, b := f.items[i], f.items[j]
			return a.LastModified.Before(b.LastModified) || a.LastModified.Equal(b.LastModified) && a.Name < b.Name
		})
		out.Names = make([]string, len(f.items))
		for i, it := range f.items {
			out.Names[i] = it.Name
		}
	}
	return out, true
}
