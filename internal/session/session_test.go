package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store/storetest"
)

var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// incident is a session over a seeded incident in memory, its record kept in a folder of the test's.
func incident(t *testing.T, spec session.Spec) (*session.Session, *rules.Snapshot) {
	t.Helper()
	mem := storetest.NewMem(now)
	cfg := rules.DefaultConfig()
	if _, err := scenario.Seed(context.Background(), mem, scenario.SeedOptions{Count: 12, Seed: 7, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	cfg.Handlers = scenario.IncidentRegister
	if spec.RecordDir == "" {
		spec.RecordDir = filepath.Join(t.TempDir(), "record")
	}
	spec.Who = &record.Who{User: "op", Host: "desk"}
	s := session.Over(replay.NewLoader(mem, cfg), spec)
	snap, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.Loader().HydrateWhere(context.Background(), snap, nil)
	return s, snap
}

// A drain is one call: its intent recorded with every blob it was asked for at the ETag listed, the replay
// operation, then each blob's outcome — the reasons as codes, worded when read.
func TestADrainIsRecordedAroundItsRun(t *testing.T) {
	s, snap := incident(t, session.Spec{})
	p := s.PreviewDrain(snap, snap.InPane(rules.PaneStranded), rules.DrainOptions{}, rules.WitnessReport{}, present.ForceFlag)
	if !p.Said.Asks || len(p.Targets) == 0 {
		t.Fatalf("the incident has nothing to drain: %+v", p.Forecast)
	}
	done, err := s.Drain(context.Background(), p, session.Run{Via: "test"})
	if err != nil || len(done.Results) != len(p.Items) {
		t.Fatalf("drain: %v, %d results for %d blobs", err, len(done.Results), len(p.Items))
	}
	h, err := s.History(context.Background())
	if err != nil || len(h.Records) != 1 || h.Records[0].Outcome == nil {
		t.Fatalf("history: %+v %v", h, err)
	}
	r := h.Records[0]
	if r.Intent.Action != record.ActDrain || r.Intent.Via != "test" || len(r.Intent.Blobs) != len(p.Items) || r.Intent.Who.User != "op" {
		t.Fatalf("intent: %+v", r.Intent)
	}
	drained, left := 0, 0
	for i, b := range r.Outcome.Blobs {
		if b.ETag == "" || b.ETag != p.Items[i].ETag {
			t.Errorf("%s recorded at ETag %q, listed at %q", b.Name, b.ETag, p.Items[i].ETag)
		}
		switch {
		case rules.Outcome(b.Outcome) == rules.OutcomeDrained:
			drained++
			if b.ETagAfter == "" || b.Why != nil || b.Reason != "" {
				t.Errorf("drained %s: %+v", b.Name, b)
			}
		default:
			left++
			if b.Why == nil || b.Reason != "" {
				t.Errorf("left %s without its reason's code, or with words: %+v", b.Name, b)
			} else if _, ok := b.Why.Reason(); !ok {
				t.Errorf("left %s: code %q names no reason", b.Name, b.Why.Code)
			}
		}
	}
	if drained != len(p.Targets) || left != len(p.Left) {
		t.Fatalf("%d drained and %d left, the preview said %d and %d", drained, left, len(p.Targets), len(p.Left))
	}
}

// A dry run writes nothing, the record included; a read-only session acts on nothing.
func TestDryRunsAndReadOnlyWriteNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "record")
	s, snap := incident(t, session.Spec{RecordDir: dir})
	p := s.PreviewDrain(snap, snap.InPane(rules.PaneStranded), rules.DrainOptions{}, rules.WitnessReport{}, present.ForceFlag)
	if _, err := s.Drain(context.Background(), p, session.Run{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a dry run made the record: %v", err)
	}
	ro, snap := incident(t, session.Spec{ReadOnly: true, RecordDir: dir})
	p = ro.PreviewDrain(snap, snap.InPane(rules.PaneStranded), rules.DrainOptions{}, rules.WitnessReport{}, present.ForceFlag)
	if _, err := ro.Drain(context.Background(), p, session.Run{}); err != session.ErrReadOnly {
		t.Fatalf("read-only drain: %v", err)
	}
	after, _ := ro.List(context.Background())
	for _, it := range after.Items {
		if j, ok := snap.Lookup(it.Name); !ok || snap.Items[j].ETag != it.ETag {
			t.Fatalf("%s changed under a read-only session", it.Name)
		}
	}
}

// An action whose intent cannot be recorded does not run: nothing is written, and the error says so.
func TestNoRecordNoAction(t *testing.T) {
	blocked := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocked, []byte("not a folder"), 0o600)
	s, snap := incident(t, session.Spec{RecordDir: filepath.Join(blocked, "record")})
	p := s.PreviewDrain(snap, snap.InPane(rules.PaneStranded), rules.DrainOptions{}, rules.WitnessReport{}, present.ForceFlag)
	_, err := s.Drain(context.Background(), p, session.Run{})
	var nr session.NoRecordError
	if !errorsAs(err, &nr) {
		t.Fatalf("drain with no record: %v", err)
	}
	after, _ := s.List(context.Background())
	for _, it := range after.Items {
		if j, ok := snap.Lookup(it.Name); !ok || snap.Items[j].ETag != it.ETag {
			t.Fatalf("%s was written with no record of it", it.Name)
		}
	}
}

// The drain's preview warns of a failing handler only for the subscriptions it takes: a blob the drain leaves
// (here every stranded blob but one) warns of nothing — the dashboard and the command line said different
// subscriptions when each built its own.
func TestTheDrainPreviewWarnsOfWhatItTakes(t *testing.T) {
	s, snap := incident(t, session.Spec{})
	stranded := snap.InPane(rules.PaneStranded)
	all := s.PreviewDrain(snap, stranded, rules.DrainOptions{}, rules.WitnessReport{}, present.ForceFlag)
	for _, it := range stranded {
		one := s.PreviewDrain(snap, []rules.Item{it}, rules.DrainOptions{}, rules.WitnessReport{}, present.ForceFlag)
		for _, w := range one.Said.Texts(present.LineWarn) {
			if !contains(w, it.Parsed.Subscription) {
				t.Errorf("a drain of %s warns of another subscription: %s", it.Name, w)
			}
		}
	}
	if len(all.Said.Texts(present.LineWarn)) == 0 {
		t.Fatal("the incident's drain warns of no failing handler: the test sees nothing")
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
