package rules

import (
	"testing"
	"time"
)

func at(hhmm string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", "2026-12-01 "+hhmm)
	if err != nil {
		panic(err)
	}
	return t
}

func sighting(blob, id string, lastTry, modified string) Sighting {
	return Sighting{Blob: blob, ID: id, EventType: "ProcessThreadReply", LastModified: at(modified),
		LastTry: at(lastTry).Format(time.RFC3339), DeadLetterReason: "MaxDeliveryAttemptsExceeded", LastDeliveryOutcome: "Busy"}
}

func journeyConfig() Config {
	c := DefaultConfig()
	c.Handlers = Register{"ProcessThreadReply": true, "NotifyPush": false}
	return c
}

// Three passes: republished |1, republished |2, quarantined at the cap — attempts in order, and a restore
// would resume it. The subject and body never join two events: the id alone does.
func TestJourneyToTheCap(t *testing.T) {
	t.Parallel()
	c := journeyConfig()
	s := []Sighting{
		sighting("quarantine/THREAD-REPLIES/2026/12/1/14/c.json", "e1", "14:00", "15:02"),
		sighting("archived/THREAD-REPLIES/2026/12/1/10/a.json", "e1", "10:00", "11:05"),
		sighting("archived/THREAD-REPLIES/2026/12/1/12/b.json", "e1|1", "12:00", "13:01"),
		sighting("archived/THREAD-REPLIES/2026/12/1/12/b.json", "e10|1", "12:00", "13:01"), // another event
		sighting("THREAD-REPLIES/2026/12/1/12/b.json", "e1|1", "12:00", "12:01"),           // b lingers (handled)
	}
	j := c.Journey("e1", s, nil, at("16:00"))
	if len(j.Passes) != 3 {
		t.Fatalf("passes: %+v", j.Passes)
	}
	want := []struct {
		blob    string
		fate    PassFate
		reached string
	}{{"THREAD-REPLIES/2026/12/1/10/a.json", FateRepublished, "0"}, {"THREAD-REPLIES/2026/12/1/12/b.json", FateRepublished, "1"},
		{"THREAD-REPLIES/2026/12/1/14/c.json", FateQuarantined, "≥2"}}
	for i, w := range want {
		p := j.Passes[i]
		if p.Blob != w.blob || p.Fate != w.fate || p.Reached.String() != w.reached || p.Copies != 1 {
			t.Errorf("pass %d: %s %s reached %s copies %d, want %+v", i, p.Blob, p.Fate, p.Reached, p.Copies, w)
		}
	}
	if j.State != StateQuarantined || !j.Resumes || j.Verdicts != SetOf(VerdictCap) {
		t.Errorf("state %s resumes %v verdicts %s", j.State, j.Resumes, j.Verdicts)
	}
}

// Republished less than the TTL and Event Grid's five minutes ago: delivering; after that, with no later dead
// letter, presumed delivered.
func TestJourneyDeliveringThenPresumed(t *testing.T) {
	t.Parallel()
	c := journeyConfig()
	s := []Sighting{sighting("archived/THREAD-REPLIES/2026/12/1/10/a.json", "e1", "10:00", "11:00")}
	if j := c.Journey("e1", s, nil, at("12:04")); j.State != StateDelivering || !j.Until.Equal(at("12:05")) {
		t.Errorf("at 12:04: %s until %s", j.State, j.Until)
	}
	if j := c.Journey("e1", s, nil, at("12:05")); j.State != StatePresumedDelivered {
		t.Errorf("at 12:05: %s", j.State)
	}
}

// A root blob inside the TTL is dead-lettered; past it, discarded; a drain mark and the record's drain are
// said; a repeated id is two copies of one pass.
func TestJourneyWaitingStrandedAndDrained(t *testing.T) {
	t.Parallel()
	c := journeyConfig()
	live := sighting("THREAD-REPLIES/2026/12/1/10/a.json", "e1|1", "10:00", "11:30")
	live.Marks = MarksOf(map[string]string{MetaDrainCount: "1", MetaDrainedAt: "2026-12-01T11:30:00Z"})
	j := c.Journey("e1", []Sighting{live, live}, nil, at("12:00"))
	if j.State != StateDeadLettered || j.Passes[0].Copies != 2 || j.Passes[0].Drains != 1 || j.Passes[0].Reached.String() != "1" {
		t.Errorf("live: %+v", j)
	}
	if j := c.Journey("e1", []Sighting{live}, nil, at("12:31")); j.State != StateDiscarded || j.Passes[0].Fate != FateStranded {
		t.Errorf("stranded: %s %s", j.State, j.Passes[0].Fate)
	}
	crash := live
	crash.Crash = true
	if j := c.Journey("e1", []Sighting{crash}, nil, at("11:31")); j.State != StateDiscarded || j.Passes[0].Fate != FateCrashed {
		t.Errorf("crash: %s %s", j.State, j.Passes[0].Fate)
	}
	// Once the replay took the drained blob, its copy has no marks: the record's drain says it was drained.
	arch := sighting("archived/THREAD-REPLIES/2026/12/1/10/a.json", "e1|1", "10:00", "11:31")
	touch := Touch{Blob: "THREAD-REPLIES/2026/12/1/10/a.json", Action: "drain", At: at("11:30"), By: "ops", Outcome: "drained"}
	j = c.Journey("e1", []Sighting{arch}, []Touch{touch}, at("12:00"))
	if p := j.Passes[0]; p.Drains != 1 || len(p.Touches) != 1 || p.Fate != FateRepublished {
		t.Errorf("drained then republished: %+v", p)
	}
}

