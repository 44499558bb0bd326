package replay

import (
	"fmt"
	"sort"
	"time"
)

// Change is one line of watch: a finding that appeared or went away.
type Change struct {
	Time time.Time   `json:"time"`
	Kind FindingKind `json:"kind"`
	// Event is "new" or "resolved".
	Event string `json:"event"`
	// Name is the blob concerned; empty for container-wide findings (a replay stall).
	Name    string `json:"name,omitempty"`
	Message string `json:"message"`
}

// Changes compares two reports and says what appeared and what went away: per blob for stranded, quarantined,
// expiring and malformed blobs, and as one begin/end for a replay stall. A nil prev means everything is new.
func Changes(prev *Report, cur Report, now time.Time) []Change {
	was := map[FindingKind]map[string]bool{}
	if prev != nil {
		for _, f := range prev.Findings {
			was[f.Kind] = set(f.Names)
		}
	}
	is := map[FindingKind]map[string]bool{}
	var out []Change
	for _, f := range cur.Findings {
		is[f.Kind] = set(f.Names)
		if f.Kind == FindingReplayStalled {
			if len(was[f.Kind]) == 0 {
				out = append(out, Change{Time: now, Kind: f.Kind, Event: "new", Message: "replay stall begins: " + f.Message})
			}
			continue
		}
		for _, n := range f.Names {
			if !was[f.Kind][n] {
				out = append(out, Change{Time: now, Kind: f.Kind, Event: "new", Name: n, Message: describe(f.Kind, n)})
			}
		}
	}
	kinds := make([]FindingKind, 0, len(was))
	for k := range was {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i] < kinds[j] })
	for _, k := range kinds {
		if k == FindingReplayStalled {
			if len(is[k]) == 0 {
				out = append(out, Change{Time: now, Kind: k, Event: "resolved", Message: "replay stall ends: no live blob is older than the grace"})
			}
			continue
		}
		var gone []string
		for n := range was[k] {
			if !is[k][n] {
				gone = append(gone, n)
			}
		}
		sort.Strings(gone)
		for _, n := range gone {
			out = append(out, Change{Time: now, Kind: k, Event: "resolved", Name: n, Message: fmt.Sprintf("no longer %s: %s", k, Printable(n))})
		}
	}
	return out
}

func describe(k FindingKind, name string) string {
	n := Printable(name)
	switch k {
	case FindingStranded:
		return "stranded: " + n + " (nothing replays it; deadletter drain)"
	case FindingQuarantine:
		return "quarantined: " + n + " (deadletter show / restore)"
	case FindingExpiring:
		return "about to be lost to the lifecycle rule: " + n
	case FindingMalformed:
		return "malformed payload: " + n
	}
	return string(k) + ": " + n
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
