package replay_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules/rulestest"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

func report(t *testing.T, c store.Container, cfg rules.Config, o rules.CheckOptions) rules.Report {
	t.Helper()
	l := replay.NewLoader(c, cfg)
	s, err := l.List(bg)
	if err != nil {
		t.Fatal(err)
	}
	l.HydrateWhere(bg, s, nil)
	return cfg.Check(s, o)
}

func kinds(r rules.Report) string {
	var k []string
	for _, f := range r.Findings {
		k = append(k, string(f.Kind))
	}
	return strings.Join(k, ",")
}

// Each finding driven into and out of existence with a controlled clock.
func TestCheckFindingsComeAndGo(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	mem := storetest.NewMem(t0)
	cfg := rulestest.ConfigWith(rulestest.Register())
	o := rules.CheckOptions{Names: true}
	at := func(d time.Duration) { mem.Clock = t0.Add(d) }

	if r := report(t, mem, cfg, o); !r.Healthy || kinds(r) != "" {
		t.Fatalf("empty container: %+v", r)
	}
	put(t, mem, "S/a.json", ev("a", "Push", ""))
	if r := report(t, mem, cfg, o); !r.Healthy {
		t.Fatalf("a fresh live blob is healthy: %s", kinds(r))
	}
	at(11 * time.Minute) // past the grace, under the TTL: the replay is not consuming
	if r := report(t, mem, cfg, o); kinds(r) != "replayStalled" {
		t.Fatalf("stall: %s", kinds(r))
	}
	at(61 * time.Minute) // past the TTL: stranded, and the stall is now a stranding
	r := report(t, mem, cfg, o)
	if kinds(r) != "stranded" {
		t.Fatalf("stranded: %s", kinds(r))
	}
	f, _ := r.Find(rules.FindingStranded)
	if f.Count != 1 || !f.Oldest.Equal(t0) || len(f.Names) != 1 {
		t.Fatalf("%+v", f)
	}
	// Close to the lifecycle deletion: about to be lost.
	at(cfg.Retention - 71*time.Hour)
	if r := report(t, mem, cfg, o); kinds(r) != "expiring,stranded" {
		t.Fatalf("expiring: %s", kinds(r))
	}
	// A drain dates it: young again, nothing to report.
	res, _ := replay.Drain(bg, mem, cfg, named("S/a.json"), rules.DrainOptions{})
	if res[0].Outcome != rules.OutcomeDrained {
		t.Fatal(res)
	}
	if r := report(t, mem, cfg, o); !r.Healthy {
		t.Fatalf("after the drain: %s", kinds(r))
	}
	// Quarantine counts against --max-quarantine; a malformed payload is its own finding.
	put(t, mem, "quarantine/S/q.json", ev("q", "Webhook", ""))
	mem.Write(bg, "S/bad.json", []byte("{"), store.WriteOptions{})
	if r := report(t, mem, cfg, o); kinds(r) != "quarantine,malformed" {
		t.Fatalf("quarantine+malformed: %s", kinds(r))
	}
	if r := report(t, mem, cfg, rules.CheckOptions{MaxQuarantine: 1}); kinds(r) != "malformed" {
		t.Fatalf("under --max-quarantine: %s", kinds(r))
	}
	mem.Delete(bg, "S/bad.json", "")
	mem.Delete(bg, "quarantine/S/q.json", "")
	if r := report(t, mem, cfg, o); !r.Healthy {
		t.Fatalf("all gone: %s", kinds(r))
	}
}