// A restore deletes the quarantine copy: the restored copy's name says which pass it came from, which is kept
// (as restored) before it, and the restored event starts again at 0.
func TestJourneyRestoredAndRepaired(t *testing.T) {
	t.Parallel()
	c := journeyConfig()
	restored := sighting("THREAD-REPLIES/2026/12/1/14/c.restored-20261201T150200Z.json", "e1", "14:00", "16:00")
	restored.Marks = MarksOf(map[string]string{MetaRestoredFrom: "quarantine/THREAD-REPLIES/2026/12/1/14/c.json"})
	first := sighting("archived/THREAD-REPLIES/2026/12/1/10/a.json", "e1|1", "10:00", "11:05")
	j := c.Journey("e1", []Sighting{restored, first}, nil, at("16:10"))
	if len(j.Passes) != 3 {
		t.Fatalf("passes: %+v", j.Passes)
	}
	if p := j.Passes[1]; p.Blob != "THREAD-REPLIES/2026/12/1/14/c.json" || p.Fate != FateRestored || p.Where != restored.Blob {
		t.Errorf("restored pass: %+v", p)
	}
	if p := j.Passes[2]; p.From != "THREAD-REPLIES/2026/12/1/14/c.json" || p.Via != FateRestored || p.Reached.String() != "0" || p.Fate != FateWaiting {
		t.Errorf("restored copy: %+v", p)
	}
	if j.State != StateDeadLettered {
		t.Errorf("state %s", j.State)
	}
	// A crash blob repaired by edit: the original is retired, the repaired copy replayed.
	crash := sighting("quarantine/THREAD-REPLIES/2026/12/1/9/d.json", "e2", "09:00", "11:00")
	crash.Malformed = true
	repaired := sighting("archived/THREAD-REPLIES/2026/12/1/9/d.repaired-20261201T100000Z.json", "e2", "09:00", "11:10")
	j = c.Journey("e2", []Sighting{repaired, crash}, nil, at("14:00"))
	if len(j.Passes) != 2 || j.Passes[0].Fate != FateRepaired || j.Passes[1].Fate != FateRepublished || j.State != StatePresumedDelivered {
		t.Errorf("repaired: %+v", j)
	}
}

func TestStampedFrom(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"A/2026/12/1/1/g.restored-20261201T150200Z.json":   "A/2026/12/1/1/g.json",
		"A/2026/12/1/1/g.restored-20261201T150200Z-3.json": "A/2026/12/1/1/g.json",
		"A/x.repaired-20261201T150200Z":                    "A/x",
		"A/x.restored-2026.json":                           "",
		"A/x.restored-20261201T150200Z-x.json":             "",
		".restored-20261201T150200Z.json":                  "",
	} {
		if got, _ := StampedFrom(name); got != want {
			t.Errorf("StampedFrom(%q) = %q, want %q", name, got, want)
		}
	}
}

// A quarantine copy's event never reads 0 beside the cap: at least the cap, reset in the copy; unknown for
// other refusals; a count left in the id is read.
func TestReachedInAQuarantineCopy(t *testing.T) {
	t.Parallel()
	c := journeyConfig()
	for _, tc := range []struct{ blob, id, typ, want string }{
		{"quarantine/A/g.json", "e1", "ProcessThreadReply", "≥2"},
		{"quarantine/A/g.json", "e1", "NotifyPush", "?"},
		{"quarantine/A/g.json", "e1|3", "ProcessThreadReply", "3"},
		{"A/g.json", "e1", "ProcessThreadReply", "0"},
		{"archived/A/g.json", "e1|1", "NotifyPush", "1"},
	} {
		if got := c.Reached(tc.blob, tc.id, tc.typ).String(); got != tc.want {
			t.Errorf("Reached(%s, %s, %s) = %s, want %s", tc.blob, tc.id, tc.typ, got, tc.want)
		}
	}
}

// A mixed dead letter: the replay archived the original (every event) and quarantined the refused ones. An
// event in the quarantine copy was refused, whatever the judgement can tell from here (no register: unknown),
// in whichever order the copies are seen.
func TestJourneyQuarantineCopyWins(t *testing.T) {
	t.Parallel()
	c := DefaultConfig() // no register: the judgement cannot say why
	q := sighting("quarantine/WEBHOOKS/2026/12/1/10/a.json", "e1", "10:00", "11:05")
	a := sighting("archived/WEBHOOKS/2026/12/1/10/a.json", "e1", "10:00", "11:05")
	for _, order := range [][]Sighting{{q, a}, {a, q}} {
		if j := c.Journey("e1", order, nil, at("12:00")); j.State != StateQuarantined || j.Passes[0].Where != q.Blob {
			t.Errorf("seen as %s then %s: %s in %s", order[0].Blob, order[1].Blob, j.State, j.Passes[0].Where)
		}
	}
}
