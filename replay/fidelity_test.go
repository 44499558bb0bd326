package replay_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

// The seeded incident holds what the replay function itself leaves behind: one blob it crashes on (stranded,
// shown with its depth, previewed as a crash) and two it handled whose delete failed (an archived twin; a
// quarantine twin holding every event) — and every event it writes carries data.
func TestSeedCrashAndHandled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mem, cfg := seededIncident(t, 5)
	l := replay.NewLoader(mem, cfg)
	snap, err := l.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var infos []store.BlobInfo
	for _, it := range snap.Items {
		infos = append(infos, it.Info)
	}
	snap.Apply(l.Hydrate(ctx, infos)...)
	var crashes, handledArchived, handledQuarantine []string
	for i := range snap.Items {
		it := snap.Items[i]
		if it.Summary == nil {
			t.Fatalf("%s not hydrated", it.Name)
		}
		if strings.Contains(it.Summary.Error, `field "data"`) {
			t.Errorf("%s: an event without data: %s", it.Name, it.Summary.Error)
		}
		if it.Summary.CrashDepth > 0 {
			crashes = append(crashes, it.Name)
			if it.Pane != rules.PaneStranded || it.Summary.Malformed || it.Summary.CrashDepth <= rules.CertainStackDepth {
				t.Errorf("crash blob %s: pane %s %+v", it.Name, it.Pane, it.Summary)
			}
		}
		if a := cfg.AlertsOf(it, snap.Now); a.Handled {
			if strings.HasPrefix(a.HandledBy, rules.ArchivedPrefix) {
				handledArchived = append(handledArchived, it.Name)
			} else {
				handledQuarantine = append(handledQuarantine, it.Name)
			}
		}
	}
	if len(crashes) != 1 || len(handledArchived) != 1 || len(handledQuarantine) != 1 {
		t.Fatalf("crashes %v, handled by archive %v, handled by quarantine %v", crashes, handledArchived, handledQuarantine)
	}
	d, err := l.Inspect(ctx, crashes[0])
	if err != nil || d.Preview == nil || d.Preview.Crash == nil || d.Preview.DeleteOriginal || len(d.Payload.Events) != 1 {
		t.Fatalf("show of the crash blob: %v %+v", err, d.Preview)
	}
	// The twins hold what the replay function wrote: the same bytes archived, the refused events quarantined.
	for _, n := range []string{handledArchived[0], handledQuarantine[0]} {
		root, _ := mem.Read(ctx, n, store.MaxBlobBytes)
		pv := cfg.Plan(n, root.Body, rules.ParsePayload(root.Body))
		twin, want := pv.ArchiveName, root.Body
		if n == handledQuarantine[0] {
			twin, want = pv.QuarantineName, pv.QuarantineBody
			if len(pv.Republish) != 0 {
				t.Fatalf("%s republishes %d", n, len(pv.Republish))
			}
		}
		if got, err := mem.Read(ctx, twin, store.MaxBlobBytes); err != nil || string(got.Body) != string(want) {
			t.Fatalf("twin %s of %s: %v", twin, n, err)
		}
	}
}

// A drain taken straight from a listing, with no payload read (drain --json --yes, the dashboard before the rows
// are read), knows a blob whose archived/ copy exists from the listing alone; one whose quarantine/ copy holds
// all of its events only from its payload — which the drain reads anyway, and judges before it writes.
func TestDrainSkipsHandledWithoutHydration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mem, cfg := seededIncident(t, 5)
	snap, err := replay.NewLoader(mem, cfg).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	targets := cfg.DrainTargets(snap)
	res, err := replay.Drain(ctx, mem, cfg, targets, rules.DrainOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	var handled []string
	for _, r := range res {
		if r.Outcome == rules.OutcomeHandled {
			handled = append(handled, r.Name)
		}
	}
	if len(handled) != 2 {
		t.Fatalf("handled %v, want the two the scenario leaves", handled)
	}
	// Named with --include-handled, they are drained.
	res, _ = replay.Drain(ctx, mem, cfg, targets, rules.DrainOptions{DryRun: true, IncludeHandled: true})
	for _, r := range res {
		if r.Outcome == rules.OutcomeHandled {
			t.Fatalf("%s skipped with IncludeHandled", r.Name)
		}
	}
}

