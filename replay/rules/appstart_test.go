package rules

import (
	"slices"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
)

// A worker start takes what the design's three rules let through, at the TTL's boundary exactly, and splits it
// into what it is for and what it repeats.
func TestAWorkerStartTakesWhatTheDesignSays(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(age time.Duration) time.Time { return now.Add(-age) }
	mk := func(name string, age time.Duration, s *Summary) *Item {
		it := cfg.MakeItem(blob.Info{Name: name, LastModified: at(age)}, now)
		it.Summary = s
		return &it
	}
	read := &Summary{Events: 3}
	handledCopy := mk("PUSH-NOTIFICATIONS/2026/12/1/9/h.json", 3*time.Hour, &Summary{Events: 4})
	handledCopy.ArchivedTwin = true
	refused := mk("PUSH-NOTIFICATIONS/2026/12/1/9/link.json", 3*time.Hour, nil)
	refused.Refused = "a symbolic link"
	items := []*Item{
		mk("PUSH-NOTIFICATIONS/2026/12/1/9/old.json", 3*time.Hour, read),
		mk("PUSH-NOTIFICATIONS/2026/12/1/9/unread.json", 3*time.Hour, nil),
		mk("PUSH-NOTIFICATIONS/2026/12/1/11/edge.json", cfg.TTL, read),                  // exactly a TTL old: taken
		mk("PUSH-NOTIFICATIONS/2026/12/1/11/young.json", cfg.TTL-time.Nanosecond, read), // its own trigger still may come
		mk("archived/PUSH-NOTIFICATIONS/2026/12/1/9/a.json", 3*time.Hour, read),
		mk("quarantine/PUSH-NOTIFICATIONS/2026/12/1/9/q.json", 3*time.Hour, read),
		mk("ARCHIVED/2026/12/1/9/u.json", 3*time.Hour, read), // the guard's case-sensitive prefix lets it through
		mk("THREAD-REPLIES/2026/12/1/9/deep.json", 3*time.Hour, &Summary{Events: 1, CrashDepth: 9000}),
		handledCopy,
		refused,
	}
	a := cfg.AppStartDrain(items, now)
	want := []string{"PUSH-NOTIFICATIONS/2026/12/1/9/old.json", "PUSH-NOTIFICATIONS/2026/12/1/9/unread.json", "PUSH-NOTIFICATIONS/2026/12/1/11/edge.json"}
	if !slices.Equal(a.Stranded, want) {
		t.Errorf("stranded: %v, want %v", a.Stranded, want)
	}
	if !slices.Equal(a.Handled, []string{handledCopy.Name}) || a.HandledEvents != 4 {
		t.Errorf("handled: %v (%d events)", a.Handled, a.HandledEvents)
	}
	if !slices.Equal(a.Crash, []string{"THREAD-REPLIES/2026/12/1/9/deep.json"}) {
		t.Errorf("crash: %v", a.Crash)
	}
	if !slices.Equal(a.Untriggerable, []string{"ARCHIVED/2026/12/1/9/u.json"}) {
		t.Errorf("untriggerable: %v", a.Untriggerable)
	}
	if a.Takes() != 6 || !a.Repeats() {
		t.Errorf("takes %d, repeats %v", a.Takes(), a.Repeats())
	}
	// A start that finds only what it is for repeats nothing.
	if b := cfg.AppStartDrain(items[:3], now); b.Repeats() || b.Takes() != 3 {
		t.Errorf("only stranded: %+v", b)
	}
	// The drain's plan carries the start's answer for the whole listing, whatever blobs the drain was given.
	s := &Snapshot{Items: items, Now: now}
	if p := cfg.PlanDrain(s, []Item{*items[0]}, DrainOptions{}); p.AppStart.Takes() != 6 {
		t.Errorf("the plan's start takes %d, want 6", p.AppStart.Takes())
	}
	// check raises appStartRepeats for the handled blob a start would re-upload — not for one younger than the TTL
	// (the start leaves it), and not for the crash blob, whose own finding says what the start does with it.
	young := mk("PUSH-NOTIFICATIONS/2026/12/1/11/h2.json", cfg.TTL-time.Second, &Summary{Events: 2})
	young.ArchivedTwin = true
	s.Items = append(s.Items, young)
	r := cfg.Check(s, CheckOptions{Names: true})
	if f, ok := r.Find(FindingAppStartRepeats); !ok || f.Count != 1 || !slices.Equal(f.Names, []string{handledCopy.Name}) {
		t.Errorf("appStartRepeats: %+v (raised %v), want the one handled blob a TTL old", f, ok)
	}
	if f, ok := r.Find(FindingCrash); !ok || f.Count != 1 {
		t.Errorf("crash: %+v", f)
	}
}

