package metrics

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// blob is one blob of a test snapshot: its name, age and payload summary (nil: not read).
type blob struct {
	name    string
	age     time.Duration
	summary *rules.Summary
	readErr string
	acked   bool
}

func verdicts(pairs ...any) rules.VerdictCounts {
	var vc rules.VerdictCounts
	for i := 0; i < len(pairs); i += 2 {
		vc[pairs[i].(rules.Verdict)] = pairs[i+1].(int)
	}
	return vc
}

func snapshot(cfg rules.Config, blobs ...blob) *rules.Snapshot {
	s := rules.NewSnapshot("acct/deadletter")
	var items []rules.Item
	for i, b := range blobs {
		bi := store.BlobInfo{Name: b.name, ETag: fmt.Sprintf(`"0x%d"`, i), LastModified: now.Add(-b.age)}
		if b.acked {
			// The tags deadletter ack writes: until a time to come, for this version of the blob.
			bi.Tags = map[string]string{"dlAckBy": "b3Bz", "dlAckAt": now.Add(-time.Hour).Format(time.RFC3339),
				"dlAckUntil": now.Add(time.Hour).Format(time.RFC3339), "dlAckEtag": fmt.Sprintf("0x%d", i)}
		}
		it := cfg.MakeItem(bi, now)
		it.Summary, it.ReadErr = b.summary, b.readErr
		items = append(items, it)
	}
	s.Merge(items, now)
	return s
}

// incident has a blob behind every finding kind and every exemption, in three subscriptions.
func incident(cfg rules.Config) *rules.Snapshot {
	day := 24 * time.Hour
	return snapshot(cfg,
		blob{name: "ORDERS/2026/11/30/11/live.json", age: 5 * time.Minute,
			summary: &rules.Summary{Events: 2, Verdicts: verdicts(rules.VerdictReplay, 2)}},
		blob{name: "ORDERS/2026/11/30/11/stalled.json", age: 30 * time.Minute,
			summary: &rules.Summary{Events: 1, Verdicts: verdicts(rules.VerdictCap, 1)}},
		blob{name: "WEBHOOKS/2026/11/29/10/stranded.json", age: 26 * time.Hour,
			summary: &rules.Summary{Events: 4, Verdicts: verdicts(rules.VerdictReplay, 3, rules.VerdictNotIdempotent, 1)}},
		blob{name: "WEBHOOKS/2026/11/1/13/expiring.json", age: 29*day - time.Hour,
			summary: &rules.Summary{Events: 1, Malformed: true, Error: "JSON syntax error"}},
		blob{name: "WEBHOOKS/2026/11/30/9/crash.json", age: 3 * time.Hour,
			summary: &rules.Summary{Events: 1, CrashDepth: 5000, Verdicts: verdicts(rules.VerdictReplay, 1)}},
		blob{name: "WEBHOOKS/2026/11/30/8/handled.json", age: 4 * time.Hour,
			summary: &rules.Summary{Events: 2, Verdicts: verdicts(rules.VerdictReplay, 2)}},
		blob{name: "archived/WEBHOOKS/2026/11/30/8/handled.json", age: 4 * time.Hour},
		blob{name: "WEBHOOKS/2026/11/30/7/huge.json", age: 5 * time.Hour, readErr: "too large: over 64 MiB"},
		blob{name: "quarantine/ORDERS/2026/11/30/6/q.json", age: 6 * time.Hour,
			summary: &rules.Summary{Events: 2, Verdicts: verdicts(rules.VerdictUnroutable, 2)}},
		blob{name: "quarantine/ORDERS/2026/11/30/5/acked.json", age: 7 * time.Hour, acked: true,
			summary: &rules.Summary{Events: 1, Verdicts: verdicts(rules.VerdictCap, 1)}},
		blob{name: "stray", age: 2 * time.Hour, summary: &rules.Summary{}},
	)
}