// Watch groups: the first pass is one state line per kind; later passes one new and one resolved line per kind,
// however many blobs; a replay stall is one begin and one end.
func TestChanges(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 500, time.UTC)
	many := make([]string, 44)
	for i := range many {
		many[i] = fmt.Sprintf("S/%02d.json", i)
	}
	a := rules.Report{Findings: []rules.Finding{{Kind: rules.FindingStranded, Count: 44, Names: many}, {Kind: rules.FindingReplayStalled, Count: 1, Names: []string{"l"}}}}
	got := rules.Changes(nil, a, now)
	if len(got) != 2 || got[0].Event != rules.ChangeState || got[0].Count != 44 || len(got[0].Names) != rules.MaxChangeNames || got[0].More != 24 ||
		got[1].Kind != rules.FindingReplayStalled || got[0].Time.Nanosecond() != 0 {
		t.Fatalf("first pass: %+v", got)
	}
	b := rules.Report{Findings: []rules.Finding{{Kind: rules.FindingStranded, Count: 44, Names: append(many[2:], "S/new-1.json", "S/new-2.json")}}}
	got = rules.Changes(&a, b, now)
	var lines []string
	for _, c := range got {
		lines = append(lines, fmt.Sprintf("%s %s %d/%d %v", c.Event, c.Kind, c.Count, c.Total, c.Names))
	}
	want := "new stranded 2/44 [S/new-1.json S/new-2.json]|resolved stranded 2/44 [S/00.json S/01.json]|resolved replayStalled 1/0 [l]"
	if strings.Join(lines, "|") != want {
		t.Fatalf("%q", lines)
	}
	if len(rules.Changes(&b, b, now)) != 0 {
		t.Fatal("no change, no line")
	}
}

