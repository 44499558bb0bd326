package replay

import (
	"cmp"
	"maps"
	"slices"
	"strings"
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
	// Names are the blobs concerned, oldest first (only when CheckOptions.Names asked for them); Written holds
	// each one's Last-Modified, in the same order.
	Names   []string
	Written []time.Time
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
	// Lost names the blobs the previous pass found expiring that the lifecycle rule has deleted since (see
	// Config.Lost); watch sets it, and Changes reports them as lost rather than resolved.
	Lost []string
	// Handled and Acked count the blobs kept out of the findings: lingering copies the replay already handled,
	// and blobs an operator acknowledged.
	Handled, Acked int
	// Unreadable counts the root and quarantine blobs whose payload could not be read (refused entries, reads
	// that failed, payloads over the size limit): whatever they hold is unknown, so the report is not healthy.
	// FirstUnreadable names one, with why.
	Unreadable      int
	FirstUnreadable string
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
	k := c.NewChecker(o)
	k.Add(s.Items, s.Now)
	return k.Report()
}

// Checker adds a report up page by page, so a check of a million-blob container holds only what its findings
// name, never the container.
type Checker struct {
	cfg Config
	o   CheckOptions
	r   Report
	acc [len(FindingKinds)]findingAcc
}

// NewChecker starts an empty report.
func (c Config) NewChecker(o CheckOptions) *Checker {
	k := &Checker{cfg: c, o: o, r: Report{Counts: map[Pane]int{}, Findings: []Finding{}}}
	for _, p := range Panes {
		k.r.Counts[p] = 0
	}
	return k
}

// Add takes blobs classified at the service time now (their payloads read, where the findings need them).
func (k *Checker) Add(items []Item, now time.Time) {
	if now.After(k.r.Now) {
		k.r.Now = now
	}
	for i := range items {
		it := &items[i]
		k.r.Counts[it.Pane]++
		if it.ReadFailed && it.Pane != PaneArchived {
			if k.r.Unreadable == 0 {
				k.r.FirstUnreadable = it.Name + ": " + it.ReadErr
			}
			k.r.Unreadable++
		}
		a := k.cfg.AlertsOf(it, now)
		switch {
		case a.Acked:
			k.r.Acked++
			if a.Expiring {
				// An ack silences a blob someone is on, never the lifecycle rule about to delete it.
				k.of(FindingExpiring).add(it, k.o.Names)
			}
			continue
		case a.Handled:
			k.r.Handled++
			continue
		}
		names := k.o.Names
		if it.Pane == PaneStranded {
			k.of(FindingStranded).add(it, names)
		}
		if it.Pane == PaneQuarantine {
			k.of(FindingQuarantine).add(it, names)
		}
		if a.Stalled {
			k.of(FindingReplayStalled).add(it, names)
		}
		if a.Expiring {
			k.of(FindingExpiring).add(it, names)
		}
		if a.Malformed {
			k.of(FindingMalformed).add(it, names)
		}
		if a.Crash {
			k.of(FindingCrash).add(it, names)
		}
	}
}

// Report is the findings so far.
func (k *Checker) Report() Report {
	r := k.r
	r.Counts = maps.Clone(k.r.Counts)
	r.Findings = []Finding{}
	for i, kind := range FindingKinds {
		if kind == FindingQuarantine && k.acc[i].count <= k.o.MaxQuarantine {
			continue
		}
		if f, ok := k.acc[i].finding(kind, k.cfg); ok {
			r.Findings = append(r.Findings, f)
		}
	}
	r.Healthy = len(r.Findings) == 0 && r.Unreadable == 0
	return r
}

// of is the accumulator of a kind: k.acc holds one per FindingKinds entry, in that order (found by a look over
// six kinds, so no list of positions has to be kept in step with it by hand).
func (k *Checker) of(kind FindingKind) *findingAcc {
	for i, fk := range FindingKinds {
		if fk == kind {
			return &k.acc[i]
		}
	}
	panic("replay: unknown finding kind " + string(kind))
}

type findingAcc struct {
	count  int
	oldest time.Time
	blobs  []namedBlob
}

// namedBlob is what a finding keeps of a blob: its name and when it was written, not the blob.
type namedBlob struct {
	name string
	at   time.Time
}

func (f *findingAcc) add(it *Item, names bool) {
	if f.count == 0 || it.LastModified.Before(f.oldest) {
		f.oldest = it.LastModified
	}
	f.count++
	if names {
		f.blobs = append(f.blobs, namedBlob{it.Name, it.LastModified})
	}
}

// finding is the accumulated finding; the first of its blobs to expire is the oldest (one retention for all).
func (f *findingAcc) finding(k FindingKind, c Config) (Finding, bool) {
	if f.count == 0 {
		return Finding{}, false
	}
	out := Finding{Kind: k, Count: f.count, Oldest: f.oldest, FirstExpiry: c.ExpiresAt(f.oldest)}
	if f.blobs != nil {
		blobs := slices.Clone(f.blobs)
		slices.SortStableFunc(blobs, func(a, b namedBlob) int { return cmp.Or(a.at.Compare(b.at), strings.Compare(a.name, b.name)) })
		out.Names, out.Written = make([]string, len(blobs)), make([]time.Time, len(blobs))
		for i, b := range blobs {
			out.Names[i], out.Written[i] = b.name, b.at
		}
	}
	return out, true
}
