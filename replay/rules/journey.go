package rules

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// An event's journey (SPEC §3): the counter rides on the event's id, so across blobs and passes the unit is the
// single event, followed by its original id through every blob that holds it and every action that touched those
// blobs. The rule is pure: the caller finds the sightings (replay.Trace reads them) and the touches (the record).

// DeadLetterDelay is how long Event Grid may take, after an event's last failed delivery, to write its dead
// letter: the five minutes the journey adds to the TTL before a republished event's silence counts as delivered.
const DeadLetterDelay = 5 * time.Minute

// Sighting is one copy of an event in one blob: where it stands, what its id and diagnostics say, and what the
// estate makes of it there.
type Sighting struct {
	// Blob is the blob's name, LastModified when it was last written, Marks what deadletter's actions left in it.
	Blob         string
	LastModified time.Time
	Marks        Marks
	// Index is the event's place in the payload.
	Index int
	// ID is the id as the blob holds it; EventType the type the register judges.
	ID, EventType string
	// DeadLetterReason, LastDeliveryOutcome, LastHTTPStatus and LastTry are Event Grid's diagnostics.
	DeadLetterReason, LastDeliveryOutcome string
	LastHTTPStatus                        *int64
	LastTry                               string
	// Malformed: the payload breaks the schema (the replay quarantines it whole). Crash: the replay throws on this
	// blob before it writes anything.
	Malformed, Crash bool
}

// Touch is one action of the record on a blob that holds (or held) the event: a drain, a restore, a repair.
type Touch struct {
	Blob   string
	Action string
	// Target is the blob the action wrote (a restore's copy, a repair's new blob), "" when it wrote the blob itself.
	Target string
	At     time.Time
	By     string
	// Outcome is the action's word for this blob (drained, restored, changed …).
	Outcome string
}

// Reached is how far an event had got in the estate's count, as truthfully as its blob can say: the count of its
// id, or — in a quarantine copy, whose ids the replay wrote back without the count — at least the cap when the cap
// is what stopped it, and unknown otherwise. Reset says the copy no longer carries it: a restore resumes at 0.
type Reached struct {
	Attempt Attempt
	AtLeast bool
	Unknown bool
	Reset   bool
}

// String is the attempt as a table shows it: 2, ≥2, ? (an uncountable id is the caller's to mark).
func (r Reached) String() string {
	switch {
	case r.Unknown:
		return "?"
	case r.AtLeast:
		return "≥" + r.Attempt.String()
	}
	return r.Attempt.String()
}

// Reached says how far the event with this id and type had got, standing in the blob named.
func (c Config) Reached(blob, id, eventType string) Reached {
	j := c.Judge(id, eventType)
	if !strings.HasPrefix(blob, QuarantinePrefix) || j.Attempt > 0 {
		return Reached{Attempt: j.Attempt} // (a count left in a quarantine copy's id is there to read; a restore strips it)
	}
	if c.QuarantineReason(id, eventType) == VerdictCap {
		return Reached{Attempt: Attempt(c.MaxReplays), AtLeast: true, Reset: true}
	}
	return Reached{Unknown: true, Reset: true}
}

// PassFate is what became of one pass of an event: one dead letter of it, and what the estate did with it.
type PassFate uint8

// The fates of a pass.
const (
	// FateWaiting: in a root blob whose trigger may still come (live).
	FateWaiting PassFate = iota + 1
	// FateStranded: in a root blob no trigger can reach any more (past the TTL): a drain or the next app start.
	FateStranded
	// FateCrashed: in a root blob the replay throws on, before it writes anything.
	FateCrashed
	// FateRepublished: the replay republished it (its archived/ copy), one attempt further on.
	FateRepublished
	// FateQuarantined: the replay refused it (its quarantine/ copy).
	FateQuarantined
	// FateRestored: its quarantine copy was restored; the pass goes on in the restored copy.
	FateRestored
	// FateRepaired: its blob was replaced by a repair; the pass goes on in the repaired copy.
	FateRepaired
)

var passFateNames = [...]string{"", "waiting", "stranded", "crashed", "republished", "quarantined", "restored", "repaired"}

// String names the fate.
func (f PassFate) String() string {
	if int(f) < len(passFateNames) {
		return passFateNames[f]
	}
	return "fate(" + strconv.Itoa(int(f)) + ")"
}

