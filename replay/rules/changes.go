package rules

import (
	"slices"
	"time"
)

// ChangeEvent is what happened to a finding between two passes of watch.
type ChangeEvent string

// The events of watch: the state found by the first pass, findings that appeared, findings that went away.
const (
	ChangeState    ChangeEvent = "state"
	ChangeNew      ChangeEvent = "new"
	ChangeResolved ChangeEvent = "resolved"
	// ChangeLost: blobs that were expiring are gone, deleted by the lifecycle rule before anyone handled them —
	// not a resolution.
	ChangeLost ChangeEvent = "lost"
)

// KindError is watch's own kind for a pass that could not read the container (and for when it can again).
const KindError FindingKind = "error"

// MaxChangeNames is how many blob names one change carries; the rest are counted.
const MaxChangeNames = 20

// Change is one line of watch: for one kind of finding, the blobs that appeared or went away in one pass —
// grouped, so a notifier hears "12 new stranded blobs" once, not twelve times.
type Change struct {
	Time  time.Time
	Kind  FindingKind
	Event ChangeEvent
	// Count is how many blobs the change is about; Total how many of this kind there are now.
	Count, Total int
	// Names are the first MaxChangeNames of them, oldest first; More counts the rest.
	Names []string
	More  int
	// Detail is free text for the error kind.
	Detail string
}

// Changes compares two reports (made with CheckOptions.Names) and says, per kind, what appeared and what went
// away. A nil prev is the first pass: one state line per kind found. A replay stall is one begin and one end, not
// one line per live blob.
func Changes(prev *Report, cur Report, now time.Time) []Change {
	now = now.UTC().Truncate(time.Second)
	var out []Change
	if prev == nil {
		for _, f := range cur.Findings {
			out = append(out, change(now, f.Kind, ChangeState, f.Names, f.Count))
		}
		return out
	}
	for _, k := range FindingKinds {
		was, _ := prev.Find(k)
		is, _ := cur.Find(k)
		if k == FindingReplayStalled {
			switch {
			case was.Count == 0 && is.Count > 0:
				out = append(out, change(now, k, ChangeNew, is.Names, is.Count))
			case was.Count > 0 && is.Count == 0:
				out = append(out, change(now, k, ChangeResolved, was.Names, 0))
			}
			continue
		}
		if added := missing(is.Names, was.Names); len(added) > 0 {
			out = append(out, change(now, k, ChangeNew, added, is.Count))
		}
		gone := missing(was.Names, is.Names)
		if k == FindingExpiring && len(cur.Lost) > 0 {
			lost := missing(gone, missing(gone, cur.Lost)) // gone ∩ Lost, in gone's order
			if len(lost) > 0 {
				out = append(out, change(now, k, ChangeLost, lost, is.Count))
			}
			gone = missing(gone, cur.Lost)
		}
		if len(gone) > 0 {
			out = append(out, change(now, k, ChangeResolved, gone, is.Count))
		}
	}
	return out
}

func change(now time.Time, k FindingKind, ev ChangeEvent, names []string, total int) Change {
	c := Change{Time: now, Kind: k, Event: ev, Count: len(names), Total: total}
	c.Names = slices.Clone(names[:min(len(names), MaxChangeNames)])
	c.More = len(names) - len(c.Names)
	return c
}

// missing is the names of a that b does not hold, in a's order.
func missing(a, b []string) []string {
	in := make(map[string]struct{}, len(b))
	for _, n := range b {
		in[n] = struct{}{}
	}
	var out []string
	for _, n := range a {
		if _, ok := in[n]; !ok {
			out = append(out, n)
		}
	}
	return out
}