// The loader's cache holds no more than the container: a complete listing drops the summaries of blobs gone.
func TestLoaderCacheIsBoundedToTheContainer(t *testing.T) {
	t.Parallel()
	mem := storetest.NewMem(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	cfg := rulestest.ConfigWith(rulestest.Register())
	for i := 0; i < 20; i++ {
		put(t, mem, fmt.Sprintf("S/%02d.json", i), ev(fmt.Sprint(i), "Push", ""))
	}
	l := replay.NewLoader(mem, cfg)
	s, _ := l.List(bg)
	l.HydrateWhere(bg, s, nil)
	if l.CacheSize() != 20 {
		t.Fatalf("cache %d", l.CacheSize())
	}
	for i := 0; i < 15; i++ {
		mem.Delete(bg, fmt.Sprintf("S/%02d.json", i), "")
	}
	if _, err := l.List(bg); err != nil {
		t.Fatal(err)
	}
	if l.CacheSize() != 5 {
		t.Fatalf("after 15 of 20 blobs went, the cache holds %d", l.CacheSize())
	}
}

// An expiring blob that disappears is lost only when its lifecycle deadline has passed and nothing of it is
// left: a drained blob keeps its name, a root blob the replay took has its archived/ or quarantine/ copy, a
// restored one has its copy (or the replay's copies of that) at the root, and one gone before its deadline was
// taken by a person. Changes then says lost, not resolved.
func TestExpiringBlobsThatAreLost(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	mem := storetest.NewMem(now)
	cfg := testCfg(mem)
	past := now.Add(-cfg.Retention - time.Hour) // past its deadline: the lifecycle rule may delete it
	soon := now.Add(-cfg.Retention + time.Hour) // an hour before it
	blobs := map[string]time.Time{
		"quarantine/S/deleted.json":  past,
		"quarantine/S/restored.json": past,
		"quarantine/S/consumed.json": past,
		"S/drained.json":             past,
		"S/archived.json":            past,
		"S/quarantined.json":         past,
		"S/gone.json":                past,
		"S/partial.json":             past,
		"quarantine/S/early.json":    soon,
	}
	for n, at := range blobs {
		events := []string{ev("a|9", "Push", "")}
		if n == "S/partial.json" {
			events = append(events, ev("b", "Push", ""))
		}
		put(t, mem, n, events...)
		if err := mem.Backdate(bg, n, at); err != nil {
			t.Fatal(err)
		}
	}
	// An earlier cycle's quarantine copy of S/partial.json holds one of its two events: not handled, and not a
	// copy the replay made of it when it went.
	_, older := rules.Twins("S/partial.json")
	put(t, mem, older, ev("a", "Push", ""))
	mem.Backdate(bg, older, past)
	prev := report(t, mem, cfg, rules.CheckOptions{Names: true})
	if f, _ := prev.Find(rules.FindingExpiring); f.Count != len(blobs)+1 {
		t.Fatalf("expiring: %+v", f)
	}
	restored, _ := rules.RestoreTarget("quarantine/S/restored.json", past)
	consumed, _ := rules.RestoreTarget("quarantine/S/consumed.json", past)
	archived, _ := rules.Twins(consumed)
	put(t, mem, restored, ev("a", "Push", ""))
	put(t, mem, archived, ev("a", "Push", ""))
	replayArchived, _ := rules.Twins("S/archived.json")
	_, replayQuarantined := rules.Twins("S/quarantined.json")
	put(t, mem, replayArchived, ev("a|9", "Push", ""))
	put(t, mem, replayQuarantined, ev("a", "Push", ""))
	for n := range blobs {
		if n != "S/drained.json" {
			mem.Delete(bg, n, "")
		}
	}
	put(t, mem, "S/drained.json", ev("a|9", "Push", "")) // drained: rewritten under its name
	cur := report(t, mem, cfg, rules.CheckOptions{Names: true})
	lost, err := replay.Lost(bg, mem, cfg, &prev, cur, now)
	if slices.Sort(lost); err != nil || strings.Join(lost, " ") != "S/gone.json S/partial.json quarantine/S/deleted.json" {
		t.Fatalf("lost %v %v", lost, err)
	}
	cur.Lost = lost
	var lines []string
	for _, c := range rules.Changes(&prev, cur, now) {
		if c.Kind == rules.FindingExpiring {
			lines = append(lines, fmt.Sprintf("%s %d", c.Event, c.Count))
		}
	}
	if strings.Join(lines, "|") != "lost 3|resolved 6" {
		t.Fatalf("%q", lines)
	}
}

// A blob the replay function crashes on has one voice: a crash finding, never also stranded, and — drained
// anyway and sitting live past the grace — never STALLED (the replay consumes everything else it could). A drain
// leaves it unless forced, judging the bytes it reads when the listing did not.
func TestACrashBlobIsACrashOnly(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	mem := storetest.NewMem(t0)
	cfg := rulestest.ConfigWith(rulestest.Register())
	o := rules.CheckOptions{Names: true}
	put(t, mem, "S/deep.json", ev("a", "Webhook", `,"extra":`+nested(rules.CertainStackDepth+10, "1"))) // quarantined whole: too deep
	mem.Clock = t0.Add(2 * time.Hour)
	if r := report(t, mem, cfg, o); kinds(r) != "crash" {
		t.Fatalf("a stranded crash blob raises %q, want crash alone", kinds(r))
	}
	res, _ := replay.Drain(bg, mem, cfg, named("S/deep.json"), rules.DrainOptions{})
	if res[0].Outcome != rules.OutcomeCrash || !res[0].Reason.Is(rules.ReasonCrash) || !res[0].Reason.Forceable {
		t.Fatalf("an unforced drain of the crash blob: %+v", res[0])
	}
	if r := report(t, mem, cfg, o); kinds(r) != "crash" {
		t.Fatalf("the unforced drain changed it: %q", kinds(r))
	}
	res, _ = replay.Drain(bg, mem, cfg, named("S/deep.json"), rules.DrainOptions{Force: true})
	if res[0].Outcome != rules.OutcomeDrained {
		t.Fatalf("a forced drain: %+v", res[0])
	}
	mem.Clock = mem.Clock.Add(cfg.LiveGrace + time.Minute) // live, past the grace: the replay threw on it again
	if r := report(t, mem, cfg, o); kinds(r) != "crash" {
		t.Fatalf("a crash blob sitting live past the grace raises %q, want crash alone (not replayStalled)", kinds(r))
	}
}