// MarshalText writes the fate's name.
func (f PassFate) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// Pass is one dead letter of the event and what came of it.
type Pass struct {
	// Blob is the root name the dead letter stands under (Event Grid's, or a restored or repaired copy's).
	Blob string
	// From is the root name of the pass this one was made from, Via how (restored, repaired); "" and 0 for
	// Event Grid's own dead letters.
	From string
	Via  PassFate
	// Copies is how many times the event stands in the blob (at-least-once delivery repeats an id).
	Copies int
	// Reached is the attempt the event arrived with.
	Reached Reached
	// DeadLettered is when Event Grid gave up on it (its last delivery attempt; the blob's hour when it does not
	// say).
	DeadLettered time.Time
	// Reason, Outcome and Status are Event Grid's diagnostics of that pass.
	Reason, Outcome string
	Status          *int64
	// Drains is how often deadletter drained the blob that pass stood in, DrainedAt when last (marks, or the
	// record once the replay took the blob).
	Drains    int
	DrainedAt string
	// Fate is what became of it, At when, Where the blob that says so (archived/…, quarantine/…, the root blob).
	Fate  PassFate
	At    time.Time
	Where string
	// Verdicts are why a quarantined pass was refused (derived from the bars in a quarantine copy).
	Verdicts VerdictSet
	// Malformed: the pass's payload broke the schema. Touches are the record's actions on its blobs.
	Malformed bool
	Touches   []Touch
	// WasQuarantined: a restored or repaired pass came out of quarantine (its copy, restored or retired, may be
	// gone).
	WasQuarantined bool
}

// JourneyState is where an event stands now, in the states of the estate's own diagram (SPEC §3).
type JourneyState uint8

// The states of an event.
const (
	// StateDeadLettered: in a root blob whose trigger may still come.
	StateDeadLettered JourneyState = iota + 1
	// StateDiscarded: in a root blob no trigger can reach (stranded, or one the replay crashes on): nothing points
	// at it until a drain or the next app start re-uploads it.
	StateDiscarded
	// StateDelivering: republished less than the TTL and Event Grid's dead-letter delay ago.
	StateDelivering
	// StatePresumedDelivered: republished longer ago than that, and no later dead letter of its id.
	StatePresumedDelivered
	// StateQuarantined: in a quarantine copy.
	StateQuarantined
	// StateExpired: no blob holds it any more; only the record remembers it.
	StateExpired
)

var journeyStateNames = [...]string{"", "dead-lettered", "discarded", "delivering", "presumed delivered", "quarantined", "expired"}

