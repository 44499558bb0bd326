package rules

import (
	"reflect"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/blob"

	"github.com/deadletter/deadletter/store"
)

// Readiness at its boundaries: a dead letter written just inside the TTL window before now says the handler was
// still failing; at exactly the TTL, and past it, it does not. Each kind of blob is dated as DeadLetteredAt says —
// a root blob at its Last-Modified, a drained one (rewritten since) and a late copy by the end of the hour its
// name gives, never by the Last-Modified the drain or the copy gave it — and a restored copy is no evidence.
func TestReadinessBoundaries(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	ttl := cfg.TTL
	if ttl != time.Hour {
		t.Fatalf("the table is written for a one-hour TTL, not %v", ttl)
	}
	hour := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC) // every blob below is named by this hour
	end := hour.Add(time.Hour - time.Second)              // …so one rewritten since is dated 11:59:59
	const sub = "WEBHOOKS"
	name := DeadLetterName(sub, hour, "0c6e5b1a-0000-4000-8000-000000000001")
	drained := map[string]string{MetaDrainCount: "1", MetaDrainedAt: "2026-12-01T12:58:00Z"}
	restored := map[string]string{MetaRestoredFrom: QuarantinePrefix + name}
	written := hour.Add(20 * time.Minute) // a root blob as Event Grid wrote it: 11:20:00

	type row struct {
		what     string
		name     string
		modified time.Time
		meta     map[string]string
		now      time.Time
		failing  bool
		newest   time.Time // zero: no readiness for the subscription at all
	}
	rows := []row{
		{"root, a second inside the window", name, written, nil, written.Add(ttl - time.Second), true, written},
		{"root, at exactly the TTL", name, written, nil, written.Add(ttl), false, written},
		{"root, a second past the TTL", name, written, nil, written.Add(ttl + time.Second), false, written},
		{"root, five hours on", name, written, nil, written.Add(5 * time.Hour), false, written},

		// A drain rewrites the blob now: dated by its hour, it reads failing only while the end of that hour is
		// inside the window — a subscription drained just now does not read failing for it.
		{"drained, its hour's end a second inside", name, end.Add(ttl - 2*time.Second), drained, end.Add(ttl - time.Second), true, end},
		{"drained, its hour's end at exactly the TTL", name, end.Add(ttl - time.Second), drained, end.Add(ttl), false, end},
		{"drained, its hour's end a second past", name, end.Add(ttl), drained, end.Add(ttl + time.Second), false, end},
		{"drained just now, hours after its hour", name, hour.Add(5 * time.Hour), drained, hour.Add(5 * time.Hour), false, end},

		// The replay's copy, made after the hour ended (the trigger was late, or a drain's blob was replayed).
		{"late archived copy, a second inside", ArchivedPrefix + name, hour.Add(90 * time.Minute), nil, end.Add(ttl - time.Second), true, end},
		{"late archived copy, at exactly the TTL", ArchivedPrefix + name, hour.Add(90 * time.Minute), nil, end.Add(ttl), false, end},
		{"late quarantine copy, a second past", QuarantinePrefix + name, hour.Add(2 * time.Hour), nil, end.Add(ttl + time.Second), false, end},
		{"copy made at once, a second inside", ArchivedPrefix + name, written, nil, written.Add(ttl - time.Second), true, written},
		{"a copy dated before its hour (skew) takes the hour", ArchivedPrefix + name, hour.Add(-time.Minute), nil, hour.Add(ttl - time.Second), true, hour},

		// A restored copy is the operator's write, not Event Grid's: no evidence, however fresh.
		{"restored, just written", name, hour.Add(5 * time.Minute), restored, hour.Add(6 * time.Minute), false, time.Time{}},
		{"restored and drained", name, hour.Add(5 * time.Minute), blob.MetaWith(restored, MetaDrainCount, "1"), hour.Add(6 * time.Minute), false, time.Time{}},

		// A name without an hour is dated by its Last-Modified, unless a drain rewrote it.
		{"hourless, a second inside", sub + "/odd.json", written, nil, written.Add(ttl - time.Second), true, written},
		{"hourless, at exactly the TTL", sub + "/odd.json", written, nil, written.Add(ttl), false, written},
		{"hourless and drained", sub + "/odd.json", written, drained, written.Add(time.Minute), false, time.Time{}},
	}
	for _, r := range rows {
		t.Run(r.what, func(t *testing.T) {
			it := cfg.MakeItem(store.BlobInfo{Name: r.name, LastModified: r.modified, Metadata: r.meta}, r.now)
			got := cfg.Readiness([]*Item{&it}, r.now)
			if r.newest.IsZero() {
				if len(got) != 0 {
					t.Fatalf("%s is no dead letter, yet readiness %+v", r.name, got)
				}
				return
			}
			if len(got) != 1 || got[0].Subscription != sub {
				t.Fatalf("readiness %+v", got)
			}
			window := 0
			if r.failing {
				window = 1
			}
			if g := got[0]; g.Failing != r.failing || !g.NewestDeadLetter.Equal(r.newest) || g.LastWindow != window {
				t.Fatalf("modified %s, now %s: failing %v, newest %s, %d in the window; want %v, %s, %d",
					r.modified.Format(time.TimeOnly), r.now.Format(time.TimeOnly), g.Failing, g.NewestDeadLetter.Format(time.TimeOnly),
					g.LastWindow, r.failing, r.newest.Format(time.TimeOnly), window)
			}
		})
	}
}

