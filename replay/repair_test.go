package replay_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules/rulestest"

	"github.com/deadletter/deadletter/internal/blob"
	"github.com/deadletter/deadletter/replay/rules"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

// A malformed quarantine copy (an event without data) fixed by hand: the plan predicts it republished, the repair
// writes it under the original's name with .repaired-<Last-Modified>, then deletes the copy; a retry writes
// nothing twice.
func TestRepairWritesThenRetires(t *testing.T) {
	t.Parallel()
	cfg := rulestest.ConfigWith(rulestest.Register())
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	m := storetest.NewMem(now)
	orig := "quarantine/WEBHOOKS/2026/11/30/9/abc.json"
	broken := `[{"id":"a|2","subject":"s","eventType":"Push","dataVersion":"1"}]`
	fixed := `[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1","data":{},"deadLetterReason":"x"}]`
	bi, _ := m.Write(bg, orig, []byte(broken), store.WriteOptions{})
	b, _ := m.Read(bg, orig, store.MaxBlobBytes)
	o := cfg.OriginalOf(b.BlobInfo, b.Body, now)
	rp, err := replay.PlanRepair(bg, m, cfg, o, []byte(fixed))
	if err != nil {
		t.Fatal(err)
	}
	want := "WEBHOOKS/2026/11/30/9/abc.repaired-" + bi.LastModified.UTC().Format("20060102T150405Z") + ".json"
	if rp.Refused() || rp.Target != want || !rp.Retire || len(rp.After.Republish) != 1 || !rp.Before.Malformed || rp.Undiagnosed != 0 {
		t.Fatalf("plan: %+v", rp)
	}
	r, err := replay.Repair(bg, m, rp, replay.RepairOptions{})
	if err != nil || r.Outcome != rules.OutcomeRepaired || r.Target != want || r.Retired != orig {
		t.Fatalf("repair: %+v %v", r, err)
	}
	got, err := m.Read(bg, want, store.MaxBlobBytes)
	if err != nil || string(got.Body) != fixed {
		t.Fatalf("new blob: %q %v", got.Body, err)
	}
	if from, _ := blob.MetaGet(got.Metadata, rules.MetaRepairedFrom); from != orig {
		t.Fatalf("metadata %v", got.Metadata)
	}
	if _, err := m.Stat(bg, orig); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("original still there: %v", err)
	}
	// The same repair again (a retry after a lost answer): the new blob is found, nothing is written twice.
	r, _ = replay.Repair(bg, m, rp, replay.RepairOptions{})
	if r.Outcome != rules.OutcomeRepaired || r.Target != want {
		t.Fatalf("retry: %+v", r)
	}
	l, _ := store.ListAll(bg, m)
	if len(l.Blobs) != 1 {
		t.Fatalf("retry wrote again: %v", l.Blobs)
	}
}

