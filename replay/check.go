package replay

import (
	"fmt"
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
	FindingQuarantine    FindingKind = "quarantine"
	FindingMalformed     FindingKind = "malformed"
)

// Finding is one thing the estate's missing alerting would have paged about.
type Finding struct {
	Kind  FindingKind `json:"kind"`
	Count int         `json:"count"`
	// Oldest is the Last-Modified of the oldest blob concerned.
	Oldest  *time.Time `json:"oldest,omitempty"`
	Message string     `json:"message"`
	// Names are the blobs concerned, oldest first.
	Names []string `json:"-"`
}

// CheckOptions are the thresholds of a check.
type CheckOptions struct {
	// ExpiringWithin: a stranded or quarantined blob this close to lifecycle deletion is about to be lost.
	ExpiringWithin time.Duration
	// MaxQuarantine: more quarantined blobs than this is a finding.
	MaxQuarantine int
}

// DefaultCheckOptions are check's defaults.
func DefaultCheckOptions() CheckOptions { return CheckOptions{ExpiringWithin: 72 * time.Hour} }

// Report is the container's health.
type Report struct {
	Healthy  bool         `json:"healthy"`
	Counts   map[Pane]int `json:"counts"`
	Findings []Finding    `json:"findings"`
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

// Check computes the findings of a snapshot: the check command and the dashboard's badges both call it.
// Malformed payloads are counted among the blobs already read.
func (c Config) Check(s *Snapshot, o CheckOptions) Report {
	r := Report{Counts: map[Pane]int{}, Findings: []Finding{}}
	for _, p := range Panes {
		r.Counts[p] = 0
	}
	groups := map[FindingKind][]*Item{}
	for i := range s.Items {
		it := &s.Items[i]
		r.Counts[it.Pane]++
		switch it.Pane {
		case PaneStranded:
			groups[FindingStranded] = append(groups[FindingStranded], it)
		case PaneQuarantine:
			groups[FindingQuarantine] = append(groups[FindingQuarantine], it)
		case PaneLive:
			if it.Age > c.LiveGrace {
				groups[FindingReplayStalled] = append(groups[FindingReplayStalled], it)
			}
		}
		if (it.Pane == PaneStranded || it.Pane == PaneQuarantine) && it.ExpiresAt.Sub(s.Now) <= o.ExpiringWithin {
			groups[FindingExpiring] = append(groups[FindingExpiring], it)
		}
		if it.Pane != PaneArchived && it.Summary != nil && it.Summary.Malformed {
			groups[FindingMalformed] = append(groups[FindingMalformed], it)
		}
	}
	if len(groups[FindingQuarantine]) <= o.MaxQuarantine {
		delete(groups, FindingQuarantine)
	}
	for _, k := range []FindingKind{FindingExpiring, FindingStranded, FindingReplayStalled, FindingQuarantine, FindingMalformed} {
		items := groups[k]
		if len(items) == 0 {
			continue
		}
		sort.Slice(items, func(i, j int) bool { return items[i].LastModified.Before(items[j].LastModified) })
		oldest := items[0].LastModified
		f := Finding{Kind: k, Count: len(items), Oldest: &oldest}
		for _, it := range items {
			f.Names = append(f.Names, it.Name)
		}
		age := HumanDuration(s.Now.Sub(oldest))
		switch k {
		case FindingExpiring:
			f.Message = fmt.Sprintf("%d stranded or quarantined blob(s) within %s of lifecycle deletion (first goes in %s): drain or restore them now, or copy them out", len(items), HumanDuration(o.ExpiringWithin), HumanDuration(firstExpiry(items).Sub(s.Now)))
		case FindingStranded:
			f.Message = fmt.Sprintf("%d stranded blob(s), oldest %s old: nothing replays them; run `deadletter drain`", len(items), age)
		case FindingReplayStalled:
			f.Message = fmt.Sprintf("%d live blob(s) older than %s, oldest %s: the replay function is not consuming (stopped, failing, or its subscription is gone)", len(items), c.LiveGrace, age)
		case FindingQuarantine:
			f.Message = fmt.Sprintf("%d quarantined blob(s), oldest %s old: inspect with `deadletter show`, resume capped events with `deadletter restore`", len(items), age)
		case FindingMalformed:
			f.Message = fmt.Sprintf("%d malformed payload(s): the replay can never publish them; inspect with `deadletter show`", len(items))
		}
		r.Findings = append(r.Findings, f)
	}
	r.Healthy = len(r.Findings) == 0
	return r
}

func firstExpiry(items []*Item) time.Time {
	first := items[0].ExpiresAt
	for _, it := range items {
		if it.ExpiresAt.Before(first) {
			first = it.ExpiresAt
		}
	}
	return first
}

// Forecast is what draining a set of blobs sets in motion, from their summaries.
type Forecast struct {
	Blobs, Events, Malformed, Unread int
	Bytes                            int64
	Verdicts                         VerdictCounts
}

// ForecastDrain adds up what the replay function will do with the given blobs once they are drained.
func ForecastDrain(items []Item) Forecast {
	f := Forecast{Blobs: len(items)}
	for _, it := range items {
		f.Bytes += it.Size
		if it.Summary == nil {
			f.Unread++
			continue
		}
		f.Events += it.Summary.Events
		if it.Summary.Malformed {
			f.Malformed++
		}
		for i, n := range it.Summary.Verdicts {
			f.Verdicts[i] += n
		}
	}
	return f
}

// Lines says the forecast in words (the CLI confirmation and the dashboard dialog).
func (f Forecast) Lines(c Config) []string {
	out := []string{fmt.Sprintf("%d blob(s), %d event(s), %d bytes, each re-uploaded as it is so a fresh BlobCreated reaches the replay.", f.Blobs, f.Events, f.Bytes)}
	v := f.Verdicts
	q := v.Of(VerdictCap) + v.Of(VerdictNotIdempotent) + v.Of(VerdictUnroutable)
	out = append(out, fmt.Sprintf("The replay function will then republish %d event(s) and quarantine %d (cap %d, notIdempotent %d, unroutable %d).",
		v.Of(VerdictReplay), q, v.Of(VerdictCap), v.Of(VerdictNotIdempotent), v.Of(VerdictUnroutable)))
	if f.Malformed > 0 {
		out = append(out, fmt.Sprintf("%d malformed blob(s) go to quarantine whole.", f.Malformed))
	}
	if n := v.Of(VerdictUnknown); n > 0 {
		out = append(out, fmt.Sprintf("%d event(s) need --handlers to predict.", n))
	}
	if f.Unread > 0 {
		out = append(out, fmt.Sprintf("%d blob(s) not read yet: their events are not counted.", f.Unread))
	}
	return out
}