// The newest dead letter of a subscription decides, whichever order the blobs come in; the window counts only
// those inside it.
func TestReadinessTakesTheNewest(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	now := time.Date(2026, 12, 1, 12, 30, 0, 0, time.UTC)
	at := func(d time.Duration) Item {
		m := now.Add(-d)
		return cfg.MakeItem(store.BlobInfo{Name: DeadLetterName("PUSH", m, "g"+d.String()), LastModified: m}, now)
	}
	old, fresh, edge := at(3*time.Hour), at(10*time.Minute), at(cfg.TTL)
	for _, items := range [][]*Item{{&old, &fresh, &edge}, {&fresh, &edge, &old}, {&edge, &old, &fresh}} {
		got := cfg.Readiness(items, now)
		if len(got) != 1 || !got[0].Failing || got[0].LastWindow != 1 || !got[0].NewestDeadLetter.Equal(fresh.LastModified) {
			t.Fatalf("readiness %+v", got)
		}
	}
}

// summarised is an item whose payload was read: verdicts by kind, its highest replay attempt.
func summarised(attempt Attempt, verdicts map[Verdict]int) Item {
	s := &Summary{MaxReplayAttempt: attempt}
	for v, n := range verdicts {
		s.Verdicts[v] = n
		s.Events += n
	}
	return Item{Summary: s}
}

// How many more cycles the cap allows: the fewest over the items the replay would republish, from the cap minus
// one at attempt 0 down to 0 at (or past) the cap; -1 when none would be republished.
func TestCyclesLeftAtTheCap(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.MaxReplays = 5 // (the estate's is 2: a larger cap leaves room between its ends)
	cap := cfg.MaxReplays
	replays := map[Verdict]int{VerdictReplay: 2}
	malformed := summarised(0, replays)
	malformed.Summary.Malformed = true
	for _, tc := range []struct {
		what  string
		items []Item
		want  int
	}{
		{"nothing read", []Item{{}}, -1},
		{"only capped events", []Item{summarised(Attempt(cap), map[Verdict]int{VerdictCap: 3})}, -1},
		{"malformed", []Item{malformed}, -1},
		{"attempt 0", []Item{summarised(0, replays)}, cap - 1},
		{"unknown handlers count too", []Item{summarised(1, map[Verdict]int{VerdictUnknown: 1})}, cap - 2},
		{"the fewest of two", []Item{summarised(0, replays), summarised(2, replays)}, cap - 3},
		{"one below the cap", []Item{summarised(Attempt(cap-1), replays)}, 0},
		{"at the cap", []Item{summarised(Attempt(cap), replays)}, 0},
		{"far past the cap", []Item{summarised(1e20, replays), summarised(0, replays)}, 0},
	} {
		if got := cfg.CyclesLeft(tc.items); got != tc.want {
			t.Errorf("%s: %d cycles left, want %d", tc.what, got, tc.want)
		}
	}
}

// A drain republishes when any item holds an event the replay would (or, unread or without a register, may)
// republish; never when every one was read and is malformed, crashes, or holds only events it quarantines.
func TestRepublishes(t *testing.T) {
	t.Parallel()
	crash := summarised(0, map[Verdict]int{VerdictReplay: 1})
	crash.Summary.CrashDepth = 10000
	malformed := summarised(0, map[Verdict]int{VerdictReplay: 1})
	malformed.Summary.Malformed = true
	capped := summarised(5, map[Verdict]int{VerdictCap: 2, VerdictNotIdempotent: 1})
	for _, tc := range []struct {
		what  string
		items []Item
		want  bool
	}{
		{"no items", nil, false},
		{"unread", []Item{{}}, true},
		{"crash, malformed, capped", []Item{crash, malformed, capped}, false},
		{"one replayable among them", []Item{crash, capped, summarised(0, map[Verdict]int{VerdictReplay: 1})}, true},
		{"handlers unknown", []Item{capped, summarised(0, map[Verdict]int{VerdictUnknown: 1})}, true},
	} {
		if got := Republishes(tc.items); got != tc.want {
			t.Errorf("%s: republishes %v, want %v", tc.what, got, tc.want)
		}
	}
}

