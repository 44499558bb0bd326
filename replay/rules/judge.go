package rules

import (
	"fmt"
	"strings"
)

// Verdict is one bar of the estate's per-event judgement, or its pass. The constants are in the order every
// screen lists them; the estate applies its bars in another (see Judge).
type Verdict uint8

// The verdicts.
const (
	VerdictReplay Verdict = iota
	VerdictCap
	VerdictNotIdempotent
	VerdictUnroutable
	// VerdictUnknown stands for bars 2–3 when no handler register was given.
	VerdictUnknown
	numVerdicts
)

// AllVerdicts lists every verdict in display order.
var AllVerdicts = [numVerdicts]Verdict{VerdictReplay, VerdictCap, VerdictNotIdempotent, VerdictUnroutable, VerdictUnknown}

var verdictNames = [numVerdicts]string{"replay", "cap", "notIdempotent", "unroutable", "unknown"}

// String is the verdict's name in JSON and on screen.
func (v Verdict) String() string {
	if v < numVerdicts {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// ParseVerdict reads a verdict's name (case-insensitively, for filters and flags).
func ParseVerdict(s string) (Verdict, bool) {
	for i, n := range verdictNames {
		if strings.EqualFold(n, s) {
			return Verdict(i), true
		}
	}
	return 0, false
}

// VerdictSet is every bar one event fails, or just its pass.
type VerdictSet uint8

// Of is the set holding vs.
func SetOf(vs ...Verdict) VerdictSet {
	var s VerdictSet
	for _, v := range vs {
		s |= 1 << v
	}
	return s
}

// Has reports whether the set holds v.
func (s VerdictSet) Has(v Verdict) bool { return s&(1<<v) != 0 }

// estateOrder is the order checkIsReplayable applies its bars: the one the replay function acts on comes first.
var estateOrder = [...]Verdict{VerdictCap, VerdictUnroutable, VerdictNotIdempotent, VerdictUnknown, VerdictReplay}

// List is the set's verdicts in the estate's order.
func (s VerdictSet) List() []Verdict {
	out := make([]Verdict, 0, 2)
	for _, v := range estateOrder {
		if s.Has(v) {
			out = append(out, v)
		}
	}
	return out
}

// Primary is the verdict the replay function acts on: the first bar failed in the estate's order.
func (s VerdictSet) Primary() Verdict {
	for _, v := range estateOrder {
		if s.Has(v) {
			return v
		}
	}
	return VerdictUnknown
}

// String renders the set for humans: "cap+notIdempotent".
func (s VerdictSet) String() string {
	parts := make([]string, 0, 2)
	for _, v := range s.List() {
		parts = append(parts, v.String())
	}
	return strings.Join(parts, "+")
}

// Judgement is what the estate decides for one event.
type Judgement struct {
	ReplayID
	// Verdicts holds every bar the event fails, or just VerdictReplay.
	Verdicts VerdictSet
}

// Replayable reports whether the estate republishes the event.
func (j Judgement) Replayable() bool { return j.Verdicts == SetOf(VerdictReplay) }

// Known reports whether the fate is certain without a register: either it is replayable, or a bar it certainly
// fails already quarantines it.
func (j Judgement) Known() bool { return j.Verdicts.Primary() != VerdictUnknown }

// Primary is the verdict the replay function acts on.
func (j Judgement) Primary() Verdict { return j.Verdicts.Primary() }

// Judge applies checkIsReplayable's bars to one event: the attempt cap, then routing, then idempotency. Every
// failed bar is reported, not only the first.
func (c Config) Judge(id, eventType string) Judgement {
	j := Judgement{ReplayID: ParseID(id, c.Separator)}
	if j.Attempt.AtLeast(c.MaxReplays) {
		j.Verdicts |= SetOf(VerdictCap)
	}
	if c.Handlers == nil {
		j.Verdicts |= SetOf(VerdictUnknown)
		return j
	}
	idempotent, routed := c.Handlers[eventType]
	switch {
	case !routed:
		j.Verdicts |= SetOf(VerdictUnroutable)
	case !idempotent:
		j.Verdicts |= SetOf(VerdictNotIdempotent)
	}
	if j.Verdicts == 0 {
		j.Verdicts = SetOf(VerdictReplay)
	}
	return j
}

// QuarantineReason derives why the estate quarantined an event of a (well-formed) quarantine blob. The replay
// strips counts from quarantined ids, so a cap is inferred: an event that would pass every other bar can only
// have been stopped by it.
func (c Config) QuarantineReason(id, eventType string) Verdict {
	j := c.Judge(id, eventType)
	for _, v := range j.Verdicts.List() {
		switch v {
		case VerdictCap, VerdictReplay:
		default:
			return v
		}
	}
	return VerdictCap
}

// VerdictCounts counts events per verdict, indexed by the verdict itself.
type VerdictCounts [numVerdicts]int

// Of is the count of one verdict.
func (vc VerdictCounts) Of(v Verdict) int { return vc[v] }

// Total is the number of events counted.
func (vc VerdictCounts) Total() int {
	n := 0
	for _, c := range vc {
		n += c
	}
	return n
}

// Refused is how many of them the replay function quarantines.
func (vc VerdictCounts) Refused() int {
	return vc[VerdictCap] + vc[VerdictNotIdempotent] + vc[VerdictUnroutable]
}

// Add adds another count in.
func (vc *VerdictCounts) Add(o VerdictCounts) {
	for i := range vc {
		vc[i] += o[i]
	}
}

// String says the counts in words, in display order: "3 cap, 2 notIdempotent".
func (vc VerdictCounts) String() string {
	var parts []string
	for _, v := range AllVerdicts {
		if vc[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", vc[v], v))
		}
	}
	return strings.Join(parts, ", ")
}