// What makes a blob "handled" must be the replay's own copy: a refused entry (a link, a FIFO) where the copy
// would be is not one, and a blob the replay crashes on was never quarantined by it, whatever sits at its
// quarantine name.
func TestHandledNeedsARealCopy(t *testing.T) {
	t.Parallel()
	cfg := rules.DefaultConfig()
	cfg.Handlers = scenario.IncidentRegister
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	old := now.Add(-3 * time.Hour)
	snap := rules.NewSnapshot("t")
	snap.Merge([]rules.Item{
		cfg.MakeItem(store.BlobInfo{Name: "S/a.json", LastModified: old}, now),
		cfg.MakeItem(store.BlobInfo{Name: "archived/S/a.json", LastModified: old, Refused: "a symbolic link"}, now),
		cfg.MakeItem(store.BlobInfo{Name: "quarantine/S/a.json", LastModified: old, Refused: "a FIFO"}, now),
		cfg.MakeItem(store.BlobInfo{Name: "S/crash.json", LastModified: old}, now),
		cfg.MakeItem(store.BlobInfo{Name: "quarantine/S/crash.json", LastModified: old}, now),
	}, now)
	i, _ := snap.Lookup("S/a.json")
	if it := snap.Items[i]; it.ArchivedTwin || it.QuarantineTwin || cfg.AlertsOf(it, now).Handled {
		t.Fatalf("refused entries made a handled blob: %+v", it)
	}
	i, _ = snap.Lookup("S/crash.json")
	crash := snap.Items[i]
	s := rules.Summary{Events: 1, CrashDepth: 5000}
	s.Verdicts[rules.VerdictCap] = 1 // refused events only: handled, were it not a crash
	crash.Summary = &s
	if a := cfg.AlertsOf(crash, now); a.Handled || !a.Crash {
		t.Fatalf("a crash blob beside a quarantine name: %+v", a)
	}
}

// Restoring a quarantine copy whose original still lingers at the root (the replay could not delete it) would
// put its events at the root twice: refused, in the plan show and the dashboard read and at write time, unless
// forced.
func TestRestoreRefusesWhileTheOriginalLingers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mem, cfg := seededIncident(t, 0)
	l := replay.NewLoader(mem, cfg)
	snap, _ := l.List(ctx)
	var lingering string
	for _, it := range snap.Items {
		if it.QuarantineTwin {
			_, lingering = rules.Twins(it.Name)
		}
	}
	if lingering == "" {
		t.Fatal("the scenario has no quarantine copy beside its original")
	}
	d, err := l.Inspect(ctx, lingering)
	if err != nil || d.Restore == nil || d.Restore.Refusal.Kind != rules.ReasonLingers {
		t.Fatalf("plan: %v %+v", err, d.Restore)
	}
	res, _ := replay.Restore(ctx, mem, cfg, []string{lingering}, replay.RestoreOptions{})
	if res[0].Outcome != rules.OutcomeRefused || res[0].Reason.Kind != rules.ReasonLingers {
		t.Fatalf("restore: %+v", res[0])
	}
	if _, err := mem.Stat(ctx, lingering); err != nil {
		t.Fatalf("the quarantine copy went: %v", err)
	}
	res, _ = replay.Restore(ctx, mem, cfg, []string{lingering}, replay.RestoreOptions{Force: true})
	if res[0].Outcome != rules.OutcomeRestored {
		t.Fatalf("forced: %+v", res[0])
	}
}

// The drain forecast says what the replay function will do: nothing for a blob it crashes on (its events are
// neither republished nor quarantined), nothing for a handled blob the drain skips.
func TestForecastCountsWhatHappens(t *testing.T) {
	t.Parallel()
	crash := rules.Summary{Events: 1, CrashDepth: 5000}
	crash.Verdicts[rules.VerdictReplay] = 1
	plain := rules.Summary{Events: 3}
	plain.Verdicts[rules.VerdictReplay], plain.Verdicts[rules.VerdictCap] = 2, 1
	items := []rules.Item{{Summary: &crash}, {Summary: &plain}}
	for i := range items {
		items[i].Name, items[i].Pane = fmt.Sprintf("S/%d.json", i), rules.PaneStranded
	}
	// Unforced, the crash blob is left (a drain only makes the replay throw again); forced, it is drained and
	// its events still go nowhere.
	f := rules.DefaultConfig().ForecastDrain(items, rules.DrainOptions{}, time.Now())
	if f.Blobs != 1 || f.CrashLeft != 1 || len(f.Left) != 1 || f.Left[0].Outcome != rules.OutcomeCrash || f.Crash != 0 ||
		f.Verdicts.Of(rules.VerdictReplay) != 2 || f.Verdicts.Of(rules.VerdictCap) != 1 {
		t.Fatalf("forecast %+v", f)
	}
	f = rules.DefaultConfig().ForecastDrain(items, rules.DrainOptions{Force: true}, time.Now())
	if f.Blobs != 2 || f.Crash != 1 || f.CrashLeft != 0 || f.Verdicts.Of(rules.VerdictReplay) != 2 || f.Verdicts.Of(rules.VerdictCap) != 1 {
		t.Fatalf("forced forecast %+v", f)
	}
}

