package rules

import (
	"sort"
	"strings"
	"unique"
)

// Summary is what a blob's payload says at a glance: the ls row and the dashboard's table row. A dashboard
// holds one per blob, a million of them in a large incident, so it is kept small: counts are short sorted slices
// and a fixed array, not maps, and repeated strings are interned.
type Summary struct {
	Events           int
	Malformed        bool
	Error            string
	MaxReplayAttempt Attempt
	Reasons          Counts
	Outcomes         Counts
	// Verdicts counts each event's primary verdict; for quarantine blobs, the derived quarantine reason.
	Verdicts    VerdictCounts
	Uncountable int
	// CrashDepth is the payload's nesting depth when it is past what the replay function can serialize (it
	// throws before writing or deleting anything); 0 otherwise.
	CrashDepth int
	// MayCrash is the depth of what the replay serializes when it lies in the band where the estate's Node runtime
	// decides (see StackDepth): a warning, not a verdict; 0 otherwise.
	MayCrash int
	// IDs is the event index (SPEC §3, an event's journey): a 32-bit hash of each event's original id, in payload
	// order — four bytes an event, no string kept — so a journey reads only the blobs that may hold its event.
	IDs []uint32
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

// Summarize reads a parsed payload of the blob name into a Summary.
func (c Config) Summarize(name string, p *Payload) Summary {
	s := Summary{Events: len(p.Events), IDs: make([]uint32, 0, len(p.Events))}
	if p.Malformed() {
		s.Malformed, s.Error = true, p.Err.Error()
	}
	quarantined := strings.HasPrefix(name, QuarantinePrefix)
	var js []Judgement
	if p.Deep != nil && !quarantined {
		js = make([]Judgement, 0, len(p.Events)) // (the replay's crash is a root blob's: only then is it judged)
	}
	for _, ev := range p.Events {
		if ev.DeadLetterReason != "" {
			s.Reasons.add(ev.DeadLetterReason)
		}
		if ev.LastDeliveryOutcome != "" {
			s.Outcomes.add(ev.LastDeliveryOutcome)
		}
		j := c.Judge(ev.ID, ev.EventType)
		s.IDs = append(s.IDs, IDHash(j.Original))
		if js != nil {
			js = append(js, j)
		}
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
			s.Verdicts[c.QuarantineReason(ev.ID, ev.EventType)]++
		} else {
			s.Verdicts[j.Primary()]++
		}
	}
	s.Reasons.sort()
	s.Outcomes.sort()
	if js != nil {
		crash, may := c.crashOf(p, js)
		s.MayCrash = may
		if crash != nil {
			s.CrashDepth = crash.Depth
		}
	}
	return s
}
