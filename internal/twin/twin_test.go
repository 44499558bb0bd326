package twin

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/testkit"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// TestMain keeps the twins' records in a state directory of the tests' own, and fails the run if a test left a
// process or a file behind.
func TestMain(m *testing.M) {
	state, err := os.MkdirTemp("", "deadletter-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	testkit.WaitingParallelism()
	code := testkit.Clean(m)
	os.RemoveAll(state)
	os.Exit(code)
}

var opens = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// started is a twin of the scenario, opened where the rehearsal opens.
func started(t testing.TB, scen string) (*Twin, *replay.Loader) {
	t.Helper()
	dir := t.TempDir()
	tw, err := Start(context.Background(), dir, made.Twin, scen, 1, opens)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tw.Close)
	d, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d.UseClockFile(ClockPath(tw.place))
	return tw, replay.NewLoader(d, Config())
}

// holds checks the twin's invariants: every event it published is accounted for, and no rule of the estate was
// broken (a copy retriggering the replay, an event republished past the cap, an original deleted before its
// copies landed).
func holds(t *testing.T, tw *Twin, when string) Account {
	t.Helper()
	a, err := tw.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !a.Balanced() {
		t.Fatalf("%s: the account does not balance: %s (nowhere: %v)", when, a, a.Nowhere[:min(5, len(a.Nowhere))])
	}
	if v := tw.State().Violations; len(v) > 0 {
		t.Fatalf("%s: the estate's rules were broken: %v", when, v)
	}
	return a
}

// predictions are what show predicts for every root blob as it stands: the plan of the blob's detail.
type prediction struct {
	republish  int
	quarantine string
	crash      bool
	missing    bool
}

// predictAll records, just before each run of the replay function, what show predicts for the blob then: the
// plan of its detail (Loader.Inspect, what show prints).
func predictAll(tw *Twin, l *replay.Loader) map[string][]prediction {
	out := map[string][]prediction{}
	tw.beforeReplay = func(ctx context.Context, name string) {
		d, err := l.Inspect(ctx, name)
		if err != nil || d.Preview == nil {
			out[name] = append(out[name], prediction{missing: true})
			return
		}
		out[name] = append(out[name], prediction{republish: len(d.Preview.Republish), quarantine: d.Preview.QuarantineName, crash: d.Preview.Crash != nil})
	}
	return out
}

// The incident, run for a day in half-hour steps: after every step the account balances and the estate's rules
// hold, and every blob the replay function ran on did what show predicted for it before the step.
//
// The twin's replay *is* Plan, by design (internal/estate runs replay.Config.Plan, the function show's prediction
// calls): so this test cannot catch a bug in Plan itself — it checks that show reads the blob the replay then
// runs on, at the moment it runs, and that the twin's plumbing around Plan keeps the account. What checks Plan
// against the estate's own JavaScript is the Node test (replay/fidelity_node_test.go, run by ./test.sh).
func TestTheIncidentRunsTrue(t *testing.T) {
	t.Parallel()
	tw, l := started(t, "incident")
	a := holds(t, tw, "at the opening")
	if a.InBlobs == 0 || tw.State().Totals.TriggersDropped == 0 || tw.State().Totals.Replayed == 0 {
		t.Fatalf("the incident has no stranded or replayed blobs: %+v", tw.State().Totals)
	}
	s, _ := l.List(context.Background())
	n := s.Count()
	if n[rules.PaneStranded] < 10 || n[rules.PaneQuarantine] < 3 || n[rules.PaneArchived] < 10 {
		t.Fatalf("the opening picture: %v", n)
	}
	if _, stalled := Config().Check(s, rules.CheckOptions{}).Find(rules.FindingReplayStalled); stalled {
		t.Fatal("STALLED at the opening, though the replay runs")
	}
	predicted := predictAll(tw, l)
	compared := 0
	for step := 0; step < 48; step++ {
		runs := len(tw.State().Runs)
		if _, err := tw.Advance(context.Background(), tw.Now().Add(30*time.Minute)); err != nil {
			t.Fatal(err)
		}
		holds(t, tw, tw.Now().Format(time.RFC3339))
		for _, r := range tw.State().Runs[runs:] {
			p := predicted[r.Blob][0]
			predicted[r.Blob] = predicted[r.Blob][1:]
			compared++
			switch {
			case p.missing != r.Missing:
				t.Fatalf("%s: show found it %v, the replay %v", r.Blob, !p.missing, !r.Missing)
			case r.Crashed != p.crash || !r.Crashed && !r.Missing && (r.Published != p.republish || r.Quarantine != p.quarantine):
				t.Fatalf("%s: show predicted republish %d, quarantine %q, crash %v; the replay republished %d, quarantined %q, crashed %v",
					r.Blob, p.republish, p.quarantine, p.crash, r.Published, r.Quarantine, r.Crashed)
			}
		}
	}
	if compared == 0 {
		t.Fatal("no replay run was compared with a prediction")
	}
}

