package present

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

func TestTallyLine(t *testing.T) {
	rs := []rules.Result{{Outcome: rules.OutcomeCancelled}, {Outcome: rules.OutcomeDrained}, {Outcome: rules.OutcomeGone}, {Outcome: rules.OutcomeDrained}, {Outcome: rules.OutcomeExcluded}}
	if got := TallyLine(rules.TallyOf(rs), false); got != "2 drained, 1 excluded, 1 gone, 1 cancelled" {
		t.Fatalf("%q", got)
	}
	if got := TallyLine(rules.TallyOf(rs), true); got != "2 would drain, 1 excluded, 1 gone, 1 cancelled" {
		t.Fatalf("dry run: %q", got)
	}
	if got := TallyLine(nil, false); got != "nothing to do" {
		t.Fatalf("%q", got)
	}
}

// The drain's question counts what it re-uploads, and what it only tries again, in words that read.
func TestDrainQuestion(t *testing.T) {
	for _, tc := range []struct {
		f    rules.Forecast
		want string
	}{
		{rules.Forecast{Blobs: 3}, "Drain 3 blob(s)?"},
		{rules.Forecast{Blobs: 3, Unreadable: 2}, "Drain 3 blob(s), and try again 2 that could not be read?"},
		{rules.Forecast{Unreadable: 2}, "Try again to drain 2 blob(s) that could not be read?"},
	} {
		if got := DrainQuestion(tc.f, "blob(s)"); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.f, got, tc.want)
		}
	}
}

// At 80 columns the reason column keeps what tells blobs apart — the outcome — under a title that says so, and a
// sort arrow never eats a title down to "A…↓".
func TestNarrowColumnsKeepWhatTheyMean(t *testing.T) {
	if got := ColReason.Fit("MaxAttempts/NotFound", 11); strings.TrimSpace(got) != "NotFound" {
		t.Errorf("narrow reason cell %q, want the outcome", got)
	}
	if got := ColReason.Fit("TimeToLiveExceeded/InternalServerError", 24); strings.TrimSpace(got) != "…/InternalServerError" {
		t.Errorf("a reason cell cut under the full title %q, want the cut said", got)
	}
	if got := ColReason.Fit("MaxAttempts", 8); strings.TrimSpace(got) != "MaxAtte…" {
		t.Errorf("narrow reason without an outcome %q", got)
	}
	if got := ColReason.Head(11, ""); strings.TrimSpace(got) != "OUTCOME" {
		t.Errorf("narrow reason title %q", got)
	}
	if got := ColAttempt.Head(3, "↓"); got != "AT↓" {
		t.Errorf("ATT sorted at 3 columns: %q", got)
	}
	if got := ColState.Fit("acked ops@host", 8); got != "acked   " {
		t.Errorf("narrow STATE %q, want the word whole", got)
	}
	it := rules.Item{}
	it.Name = "quarantine/WEBHOOKS/2026/12/1/4/g.json"
	if got := ColNameInPane.Cell(Row{Item: &it}); got != "WEBHOOKS/2026/12/1/4/g.json" {
		t.Errorf("ls on a terminal spends width on the pane's prefix: %q", got)
	}
	if got := ColAge.Head(8, "↓"); got != "AGE↓    " {
		t.Errorf("AGE sorted: %q", got)
	}
}

// ls's urgency order: about to be lost first, the sooner to expire first; then stranded, quarantine, live,
// archived; then the oldest; then by name — and blobs of one time listed on two pages (each page its own clock,
// so their ages differ) keep their order by name, run after run.
func TestSortByUrgency(t *testing.T) {
	t.Parallel()
	cfg := rules.DefaultConfig()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	item := func(name string, lm time.Time, clock time.Duration) *rules.Item {
		it := cfg.MakeItem(store.BlobInfo{Name: name, LastModified: lm}, now.Add(clock))
		return &it
	}
	old := now.Add(-cfg.Retention + time.Hour) // within the expiring window
	older := old.Add(-time.Minute)
	day := now.Add(-24 * time.Hour)
	want := []*rules.Item{
		item("S/2026/11/7/11/b.json", older, 0),
		item("S/2026/11/7/11/a.json", old, 0),
		item("S/2026/12/6/12/a.json", day, 0),
		item("S/2026/12/6/12/b.json", day, time.Second), // (listed a second later: a second older by its age)
		item("S/2026/12/6/13/c.json", day.Add(time.Hour), 0),
		item("quarantine/S/2026/12/6/12/a.json", day.Add(2*time.Hour), 0),
		item("S/2026/12/7/11/live.json", now.Add(-10*time.Minute), 0),
		item("archived/S/2026/12/6/12/z.json", day, 0),
	}
	for seed := int64(0); seed < 20; seed++ {
		got := slices.Clone(want)
		rand.New(rand.NewSource(seed)).Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		SortByUrgency(cfg, now, got)
		if !slices.Equal(got, want) {
			var names []string
			for _, it := range got {
				names = append(names, it.Name)
			}
			t.Fatalf("order %v", names)
		}
	}
}