// String names the state as the SPEC does.
func (s JourneyState) String() string {
	if int(s) < len(journeyStateNames) {
		return journeyStateNames[s]
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText writes the state's name.
func (s JourneyState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Journey is one event's passes, oldest first, and where it stands now.
type Journey struct {
	Original string
	Passes   []Pass
	State    JourneyState
	// Since is when it came to stand there; Until, for a delivering event, when its silence will count as a
	// delivery.
	Since, Until time.Time
	// Resumes says, for a quarantined event, that a restore would give it another pass (the cap stopped it, and
	// the copy resets its count); Verdicts are why it was refused.
	Resumes  bool
	Verdicts VerdictSet
}

// Journey follows the event with this original id through its sightings (every copy of it in every blob) and
// the record's touches of those blobs, to where it stands at now.
func (c Config) Journey(original string, sightings []Sighting, touches []Touch, now time.Time) Journey {
	j := Journey{Original: original}
	// In a fixed order, whatever order the reads came back in: two copies dated alike must not be told apart by
	// which download finished first. By name, so a pass's archived/ copy comes before its quarantine/ copy, which
	// then says where the refused events went.
	sightings = slices.Clone(sightings)
	slices.SortStableFunc(sightings, func(a, b Sighting) int {
		if d := strings.Compare(a.Blob, b.Blob); d != 0 {
			return d
		}
		return cmp.Compare(a.Index, b.Index)
	})
	byBlob := map[string]int{}
	copies := map[string]int{} // copies of the event per blob (at-least-once repeats an id)
	for _, s := range sightings {
		if EventOf(s.ID, c.Separator) != original {
			continue // (never on the subject or the body: on the id alone)
		}
		root := strings.TrimPrefix(strings.TrimPrefix(s.Blob, ArchivedPrefix), QuarantinePrefix)
		i, ok := byBlob[root]
		if !ok {
			i = len(j.Passes)
			byBlob[root] = i
			j.Passes = append(j.Passes, Pass{Blob: root})
			j.Passes[i].From, j.Passes[i].Via = StampedFrom(root)
		}
		c.see(&j.Passes[i], s, now)
		copies[s.Blob]++
		j.Passes[i].Copies = max(j.Passes[i].Copies, copies[s.Blob])
	}
	for i := range j.Passes {
		j.Passes[i].touched(touches)
	}
	j.Passes = linkCopies(j.Passes, byBlob, touches)
	// By when Event Grid gave up, then by the attempt; a restored or repaired pass right after the pass it came
	// from (its diagnostics are its original's, so time alone cannot order them).
	slices.SortStableFunc(j.Passes, func(a, b Pass) int {
		if d := a.DeadLettered.Compare(b.DeadLettered); d != 0 {
			return d
		}
		return cmp.Compare(a.Reached.Attempt, b.Reached.Attempt)
	})
	moveAfterSources(j.Passes)
	c.stand(&j, now)
	return j
}

// touched takes the record's actions on the pass's blob (or the replay's copies of it), oldest first.
func (p *Pass) touched(touches []Touch) {
	a, q := Twins(p.Blob)
	for _, t := range touches {
		if t.Blob != p.Blob && t.Blob != a && t.Blob != q {
			continue
		}
		p.Touches = append(p.Touches, t)
		if t.Action == "drain" && t.Outcome == string(OutcomeDrained) && p.Drains == 0 {
			p.Drains, p.DrainedAt = 1, t.At.UTC().Format(time.RFC3339) // (the replay's copy kept no marks)
		}
	}
	slices.SortFunc(p.Touches, func(a, b Touch) int { return a.At.Compare(b.At) })
}

// linkCopies ties each restored or repaired pass to the pass it was made from — kept, from its name alone, when
// that blob is gone (a restore deletes its quarantine copy) — and says on the source what became of it.
func linkCopies(ps []Pass, byBlob map[string]int, touches []Touch) []Pass {
	for i, n := 0, len(ps); i < n; i++ {
		p := ps[i]
		if p.From == "" {
			continue
		}
		k, ok := byBlob[p.From]
		if !ok {
			k, byBlob[p.From] = len(ps), len(ps)
			ps = append(ps, Pass{Blob: p.From, DeadLettered: p.DeadLettered, Reached: Reached{Unknown: true},
				Reason: p.Reason, Outcome: p.Outcome, Status: p.Status})
			ps[k].touched(touches)
		}
		src := &ps[k]
		if src.Fate == FateQuarantined || p.Via == FateRestored || slices.ContainsFunc(src.Touches, func(t Touch) bool { return strings.HasPrefix(t.Blob, QuarantinePrefix) }) {
			src.WasQuarantined = true
		}
		if src.Fate == 0 || src.Fate == FateQuarantined || p.Via == FateRepaired && src.Fate != FateRepublished {
			src.Fate, src.Where, src.At = p.Via, p.Blob, p.At
		}
	}
	return ps
}

// StampedFrom reads a restored or repaired copy's name (RestoreTarget, RepairTarget, AlternateTarget) back to
// the root name it was made from: "" for any other name.
func StampedFrom(name string) (from string, via PassFate) {
	for _, k := range []struct {
		stamp string
		via   PassFate
	}{{".restored-", FateRestored}, {".repaired-", FateRepaired}} {
		i := strings.LastIndex(name, k.stamp)
		if i <= 0 {
			continue
		}
		rest := name[i+len(k.stamp):]
		ext := ""
		if strings.HasSuffix(rest, ".json") {
			rest, ext = strings.TrimSuffix(rest, ".json"), ".json"
		}
		if len(rest) < 16 {
			continue
		}
		if _, err := time.Parse("20060102T150405Z", rest[:16]); err != nil {
			continue
		}
		if alt := rest[16:]; alt != "" && (alt[0] != '-' || !allDigits(alt[1:])) {
			continue
		}
		return name[:i] + ext, k.via
	}
	return "", 0
}

// see takes one sighting into its pass: the replay's copies say what came of it, the root blob how it waits.
func (c Config) see(p *Pass, s Sighting, now time.Time) {
	quarantined := strings.HasPrefix(s.Blob, QuarantinePrefix)
	switch {
	case strings.HasPrefix(s.Blob, ArchivedPrefix):
		c.seeArchived(p, s)
	case quarantined:
		p.Fate, p.At, p.Where, p.Verdicts = FateQuarantined, s.LastModified, s.Blob, 0
		if !s.Malformed {
			p.Verdicts = SetOf(c.QuarantineReason(s.ID, s.EventType))
		}
	default:
		c.seeRoot(p, s, now)
	}
	// The root blob or the archived copy says the count; a quarantine copy only what is left of it.
	if r := c.Reached(s.Blob, s.ID, s.EventType); p.Copies == 0 || p.Reached.Reset && !quarantined {
		p.Reached = r
	}
	p.Malformed = p.Malformed || s.Malformed
	if p.Reason == "" {
		p.Reason, p.Outcome, p.Status = s.DeadLetterReason, s.LastDeliveryOutcome, s.LastHTTPStatus
	}
	if p.DeadLettered.IsZero() {
		p.DeadLettered = deadLetteredAt(p.Blob, s)
	}
}

// seeArchived: the archived copy holds the original's bytes, every event of it — those the replay refused went to
// the quarantine copy (which wins: Journey reads a pass's archived/ copy before its quarantine/ one, by name — or,
// restored since, it is gone), the others were republished.
func (c Config) seeArchived(p *Pass, s Sighting) {
	if j := c.Judge(s.ID, s.EventType); j.Verdicts.Has(VerdictCap) || j.Known() && !j.Replayable() {
		_, q := Twins(strings.TrimPrefix(s.Blob, ArchivedPrefix))
		p.Fate, p.At, p.Where, p.Verdicts = FateQuarantined, s.LastModified, q, j.Verdicts&^SetOf(VerdictUnknown)
		return
	}
	p.Fate, p.At, p.Where, p.Verdicts = FateRepublished, s.LastModified, s.Blob, 0
}

// seeRoot: a root blob is where the pass waits, unless the replay's copies already said what came of it.
func (c Config) seeRoot(p *Pass, s Sighting, now time.Time) {
	if p.Fate == 0 || p.Fate <= FateCrashed {
		switch {
		case s.Crash:
			p.Fate = FateCrashed
		case now.Sub(s.LastModified) >= c.TTL:
			p.Fate = FateStranded
		default:
			p.Fate = FateWaiting
		}
		p.At, p.Where = s.LastModified, s.Blob
		if p.Fate == FateStranded {
			p.At = s.LastModified.Add(c.TTL) // (when its trigger could no longer come)
		}
	}
	if m := s.Marks; m.Drains() > p.Drains {
		p.Drains, p.DrainedAt = m.Drains(), m.DrainedAt
	}
}

// deadLetteredAt is when Event Grid gave up on the event: its last delivery attempt, else the hour its blob's
// name says, else when the blob was written.
func deadLetteredAt(blob string, s Sighting) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, s.LastTry); err == nil {
		return t.UTC()
	}
	if h := ParseBlobName(blob).Hour(); !h.IsZero() {
		return h
	}
	return s.LastModified
}

// moveAfterSources puts each restored or repaired pass right after the pass it came from.
func moveAfterSources(ps []Pass) {
	for moved := 0; moved <= len(ps); moved++ { // (each move settles one pass; a cycle of names cannot loop)
		done := true
		for i := range ps {
			if ps[i].From == "" {
				continue
			}
			k := slices.IndexFunc(ps, func(p Pass) bool { return p.Blob == ps[i].From })
			if k > i {
				p := ps[i]
				copy(ps[i:k], ps[i+1:k+1])
				ps[k] = p
				done = false
				break
			}
		}
		if done {
			return
		}
	}
}

// stand says where the event stands now: what its last pass came to.
func (c Config) stand(j *Journey, now time.Time) {
	if len(j.Passes) == 0 {
		j.State = StateExpired
		return
	}
	last := j.Passes[len(j.Passes)-1]
	j.Since = last.At
	switch last.Fate {
	case FateWaiting:
		j.State = StateDeadLettered
	case FateStranded, FateCrashed:
		j.State = StateDiscarded
	case FateRepublished:
		j.Until = last.At.Add(c.TTL + DeadLetterDelay)
		if now.Before(j.Until) {
			j.State = StateDelivering
		} else {
			j.State = StatePresumedDelivered
		}
	case FateQuarantined:
		j.State, j.Verdicts = StateQuarantined, last.Verdicts
		j.Resumes = !last.Malformed && last.Verdicts == SetOf(VerdictCap)
	default: // restored or repaired, and the copy not found: gone since
		j.State = StateExpired
	}
}

// IDHash is the event index's key for an original id (Summary.IDs): a match is a blob to read, never an answer —
// the journey compares the ids themselves.
func IDHash(original string) uint32 {
	h := uint32(2166136261) // FNV-1a, inline: Summarize hashes every event it reads
	for i := 0; i < len(original); i++ {
		h ^= uint32(original[i])
		h *= 16777619
	}
	return h
}

// MayHold says whether a read blob may hold any of the events hashed in want (an unread one may hold anything).
func (s *Summary) MayHold(want map[uint32]bool) bool {
	if s == nil {
		return true
	}
	for _, h := range s.IDs {
		if want[h] {
			return true
		}
	}
	return false
}