// A drain of every stranded blob at the opening: two twin hours on, the blobs whose handlers recovered are
// consumed (archived by the replay), the deep one still crashes, nothing is STALLED, and the account balances.
func TestADrainIsConsumed(t *testing.T) {
	t.Parallel()
	tw, l := started(t, "incident")
	ctx := context.Background()
	s, err := l.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l.HydrateWhere(ctx, s, nil)
	cfg := Config()
	plan := cfg.PlanDrainStranded(s) // the plan the command line and the dashboard run
	if plan.CrashLeft != 1 || len(plan.Targets) != len(plan.Items)-1 {
		t.Fatalf("the plan takes %d of %d and leaves %d crash blob(s)", len(plan.Targets), len(plan.Items), plan.CrashLeft)
	}
	res, err := replay.DrainAsPlanned(ctx, l.Container, cfg, plan, rules.DrainOptions{})
	// Every stranded blob is drained but the deep one, which a drain only makes the replay throw on again: as planned.
	if tally := rules.TallyOf(res); err != nil || tally[rules.OutcomeCrash] != 1 || tally[rules.OutcomeDrained] != len(plan.Targets) {
		t.Fatalf("drain: %v %v", tally, err)
	}
	if _, err := tw.Advance(ctx, tw.Now().Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	holds(t, tw, "two hours after the drain")
	s, _ = l.List(ctx)
	l.HydrateWhere(ctx, s, nil)
	rep := cfg.Check(s, rules.CheckOptions{})
	if _, stalled := rep.Find(rules.FindingReplayStalled); stalled {
		t.Fatal("STALLED after a drain, though the replay runs")
	}
	left := 0
	for _, it := range s.Items {
		for _, tg := range plan.Targets {
			if it.Name == tg.Name && it.Pane == rules.PaneStranded && (it.Summary == nil || it.Summary.CrashDepth == 0) {
				left++
			}
		}
	}
	if left > 0 {
		t.Fatalf("%d drained blob(s) are stranded again two hours on", left)
	}
	if n := s.Count()[rules.PaneStranded]; n > 1 {
		t.Fatalf("%d stranded after the drain (only the one that crashes should be)", n)
	}
}

// With the replay stopped just after the opening, new dead letters sit live, turn STALLED past the grace, and —
// their triggers' hour run out — stranded: honestly, since nothing consumed them.
func TestAStoppedReplayStallsThenStrands(t *testing.T) {
	t.Parallel()
	tw, l := started(t, "replay-stopped")
	ctx := context.Background()
	cfg := Config()
	stranded := func() int {
		s, _ := l.List(ctx)
		return s.Count()[rules.PaneStranded]
	}
	before := stranded()
	if _, err := tw.Advance(ctx, tw.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	s, _ := l.List(ctx)
	if _, stalled := cfg.Check(s, rules.CheckOptions{}).Find(rules.FindingReplayStalled); !stalled {
		t.Fatalf("no STALLED an hour into the replay's outage: %v", s.Count())
	}
	if _, err := tw.Advance(ctx, tw.Now().Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	holds(t, tw, "in the outage")
	if after := stranded(); after <= before {
		t.Fatalf("stranded %d → %d: the outage stranded nothing", before, after)
	}
}

// A twin saved and opened again (another process: twin advance) carries on where it was.
func TestTheTwinReopens(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	if _, err := Open(context.Background(), tw.root, "test"); !errors.Is(err, made.ErrBusy) || !strings.Contains(err.Error(), "twin start") {
		t.Fatalf("a second process opened a held twin: %v", err)
	}
	tw.Close()
	again, err := Open(context.Background(), tw.root, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if !again.Now().Equal(tw.Now()) || again.State().Totals != tw.State().Totals {
		t.Fatalf("reopened at %v with %+v", again.Now(), again.State().Totals)
	}
	if _, err := again.Advance(context.Background(), again.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	holds(t, again, "reopened and advanced")
	if c, ok, _ := dirstore.ReadClock(ClockPath(tw.place)); !ok || !c.Now(time.Now()).Equal(again.Now()) {
		t.Fatalf("the directory's clock reads %v, the twin's %v", c.Now(time.Now()), again.Now())
	}
}

// The twin's day: twin advance --by 24h of the incident (bench.sh's row; the budget is 10 s).
func BenchmarkAdvance24h(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		tw, _ := started(b, "incident")
		b.StartTimer()
		if _, err := tw.Advance(context.Background(), tw.Now().Add(24*time.Hour)); err != nil {
			b.Fatal(err)
		}
	}
}

// A demo's twin, held while the demo runs, says the demo holds it — not twin start, which the operator never ran.
func TestADemoSaysItHoldsItsTwin(t *testing.T) {
	t.Parallel()
	tw, err := StartConfig(context.Background(), t.TempDir(), made.Demo, "incident", 1, time.Now(), Config())
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	_, err = Open(context.Background(), tw.root, "test")
	if !errors.Is(err, made.ErrBusy) || !strings.Contains(err.Error(), "in use by deadletter demo") {
		t.Fatalf("a running demo's twin: %v", err)
	}
}

// A twin an earlier deadletter kept knows its blobs by the ETags of then (before the change time was part of
// them): it takes them for the same versions, never for writes made behind its back (each would be a BlobCreated
// the replay takes again). A blob really rewritten is still noticed.
func TestATwinKeptByAnEarlierDeadletterKnowsItsBlobs(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	ctx := context.Background()
	if _, err := tw.Advance(ctx, tw.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	l, err := store.ListAll(ctx, tw.dir)
	if err != nil || len(l.Blobs) == 0 {
		t.Fatalf("listing: %v, %d blobs", err, len(l.Blobs))
	}
	for _, bi := range l.Blobs {
		tw.st.known.set(bi.Name, dirstore.LegacyETag(bi.ETag), bi.LastModified)
	}
	queued := len(tw.st.Queue)
	if err := tw.notice(ctx); err != nil {
		t.Fatal(err)
	}
	if len(tw.st.Queue) != queued {
		t.Fatalf("the legacy ETags were taken for %d new writes", len(tw.st.Queue)-queued)
	}
	for _, bi := range l.Blobs {
		if !tw.st.known.same(bi.Name, bi.ETag) {
			t.Fatalf("%s is not known by its ETag now", bi.Name)
		}
	}
	// a real rewrite behind the twin's back is a BlobCreated still
	root := l.Blobs[0]
	b, err := tw.dir.Read(ctx, root.Name, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tw.dir.Write(ctx, root.Name, b.Body, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tw.notice(ctx); err != nil {
		t.Fatal(err)
	}
	if len(tw.st.Queue) != queued+1 {
		t.Fatalf("a rewrite made %d BlobCreated, want 1", len(tw.st.Queue)-queued)
	}
}
