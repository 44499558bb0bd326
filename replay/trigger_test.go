package replay_test

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules/rulestest"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

// The replay subscription's advanced filter ignores case, the function's own guard does not: a root blob whose
// name starts with archived/ or quarantine/ in another case is never delivered. It is its own state — not
// stranded work, not a stalled replay — a finding of its own, and no drain touches it; the exact lowercase
// prefixes stay the replay's own panes.
func TestUntriggerableBlobs(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"ARCHIVED/2026/1/1/1/a.json": true, "QUARANTINE/2026/1/1/1/a.json": true, "Quarantine/x.json": true, "aRcHiVeD/x": true,
		"archived/x.json": false, "quarantine/x.json": false, "ARCHIVEDX/x.json": false, "ARCHIVED": false, "PUSH/2026/1/1/1/a.json": false,
		"archivedX/y": false, "quarantine.json": false,
	} {
		if got := rules.Untriggerable(name); got != want {
			t.Errorf("Untriggerable(%q) = %v, want %v", name, got, want)
		}
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	mem := storetest.NewMem(now)
	cfg := rulestest.ConfigWith(rulestest.Register())
	for name, age := range map[string]time.Duration{"ARCHIVED/2026/12/1/9/a.json": 3 * time.Hour, "QUARANTINE/2026/12/1/11/b.json": 30 * time.Minute,
		"Quarantine/2026/12/1/9/c.json": 3 * time.Hour, "PUSH/2026/12/1/9/d.json": 3 * time.Hour} {
		put(t, mem, name, ev("e", "Push", ""))
		mem.Backdate(bg, name, now.Add(-age))
	}
	snap := snapshot(t, mem, cfg)
	r := cfg.Check(snap, rules.CheckOptions{Names: true})
	u, ok := r.Find(rules.FindingUntriggerable)
	if !ok || u.Count != 3 {
		t.Fatalf("untriggerable finding %+v", r.Findings)
	}
	if s, _ := r.Find(rules.FindingStranded); s.Count != 1 || s.Names[0] != "PUSH/2026/12/1/9/d.json" {
		t.Fatalf("stranded counts only what a drain can replay: %+v", s)
	}
	if _, ok := r.Find(rules.FindingReplayStalled); ok {
		t.Fatal("an untriggerable live blob is not a stalled replay")
	}
	var targets []rules.DrainTarget
	for i := range snap.Items {
		targets = append(targets, cfg.DrainTargetOf(snap.Items[i], snap.Now))
	}
	var items []rules.Item
	for _, it := range snap.Items {
		items = append(items, *it)
	}
	f := cfg.ForecastDrain(items, rules.DrainOptions{}, snap.Now)
	if f.Blobs != 1 || f.Untriggerable != 3 || len(f.Names) != 1 {
		t.Fatalf("forecast %+v", f)
	}
	res, _ := replay.Drain(bg, mem, cfg, targets, rules.DrainOptions{IncludeHandled: true})
	for _, x := range res {
		want := rules.OutcomeUntriggerable
		if x.Name == "PUSH/2026/12/1/9/d.json" {
			want = rules.OutcomeDrained
		}
		if x.Outcome != want {
			t.Errorf("%s: %s, want %s", x.Name, x.Outcome, want)
		}
		if x.Outcome == rules.OutcomeUntriggerable && x.Reason.Kind != rules.ReasonUntriggerable {
			t.Errorf("%s: reason %+v", x.Name, x.Reason)
		}
	}
	// A restore whose name would be untriggerable is refused: it would never resume.
	body := []byte("[" + ev("e", "Push", "") + "]")
	if rp := cfg.PlanRestore("quarantine/Archived/x.json", body, rules.ParsePayload(body), now); rp.Target != "" || rp.Refusal.Kind != rules.ReasonUntriggerableTarget {
		t.Fatalf("restore to an untriggerable name: %+v", rp)
	}
}