// The one verdict on a handler: the fresher witness decides when it has something to say.
func TestHandlerNowLetsTheFresherWitnessDecide(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		containerFailing bool
		eg               HandlerVerdict
		want, by         string
	}{
		{false, HandlerFailing, NowFailing, "eventGrid"},
		{true, HandlerFailing, NowFailing, "eventGrid"},
		{true, HandlerHealthy, NowRecovered, "eventGrid"},
		{true, HandlerRecovering, NowRecovered, "eventGrid"},
		{false, HandlerHealthy, NowHealthy, "eventGrid"},
		{true, HandlerUnknown, NowFailing, "container"},
		{true, HandlerNoDeliveries, NowFailing, "container"},
		{false, HandlerNoDeliveries, NowQuiet, "container"},
		{false, HandlerUnknown, NowQuiet, "container"},
	} {
		if v, by := HandlerNow(Readiness{Failing: c.containerFailing}, c.eg); v != c.want || by != c.by {
			t.Errorf("container failing %v, Event Grid %v: %s by %s, want %s by %s", c.containerFailing, c.eg, v, by, c.want, c.by)
		}
	}
}

// Whether the app's last start missed a stranded blob, at its boundaries: written exactly at the start is not
// missed (the start could not have seen it older); a TTL old at the start exactly is "listed"; a handled or crash
// blob, or a log not read, is never called missed.
func TestTheLastStartMissedWhatItShouldHaveTaken(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	start := now.Add(-2 * time.Hour)
	log := AppStarts{Resource: "app", Last: start}
	mk := func(lm time.Time) *Item {
		it := cfg.MakeItem(blob.Info{Name: "PUSH-NOTIFICATIONS/2026/12/1/9/x.json", LastModified: lm}, now)
		return &it
	}
	for _, c := range []struct {
		lm   time.Time
		want StartMiss
	}{
		{start, NotMissed},
		{start.Add(time.Second), NotMissed},
		{start.Add(-time.Second), MissedYoung},
		{start.Add(-cfg.TTL + time.Second), MissedYoung},
		{start.Add(-cfg.TTL), MissedListed},
		{start.Add(-48 * time.Hour), MissedListed},
	} {
		if got := cfg.StartMissed(mk(c.lm), log, now); got != c.want {
			t.Errorf("modified %s, the app started %s: %v, want %v", c.lm, start, got, c.want)
		}
	}
	old := mk(start.Add(-3 * time.Hour))
	if cfg.StartMissed(old, AppStarts{Resource: "app", Last: start, Problem: "403"}, now) != NotMissed ||
		cfg.StartMissed(old, AppStarts{}, now) != NotMissed || cfg.StartMissed(old, AppStarts{Resource: "app"}, now) != NotMissed {
		t.Error("missed, with no start known")
	}
	old.ArchivedTwin = true
	if cfg.StartMissed(old, log, now) != NotMissed {
		t.Error("a handled blob called missed")
	}
	old.ArchivedTwin, old.Summary = false, &Summary{Events: 1, CrashDepth: 9000}
	if cfg.StartMissed(old, log, now) != NotMissed {
		t.Error("a crash blob called missed")
	}
}
