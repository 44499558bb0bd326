package replay_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/replay/rules/rulestest"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

// unleased is a container that takes no leases (as a backend without them): a repair then holds its original by
// its ETag alone, so the retire's If-Match is all that stands between a writer and a lost rewrite.
type unleased struct{ store.Container }

// Someone rewrites a repair's original while the repair's new blob is being written (between the check and the
// retire): the retire must leave that rewrite alone — the original is kept and said to be, never deleted with
// the other writer's events in it.
func TestARepairLeavesAnOriginalRewrittenDuringItsWrite(t *testing.T) {
	t.Parallel()
	cfg := rulestest.ConfigWith(rulestest.Register())
	m := storetest.NewMem(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	orig := "quarantine/S/2026/11/30/9/x.json"
	m.Write(bg, orig, []byte(`[{"id":"a"}]`), store.WriteOptions{})
	b, _ := m.Read(bg, orig, store.MaxBlobBytes)
	h := &storetest.Hooked{Container: unleased{m}}
	rewrite := `[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1","data":"theirs"}]`
	h.BeforeWrite = func(name string, _ store.WriteOptions) error {
		if name != orig {
			if _, err := m.Write(bg, orig, []byte(rewrite), store.WriteOptions{}); err != nil { // the other writer
				t.Fatal(err)
			}
		}
		return nil
	}
	rp, err := replay.PlanRepair(bg, h, cfg, cfg.OriginalOf(b.BlobInfo, b.Body, m.Clock), []byte(`[{"id":"a","subject":"s","eventType":"Push","dataVersion":"1","data":1}]`))
	if err != nil || rp.Refused() || !rp.Retire {
		t.Fatalf("plan: %v %+v", err, rp.Refusal)
	}
	r, err := replay.Repair(bg, h, rp, replay.RepairOptions{})
	if err != nil || r.Retired != "" || r.Reason.Kind != rules.ReasonOriginalLeft {
		t.Fatalf("repair: %v %+v", err, r)
	}
	if got, err := m.Read(bg, orig, store.MaxBlobBytes); err != nil || string(got.Body) != rewrite {
		t.Fatalf("the other writer's rewrite is lost: %q %v", got.Body, err)
	}
}

// A restore whose copy landed but whose quarantine original could not be deleted, retried after the replay took
// that copy and quarantined it again (it is now quarantine/<target>, byte for byte): the retry knows its copy
// landed — it writes nothing a second time (the events would be at the root twice) and retires the original.
func TestARestoreRetriedAfterTheReplayRequarantinedItsCopyWritesNothing(t *testing.T) {
	t.Parallel()
	cfg := rulestest.ConfigWith(rulestest.Register())
	m := storetest.NewMem(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	q := "quarantine/S/2026/11/30/9/g.json"
	put(t, m, q, ev("a", "Push", ""))
	h := &storetest.Hooked{Container: m}
	h.BeforeDelete = func(string, string) error { return errors.New("the service is down") }
	res, _ := replay.Restore(bg, h, cfg, []string{q}, replay.RestoreOptions{})
	if len(res) != 1 || res[0].Target == "" {
		t.Fatalf("first restore: %+v", res)
	}
	if _, err := m.Stat(bg, q); err != nil {
		t.Fatalf("the first restore's delete was to fail: %v", err)
	}
	// The replay takes the restored copy and quarantines it again.
	target := res[0].Target
	copyBody, err := m.Read(bg, target, store.MaxBlobBytes)
	if err != nil {
		t.Fatalf("restored copy: %v", err)
	}
	_, requarantined := rules.Twins(target)
	if _, err := m.Write(bg, requarantined, copyBody.Body, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(bg, target, ""); err != nil {
		t.Fatal(err)
	}
	h = &storetest.Hooked{Container: m}
	res, _ = replay.Restore(bg, h, cfg, []string{q}, replay.RestoreOptions{})
	if len(res) != 1 || res[0].Outcome != rules.OutcomeRestored {
		t.Fatalf("retry: %+v", res)
	}
	if h.Writes.Load() != 0 {
		t.Fatalf("the retry wrote again: %v", h.Calls())
	}
	if _, err := m.Stat(bg, q); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the quarantine original stays: %v", err)
	}
}

// tagSpy is a container that says which ETag each Set Blob Tags was conditional on.
type tagSpy struct {
	*storetest.Mem
	ifMatch []string
}

func (s *tagSpy) SetTags(ctx context.Context, name string, tags map[string]string, ifMatch string) error {
	s.ifMatch = append(s.ifMatch, ifMatch)
	return s.Mem.SetTags(ctx, name, tags, ifMatch)
}

// An ack's tag write is conditional on the ETag the operator was shown (the listing's), so Azure refuses it on a
// blob rewritten since — the emulator ignores the condition, so it is checked here at the call, and on the wire in
// store/azureblob.
func TestAnAckWritesItsTagsOnTheETagShown(t *testing.T) {
	t.Parallel()
	s := &tagSpy{Mem: storetest.NewMem(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))}
	seen := put(t, s, "PUSH/2026/12/1/9/a.json", ev("e", "Push", ""))
	cfg := rulestest.ConfigWith(rulestest.Register())
	res, err := replay.Acknowledge(bg, s, []store.BlobInfo{seen}, replay.AckOptions{For: time.Hour, Max: cfg.AckLimit(), Now: s.Clock, By: "ops"})
	if err != nil || res[0].Outcome != rules.OutcomeAcked {
		t.Fatalf("%+v %v", res, err)
	}
	if len(s.ifMatch) == 0 || s.ifMatch[0] != seen.ETag {
		t.Fatalf("Set Blob Tags conditional on %q, want the ETag shown %q", s.ifMatch, seen.ETag)
	}
}