// An acknowledgement deadletter did not write as it is silences nothing: a forged far-future until, one longer
// than the maximum, a start in the future, a text outside its grammar. A real one silences a stranded blob, and
// never a crash.
func TestForgedAndOverlongAcks(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	cfg := rulestest.ConfigWith(rulestest.Register())
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	bi := store.BlobInfo{Name: "PUSH/2026/12/1/9/a.json", ETag: `"0x1"`, LastModified: now.Add(-3 * time.Hour)}
	ack := func(at, until time.Time, mod func(map[string]string)) store.BlobInfo {
		b := bi
		b.Tags = map[string]string{"dlAckBy": b64("ops@host"), "dlAckAt": at.Format(time.RFC3339), "dlAckUntil": until.Format(time.RFC3339), "dlAckEtag": "0x1", "other": "kept"}
		if mod != nil {
			mod(b.Tags)
		}
		return b
	}
	for _, c := range []struct {
		name string
		bi   store.BlobInfo
		want rules.AckState
	}{
		{"a day", ack(now.Add(-time.Hour), now.Add(23*time.Hour), nil), rules.AckActive},
		{"a week, exactly", ack(now.Add(-time.Hour), now.Add(-time.Hour+rules.DefaultMaxAck), nil), rules.AckActive},
		{"centuries", ack(now.Add(-time.Hour), now.AddDate(291, 0, 0), nil), rules.AckSuspicious},
		{"a forged start to pass the length", ack(now.AddDate(290, 0, 0), now.AddDate(291, 0, 0), nil), rules.AckSuspicious},
		{"until far off, start long ago", ack(now.AddDate(0, -1, 0), now.AddDate(0, 0, 20), nil), rules.AckSuspicious},
		{"by not base64", ack(now.Add(-time.Hour), now.Add(time.Hour), func(m map[string]string) { m["dlAckBy"] = "not base64!" }), rules.AckSuspicious},
		{"until not a time", ack(now.Add(-time.Hour), now.Add(time.Hour), func(m map[string]string) { m["dlAckUntil"] = "2099" }), rules.AckSuspicious},
		{"no etag", ack(now.Add(-time.Hour), now.Add(time.Hour), func(m map[string]string) { delete(m, "dlAckEtag") }), rules.AckSuspicious},
		{"of another version", ack(now.Add(-time.Hour), now.Add(time.Hour), func(m map[string]string) { m["dlAckEtag"] = "0x2" }), rules.AckEnded},
		{"run out", ack(now.Add(-3*time.Hour), now.Add(-time.Hour), nil), rules.AckEnded},
	} {
		_, st, why := cfg.AckOf(c.bi, now)
		if st != c.want || (st == rules.AckSuspicious) != (why != "") {
			t.Errorf("%s: state %d (%s), want %d", c.name, st, why, c.want)
		}
		it := cfg.MakeItem(c.bi, now)
		if a := cfg.AlertsOf(&it, now); a.Acked != (c.want == rules.AckActive) {
			t.Errorf("%s: acked %v", c.name, a.Acked)
		}
	}
	// A lower --max-ack makes a day-long ack suspicious.
	short := cfg
	short.MaxAck = 12 * time.Hour
	if _, st, _ := short.AckOf(ack(now.Add(-time.Hour), now.Add(23*time.Hour), nil), now); st != rules.AckSuspicious {
		t.Fatal("a 24h ack under --max-ack 12h")
	}
	// What an active ack silences, and what it does not.
	crash := rules.Summary{Events: 1, CrashDepth: rules.CertainStackDepth + 1}
	it := cfg.MakeItem(ack(now.Add(-time.Hour), now.Add(time.Hour), nil), now)
	it.Summary = &crash
	forged := cfg.MakeItem(ack(now.Add(-time.Hour), now.AddDate(5, 0, 0), nil), now)
	forged.Name = "PUSH/2026/12/1/9/b.json"
	snap := rules.NewSnapshot("mem")
	snap.Merge([]rules.Item{it, forged}, now)
	r := cfg.Check(snap, rules.CheckOptions{Names: true})
	if c, ok := r.Find(rules.FindingCrash); !ok || c.Count != 1 || len(c.Acked) != 1 || c.Acked[0].Ack.By != "ops@host" {
		t.Fatalf("an ack hid a crash: %+v", r)
	}
	// (The acknowledged crash blob is a crash only: it is not stranded work a drain could help.)
	if s, ok := r.Find(rules.FindingStranded); !ok || s.Count != 1 || s.Names[0] != forged.Name || len(s.Acked) != 0 {
		t.Fatalf("stranded: the forged ack must not silence: %+v", s)
	}
	if r.SuspiciousCount != 1 || r.Suspicious[0].Name != forged.Name || r.Acked != 1 {
		t.Fatalf("suspicious %+v acked %d", r.Suspicious, r.Acked)
	}
	ignoring := cfg
	ignoring.IgnoreAcks = true
	if ri := ignoring.Check(snap, rules.CheckOptions{Names: true}); ri.Acked != 0 {
		t.Fatalf("--ignore-acks still counts %d acked", ri.Acked)
	} else if c, _ := ri.Find(rules.FindingCrash); len(c.Acked) != 0 || c.Count != 1 {
		t.Fatalf("--ignore-acks: crash %+v", c)
	}
}

// An ack is held to the ETag the operator saw on every backend: where the service does not enforce it on Set
// Blob Tags (Azurite), the ack looks again and reports the blob changed, leaving no ack on the new version.
func TestAckOfABlobChangedSinceListing(t *testing.T) {
	t.Parallel()
	storetest.Backends(t, func(t *testing.T, c store.Container) {
		seen := put(t, c, "PUSH/2026/12/1/9/a.json", ev("e", "Push", ""))
		if _, err := c.Write(bg, seen.Name, []byte("["+ev("e2", "Push", "")+"]"), store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		cfg := rulestest.ConfigWith(rulestest.Register())
		res, err := replay.Acknowledge(bg, c, []store.BlobInfo{seen}, replay.AckOptions{For: time.Hour, Max: cfg.AckLimit(), Now: time.Now(), By: "ops"})
		if err != nil || res[0].Outcome != rules.OutcomeChanged {
			t.Fatalf("ack of a changed blob: %+v %v", res, err)
		}
		l, _ := store.ListAll(bg, c)
		for _, b := range l.Blobs {
			if _, st, _ := cfg.AckOf(b, time.Now()); st == rules.AckActive {
				t.Fatalf("%s carries an active ack it never had: %v", b.Name, b.Tags)
			}
			if _, ok := b.Tags["dlAckUntil"]; ok {
				t.Fatalf("ack tags left on the new version: %v", b.Tags)
			}
		}
	})
}

// An ack longer than the maximum is refused before anything is written.
func TestAckLongerThanTheMaximumIsRefused(t *testing.T) {
	t.Parallel()
	mem := storetest.NewMem(time.Now())
	bi := put(t, mem, "PUSH/x.json", ev("e", "Push", ""))
	cfg := rulestest.ConfigWith(rulestest.Register())
	if _, err := replay.Acknowledge(bg, mem, []store.BlobInfo{bi}, replay.AckOptions{For: 106000 * 24 * time.Hour, Max: cfg.AckLimit(), Now: time.Now(), By: "ops"}); err == nil ||
		!strings.Contains(err.Error(), strconv.Itoa(7)+"d") {
		t.Fatalf("a 106,000-day ack: %v", err)
	}
}