func TestMetricsMeasureAnIncident(t *testing.T) {
	cfg := rules.DefaultConfig()
	s := incident(cfg)
	r := cfg.Check(s, rules.CheckOptions{})
	got := Measure(s, r, cfg)
	want := Values{
		Blobs: map[BlobKey]int{
			{rules.PaneLive, "ORDERS"}: 2, {rules.PaneStranded, "WEBHOOKS"}: 5, {rules.PaneArchived, "WEBHOOKS"}: 1,
			{rules.PaneQuarantine, "ORDERS"}: 2, {rules.PaneStranded, ""}: 1,
		},
		Events: map[EventKey]int{
			{rules.PaneLive, rules.VerdictReplay}: 2, {rules.PaneLive, rules.VerdictCap}: 1,
			// stranded 3 and handled 2; the crash blob's event meets no verdict's fate.
			{rules.PaneStranded, rules.VerdictReplay}: 5, {rules.PaneStranded, rules.VerdictNotIdempotent}: 1,
			{rules.PaneQuarantine, rules.VerdictUnroutable}: 2, {rules.PaneQuarantine, rules.VerdictCap}: 1,
		},
		// stranded: stranded, expiring, crash, huge and stray (handled is exempt); quarantine: q (acked is exempt).
		Findings: map[rules.FindingKind]int{rules.FindingExpiring: 1, rules.FindingStranded: 4,
			rules.FindingReplayStalled: 1, rules.FindingCrash: 1, rules.FindingUntriggerable: 0, rules.FindingQuarantine: 1, rules.FindingMalformed: 1,
			rules.FindingAppStartRepeats: 1}, // the handled blob, exempt from the rest: a worker start would republish it
		Quarantine: 1, Handled: 1, Acked: 1,
		OldestStranded: 29*24*time.Hour - time.Hour,
		Unread:         1,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Measure:\n got %+v\nwant %+v", got, want)
	}
	// The findings are check's, to the blob.
	for _, f := range r.Findings {
		if got.Findings[f.Kind] != f.Count {
			t.Errorf("%s: %d, check says %d", f.Kind, got.Findings[f.Kind], f.Count)
		}
	}
}

// --max-quarantine silences check's finding, not the raw count the alerting rule thresholds.
func TestMetricsQuarantineBeforeTheThreshold(t *testing.T) {
	cfg := rules.DefaultConfig()
	s := incident(cfg)
	got := Measure(s, cfg.Check(s, rules.CheckOptions{MaxQuarantine: 5}), cfg)
	if got.Findings[rules.FindingQuarantine] != 0 || got.Quarantine != 1 {
		t.Fatalf("finding %d, raw %d; want 0 and 1", got.Findings[rules.FindingQuarantine], got.Quarantine)
	}
}

func TestMetricsMeasureAnEmptyContainer(t *testing.T) {
	cfg := rules.DefaultConfig()
	s := snapshot(cfg)
	got := Measure(s, cfg.Check(s, rules.CheckOptions{}), cfg)
	if len(got.Blobs) != 0 || len(got.Events) != 0 || got.OldestStranded != 0 || got.Quarantine != 0 || got.Unread != 0 {
		t.Fatalf("empty: %+v", got)
	}
	blobKinds := 0
	for _, k := range rules.FindingKinds {
		if k.OfBlobs() {
			blobKinds++
		}
	}
	if len(got.Findings) != blobKinds {
		t.Fatalf("every kind is reported, at 0: %v", got.Findings)
	}
	for k, n := range got.Findings {
		if n != 0 {
			t.Fatalf("%s = %d", k, n)
		}
	}
}

// Subscription labels come from blob names: whatever writes them, the series stay bounded and escaped.
func TestMetricsSubscriptionsAreBoundedAndEscaped(t *testing.T) {
	cfg := rules.DefaultConfig()
	var blobs []blob
	for i := range MaxSubscriptions + 50 {
		n := 1
		if i < 10 {
			n = 3 // the busiest subscriptions keep their own series
		}
		for j := range n {
			blobs = append(blobs, blob{name: fmt.Sprintf("SUB-%03d/2026/11/30/1/%d.json", i, j), age: time.Minute, summary: &rules.Summary{}})
		}
	}
	blobs = append(blobs, blob{name: "BAD\xff\x1b[2J/2026/11/30/1/x.json", age: time.Minute, summary: &rules.Summary{}})
	s := snapshot(cfg, blobs...)
	got := Measure(s, cfg.Check(s, rules.CheckOptions{}), cfg)
	if len(got.Blobs) != MaxSubscriptions+1 {
		t.Fatalf("%d series, want %d kept and one %s", len(got.Blobs), MaxSubscriptions, OtherSubscription)
	}
	total := 0
	for k, n := range got.Blobs {
		total += n
		if k.Subscription == "BAD\xff\x1b[2J" {
			t.Fatalf("raw label %q", k.Subscription)
		}
	}
	if total != len(blobs) {
		t.Fatalf("folding lost blobs: %d of %d", total, len(blobs))
	}
	for i := range 10 {
		if got.Blobs[BlobKey{rules.PaneLive, fmt.Sprintf("SUB-%03d", i)}] != 3 {
			t.Fatalf("busiest subscription SUB-%03d folded: %v", i, got.Blobs)
		}
	}
	if got.Blobs[BlobKey{rules.PaneLive, OtherSubscription}] != len(blobs)-MaxSubscriptions-20 {
		t.Fatalf("%s holds %d", OtherSubscription, got.Blobs[BlobKey{rules.PaneLive, OtherSubscription}])
	}
}