// Streamed, pages listed at two clocks (a listing of a million blobs takes minutes): readiness and the picture's
// timeline are told at the later clock, as if every blob had been listed then — a dead letter inside the window
// at the first page's clock but out of it at the last is no longer counted, and the timeline ends at the last
// clock's hour.
func TestStreamedReadinessAndTimelineEndAtTheLatestClock(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	t1 := time.Date(2026, 12, 1, 11, 40, 0, 0, time.UTC)
	t2 := t1.Add(40 * time.Minute) // 12:20: the next hour
	mk := func(at time.Time, guid string, now time.Time) Item {
		it := cfg.MakeItem(store.BlobInfo{Name: DeadLetterName("WEBHOOKS", at, guid), LastModified: at}, now)
		it.Summary = &Summary{Events: 3}
		return it
	}
	early := mk(t1.Add(-50*time.Minute), "0c6e5b1a-0000-4000-8000-000000000001", t1) // 10:50: in the window at t1, not at t2
	late := mk(t1.Add(-10*time.Minute), "0c6e5b1a-0000-4000-8000-000000000002", t1)  // 11:30: in it at both
	last := mk(t2.Add(-5*time.Minute), "0c6e5b1a-0000-4000-8000-000000000003", t2)   // 12:15

	b := cfg.NewReadinessBuilder()
	b.Add([]Item{early, late}, t1)
	b.Add([]Item{last}, t2)
	got := b.Readiness()
	want := cfg.Readiness([]*Item{&early, &late, &last}, t2)
	if len(got) != 1 || got[0] != want[0] || got[0].LastWindow != 2 || !got[0].Failing {
		t.Errorf("streamed readiness %+v, want %+v with 2 in the window", got, want)
	}

	p := cfg.NewPictureBuilder(PictureOptions{Window: 2 * time.Hour})
	p.Add([]Item{early, late}, t1)
	p.Add([]Item{last}, t2)
	pic := p.Picture()
	hours := []time.Time{t2.Truncate(time.Hour).Add(-time.Hour), t2.Truncate(time.Hour)}
	if !pic.Now.Equal(t2) || !reflect.DeepEqual(pic.Hours, hours) {
		t.Fatalf("the timeline is %v at %v, want %v at %v", pic.Hours, pic.Now, hours, t2)
	}
	if pic.HourTotal(0) != 3 || pic.HourTotal(1) != 3 || pic.Before != 3 || pic.Events != 9 {
		t.Errorf("timeline %v, before %d, events %d: want 3 at 11:00, 3 at 12:00, 3 before", pic.Timeline, pic.Before, pic.Events)
	}
}

// The lifecycle's horizons are counted from the latest clock too: a stranded blob listed on an early page, due
// for deletion 24h and 20m after that page's clock, is within 24 hours of the report's (40 minutes later) — as
// the whole snapshot at that clock says. And a window that is not a whole number of hours (--since 150m) starts
// on a half hour: each hour's events stay in their row, the current hour's in the last.
func TestStreamedLossAndAHalfHourWindow(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	t1 := time.Date(2026, 12, 1, 11, 40, 0, 0, time.UTC)
	t2 := t1.Add(40 * time.Minute)
	lm := t1.Add(-cfg.Retention + 24*time.Hour + 20*time.Minute)
	old := cfg.MakeItem(store.BlobInfo{Name: DeadLetterName("WEBHOOKS", lm, "0c6e5b1a-0000-4000-8000-000000000009"), LastModified: lm}, t1)
	old.Summary = &Summary{Events: 2}
	p := cfg.NewPictureBuilder(PictureOptions{Window: 150 * time.Minute})
	p.Add([]Item{old}, t1)
	now := cfg.MakeItem(store.BlobInfo{Name: DeadLetterName("WEBHOOKS", t2.Add(-5*time.Minute), "0c6e5b1a-0000-4000-8000-00000000000a"), LastModified: t2.Add(-5 * time.Minute)}, t2)
	now.Summary = &Summary{Events: 1}
	hourAgo := cfg.MakeItem(store.BlobInfo{Name: DeadLetterName("WEBHOOKS", t2.Add(-65*time.Minute), "0c6e5b1a-0000-4000-8000-00000000000b"), LastModified: t2.Add(-65 * time.Minute)}, t2)
	hourAgo.Summary = &Summary{Events: 4}
	p.Add([]Item{now, hourAgo}, t2)
	pic := p.Picture()
	if l := pic.Loss[0]; l.Within != 24*time.Hour || l.Blobs != 1 || l.Events != 2 {
		t.Errorf("lost within 24h of the latest clock: %+v, want the early page's blob", l)
	}
	snap := NewSnapshot("c")
	snap.Merge([]Item{old, now, hourAgo}, t2)
	if whole := cfg.Picture(snap, PictureOptions{Window: 150 * time.Minute}); !reflect.DeepEqual(whole.Loss, pic.Loss) {
		t.Errorf("streamed loss %+v, the snapshot's %+v", pic.Loss, whole.Loss)
	}
	last := len(pic.Hours) - 1
	if pic.HourTotal(last) != 1 || pic.HourTotal(last-1) != 4 {
		t.Errorf("a 150m window: hours %v, timeline %v — want the current hour's 1 last and the hour before's 4 before it", pic.Hours, pic.Timeline)
	}
	if again := p.Picture(); !reflect.DeepEqual(again.Loss, pic.Loss) {
		t.Errorf("asked twice, the loss is %+v then %+v", pic.Loss, again.Loss)
	}
}