// A drain of named blobs asks about the ones it will re-upload: a live blob, a quarantine copy and a blob that
// could not be read are not counted as blobs to drain, and what the drain then does agrees.
func TestForecastLeavesOutWhatTheDrainSkips(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	mem := storetest.NewMem(now)
	cfg := testCfg(mem)
	ev := `{"id":"a","subject":"/s","eventType":"T","dataVersion":"1","data":null}`
	for name, at := range map[string]time.Time{"S/old.json": now.Add(-3 * cfg.TTL), "S/young.json": now.Add(-cfg.TTL / 2), "quarantine/S/q.json": now.Add(-3 * cfg.TTL)} {
		put(t, mem, name, ev)
		if err := mem.Backdate(bg, name, at); err != nil {
			t.Fatal(err)
		}
	}
	snap := snapshot(t, mem, cfg)
	var items []rules.Item
	var targets []rules.DrainTarget
	for i := range snap.Items {
		items = append(items, *snap.Items[i])
		targets = append(targets, cfg.DrainTargetOf(snap.Items[i], snap.Now))
	}
	f := rules.DefaultConfig().ForecastDrain(items, rules.DrainOptions{}, time.Now())
	if f.Blobs != 1 || f.NotStranded != 2 {
		t.Fatalf("forecast %+v: want 1 blob to drain, 2 not stranded", f)
	}
	// The young blob comes of age before the drain runs: it was not in the question, so it is not drained.
	mem.Clock = now.Add(cfg.TTL)
	res, err := replay.Drain(bg, mem, cfg, targets, rules.DrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	drained := 0
	for _, r := range res {
		if r.Outcome == rules.OutcomeDrained {
			drained++
			if r.Name != "S/old.json" {
				t.Errorf("drained %s, which the question did not count", r.Name)
			}
		}
	}
	if drained != f.Blobs {
		t.Fatalf("asked about %d, drained %d: %+v", f.Blobs, drained, res)
	}
	unreadable := rules.Item{Pane: rules.PaneStranded, ReadFailed: true, ReadErr: "too large"}
	unreadable.Name = "S/big.json"
	// Unreadable (a refused entry, a failed read): tried again, asked about, but not counted as drained.
	if f := rules.DefaultConfig().ForecastDrain([]rules.Item{unreadable}, rules.DrainOptions{}, time.Now()); f.Blobs != 0 || f.Unreadable != 1 || f.Unread != 0 || !f.Asks() {
		t.Fatalf("unreadable forecast %+v", f)
	}
	// Over the size limit the drain never reads it: not a blob it will drain.
	unreadable.Size = store.MaxBlobBytes + 1
	if f := rules.DefaultConfig().ForecastDrain([]rules.Item{unreadable}, rules.DrainOptions{}, time.Now()); f.Blobs != 0 || f.TooLarge != 1 || f.Asks() {
		t.Fatalf("too large forecast %+v", f)
	}
}

// incidentNow is the pinned clock of the seeded incident in memory.
var incidentNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// seededIncident is the incident scenario (with count bulk blobs) in memory at incidentNow, and the rules with its
// handler register.
func seededIncident(t *testing.T, count int) (*storetest.Mem, rules.Config) {
	t.Helper()
	mem := storetest.NewMem(incidentNow)
	cfg := rules.DefaultConfig()
	if _, err := scenario.Seed(context.Background(), mem, scenario.SeedOptions{Count: count, Seed: 7, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	cfg.Handlers = scenario.IncidentRegister
	return mem, cfg
}
