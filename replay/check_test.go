package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

func report(t *testing.T, c store.Container, cfg Config, o CheckOptions) Report {
	t.Helper()
	l := NewLoader(c, cfg)
	s, err := l.List(bg)
	if err != nil {
		t.Fatal(err)
	}
	l.HydrateWhere(bg, s, nil)
	return cfg.Check(s, o)
}

func kinds(r Report) string {
	var k []string
	for _, f := range r.Findings {
		k = append(k, string(f.Kind))
	}
	return strings.Join(k, ",")
}

// Each finding driven into and out of existence with a controlled clock.
func TestCheckFindingsComeAndGo(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	mem := storetest.NewMem(t0)
	cfg := cfgWith(testRegister)
	o := DefaultCheckOptions()
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
	f, _ := r.Find(FindingStranded)
	if f.Count != 1 || !f.Oldest.Equal(t0) || !strings.Contains(f.Message, "deadletter drain") {
		t.Fatalf("%+v", f)
	}
	// Close to the lifecycle deletion: about to be lost.
	at(cfg.Retention - 71*time.Hour)
	if r := report(t, mem, cfg, o); kinds(r) != "expiring,stranded" {
		t.Fatalf("expiring: %s", kinds(r))
	}
	// A drain dates it: young again, nothing to report.
	res, _ := Drain(bg, mem, cfg, []store.BlobInfo{{Name: "S/a.json"}}, ActionOptions{})
	if res[0].Outcome != OutcomeDrained {
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
	if r := report(t, mem, cfg, CheckOptions{ExpiringWithin: o.ExpiringWithin, MaxQuarantine: 1}); kinds(r) != "malformed" {
		t.Fatalf("under --max-quarantine: %s", kinds(r))
	}
	mem.Delete(bg, "S/bad.json", "")
	mem.Delete(bg, "quarantine/S/q.json", "")
	if r := report(t, mem, cfg, o); !r.Healthy {
		t.Fatalf("all gone: %s", kinds(r))
	}
}

func TestChanges(t *testing.T) {
	now := time.Now()
	a := Report{Findings: []Finding{{Kind: FindingStranded, Names: []string{"x", "y"}}, {Kind: FindingReplayStalled, Names: []string{"l"}}}}
	got := Changes(nil, a, now)
	if len(got) != 3 || got[0].Name != "x" || got[2].Kind != FindingReplayStalled || got[2].Name != "" {
		t.Fatalf("%+v", got)
	}
	b := Report{Findings: []Finding{{Kind: FindingStranded, Names: []string{"y", "z"}}}}
	got = Changes(&a, b, now)
	var lines []string
	for _, c := range got {
		lines = append(lines, c.Event+" "+string(c.Kind)+" "+c.Name)
	}
	if strings.Join(lines, "|") != "new stranded z|resolved replayStalled |resolved stranded x" {
		t.Fatalf("%q", lines)
	}
	if len(Changes(&b, b, now)) != 0 {
		t.Fatal("no change, no line")
	}
}