// The write comes first and the delete only after it landed: a write that fails leaves the original.
func TestRepairNeverRetiresBeforeTheWrite(t *testing.T) {
	t.Parallel()
	cfg := rulestest.ConfigWith(rulestest.Register())
	m := storetest.NewMem(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	orig := "quarantine/S/2026/11/30/9/x.json"
	m.Write(bg, orig, []byte(`[]`), store.WriteOptions{})
	h := &storetest.Hooked{Container: m}
	h.BeforeWrite = func(string, store.WriteOptions) error { return errors.New("the service is down") }
	b, _ := m.Read(bg, orig, store.MaxBlobBytes)
	rp, _ := replay.PlanRepair(bg, h, cfg, cfg.OriginalOf(b.BlobInfo, b.Body, m.Clock), []byte(`[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1","data":1}]`))
	r, _ := replay.Repair(bg, h, rp, replay.RepairOptions{})
	if r.Outcome != rules.OutcomeFailed || h.Writes.Load() == 0 {
		t.Fatalf("%+v", r)
	}
	for _, c := range h.Calls() {
		if c.Op == "delete" {
			t.Fatalf("deleted after a failed write: %v", h.Calls())
		}
	}
	if _, err := m.Stat(bg, orig); err != nil {
		t.Fatal("original gone")
	}
}

// An original rewritten between open and save: both versions stay, nothing is written.
func TestRepairOfAChangedOriginalWritesNothing(t *testing.T) {
	t.Parallel()
	cfg := rulestest.ConfigWith(rulestest.Register())
	m := storetest.NewMem(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	orig := "quarantine/S/2026/11/30/9/x.json"
	m.Write(bg, orig, []byte(`[1]`), store.WriteOptions{})
	b, _ := m.Read(bg, orig, store.MaxBlobBytes)
	rp, _ := replay.PlanRepair(bg, m, cfg, cfg.OriginalOf(b.BlobInfo, b.Body, m.Clock), []byte(`[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1","data":1}]`))
	m.Write(bg, orig, []byte(`[2]`), store.WriteOptions{}) // someone else, meanwhile
	r, _ := replay.Repair(bg, m, rp, replay.RepairOptions{})
	if r.Outcome != rules.OutcomeChanged || r.Reason.Kind != rules.ReasonChangedSinceOpened {
		t.Fatalf("%+v", r)
	}
	l, _ := store.ListAll(bg, m)
	if len(l.Blobs) != 1 || l.Blobs[0].Name != orig {
		t.Fatalf("wrote: %v", l.Blobs)
	}
	if got, _ := m.Read(bg, orig, 10); string(got.Body) != "[2]" {
		t.Fatalf("the other version: %q", got.Body)
	}
}

// What --force lifts: nothing changed, still malformed, a crash, events still quarantined (ids that keep a count
// at the cap say so), a live original; what it does not: an archived original is never retired, read-only.
func TestRepairRefusals(t *testing.T) {
	t.Parallel()
	cfg := rulestest.ConfigWith(rulestest.Register())
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	good := `[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1","data":1,"deadLetterReason":"MaxDeliveryAttemptsExceeded"}]`
	deep := `[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1","data":` + strings.Repeat("[", 6000) + strings.Repeat("]", 6000) + `}]`
	for _, c := range []struct {
		name, orig, edit string
		age              time.Duration
		want             rules.ReasonKind
		retire           bool
	}{
		{"unchanged", "quarantine/S/2026/11/30/9/x.json", good, 0, rules.ReasonUnchanged, true},
		// (a repair that changes only letter case is a change: JSON and the handler tell "push" from "Push")
		{"letter case only", "quarantine/S/2026/11/30/9/x.json", strings.Replace(good, `"s"`, `"S"`, 1), 0, rules.ReasonNone, true},
		{"diagnostics dropped", "quarantine/S/2026/11/30/9/x.json", `[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1","data":2}]`, 0, rules.ReasonNone, true},
		{"still malformed", "quarantine/S/2026/11/30/9/x.json", `[{"id":"a"}]`, 0, rules.ReasonMalformed, true},
		{"crash", "quarantine/S/2026/11/30/9/x.json", deep, 0, rules.ReasonCrash, true},
		{"capped", "quarantine/S/2026/11/30/9/x.json", `[{"id":"a|2","subject":"s","eventType":"Push","dataVersion":"1","data":1}]`, 0, rules.ReasonStillQuarantined, true},
		{"not idempotent", "quarantine/S/2026/11/30/9/x.json", `[{"id":"a","subject":"s","eventType":"Webhook","dataVersion":"1","data":1}]`, 0, rules.ReasonStillQuarantined, true},
		{"live root", "S/2026/11/30/11/x.json", `[{"id":"b","subject":"s","eventType":"Push","dataVersion":"1","data":1}]`, time.Minute, rules.ReasonLiveOriginal, true},
		{"stranded root", "S/2026/11/30/9/x.json", `[{"id":"b","subject":"s","eventType":"Push","dataVersion":"1","data":1}]`, 3 * time.Hour, rules.ReasonNone, true},
		{"archived", "archived/S/2026/11/30/9/x.json", `[{"id":"b","subject":"s","eventType":"Push","dataVersion":"1","data":1}]`, 3 * time.Hour, rules.ReasonNone, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := storetest.NewMem(now)
			m.Write(bg, c.orig, []byte(good), store.WriteOptions{})
			m.Backdate(bg, c.orig, now.Add(-c.age))
			b, _ := m.Read(bg, c.orig, store.MaxBlobBytes)
			rp, err := replay.PlanRepair(bg, m, cfg, cfg.OriginalOf(b.BlobInfo, b.Body, now), []byte(c.edit))
			if err != nil || rp.Refusal.Kind != c.want || rp.Retire != c.retire {
				t.Fatalf("plan: %v %+v", err, rp.Refusal)
			}
			if undiagnosed := c.name != "unchanged" && c.name != "letter case only" && !strings.Contains(c.edit, "deadLetterReason") && !rp.Payload.Malformed(); (rp.Undiagnosed > 0) != undiagnosed {
				t.Fatalf("undiagnosed %d", rp.Undiagnosed)
			}
			if c.name == "capped" && (len(rp.Counted) != 1 || !rp.Counted[0].Capped) {
				t.Fatalf("counted ids: %+v", rp.Counted)
			}
			if _, err := replay.Repair(bg, m, rp, replay.RepairOptions{ReadOnly: true}); !errors.Is(err, replay.ErrReadOnly) {
				t.Fatalf("read-only: %v", err)
			}
			r, _ := replay.Repair(bg, m, rp, replay.RepairOptions{})
			if c.want != rules.ReasonNone {
				if r.Outcome != rules.OutcomeRefused {
					t.Fatalf("not refused: %+v", r)
				}
				if r, _ = replay.Repair(bg, m, rp, replay.RepairOptions{Force: true}); r.Outcome != rules.OutcomeRepaired {
					t.Fatalf("forced: %+v", r)
				}
			}
			if r.Outcome != rules.OutcomeRepaired {
				t.Fatalf("%+v", r)
			}
			_, err = m.Stat(bg, c.orig)
			if c.retire != errors.Is(err, store.ErrNotFound) {
				t.Fatalf("original retired %v, want %v (%v)", err != nil, c.retire, err)
			}
		})
	}
}

// A repair name that holds a different body moves on to -2; a resubmit is named after its content in the hour.
func TestRepairNames(t *testing.T) {
	t.Parallel()
	cfg := rulestest.ConfigWith(rulestest.Register())
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	m := storetest.NewMem(now)
	orig := "quarantine/S/2026/11/30/9/x.json"
	m.Write(bg, orig, []byte(`[]`), store.WriteOptions{})
	b, _ := m.Read(bg, orig, store.MaxBlobBytes)
	fixed := []byte(`[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1","data":1}]`)
	target, _ := rules.RepairTarget(orig, b.LastModified)
	m.Write(bg, target, []byte("someone else's"), store.WriteOptions{})
	rp, _ := replay.PlanRepair(bg, m, cfg, cfg.OriginalOf(b.BlobInfo, b.Body, now), fixed)
	if rp.Target != rules.AlternateTarget(target, 2) {
		t.Fatalf("target %q", rp.Target)
	}
	rs, _ := replay.PlanResubmit(bg, m, cfg, "webhooks", fixed, now)
	if !strings.HasPrefix(rs.Target, "WEBHOOKS/2026/11/30/12/resubmitted-") || rs.Retire || rs.Original != nil || rs.Refused() {
		t.Fatalf("resubmit: %+v", rs)
	}
	again, _ := replay.PlanResubmit(bg, m, cfg, "webhooks", fixed, now.Add(time.Minute))
	other, _ := replay.PlanResubmit(bg, m, cfg, "webhooks", append(bytes.Clone(fixed), ' '), now)
	if again.Target != rs.Target || other.Target == rs.Target {
		t.Fatalf("resubmit names: %q %q %q", rs.Target, again.Target, other.Target)
	}
}

// On Azurite, through the real client: the ETag a read gives is the one the repair checks and deletes under; a
// rewrite between open and save writes nothing.
func TestRepairOnAzurite(t *testing.T) {
	t.Parallel()
	az := storetest.Azure(t)
	cfg := rulestest.ConfigWith(rulestest.Register())
	orig := "quarantine/S/2026/11/30/9/x.json"
	fixed := []byte(`[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1","data":1}]`)
	open := func() rules.RepairPlan {
		t.Helper()
		b, err := az.Read(bg, orig, store.MaxBlobBytes)
		if err != nil {
			t.Fatal(err)
		}
		rp, err := replay.PlanRepair(bg, az, cfg, cfg.OriginalOf(b.BlobInfo, b.Body, b.ServiceTime), fixed)
		if err != nil || rp.Refused() {
			t.Fatalf("plan: %v %+v", err, rp.Refusal)
		}
		return rp
	}
	az.Write(bg, orig, []byte(`[1]`), store.WriteOptions{})
	rp := open()
	az.Write(bg, orig, []byte(`[2]`), store.WriteOptions{}) // someone else, meanwhile
	if r, _ := replay.Repair(bg, az, rp, replay.RepairOptions{}); r.Outcome != rules.OutcomeChanged {
		t.Fatalf("changed original: %+v", r)
	}
	if _, err := az.Stat(bg, rp.Target); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("written anyway: %v", err)
	}
	rp = open()
	r, _ := replay.Repair(bg, az, rp, replay.RepairOptions{})
	if r.Outcome != rules.OutcomeRepaired || r.Retired != orig {
		t.Fatalf("%+v", r)
	}
	if b, err := az.Read(bg, r.Target, store.MaxBlobBytes); err != nil || !bytes.Equal(b.Body, fixed) {
		t.Fatalf("%q %v", b.Body, err)
	}
	if _, err := az.Stat(bg, orig); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("original: %v", err)
	}
}
