package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules/rulestest"

	"github.com/deadletter/deadletter/internal/blob"
	"github.com/deadletter/deadletter/replay/rules"

	"github.com/deadletter/deadletter/internal/estate"

	"github.com/deadletter/deadletter/replay"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

var bg = context.Background()

// testCfg is the estate's configuration with the test register, and a TTL the backend can reach: an hour on a
// directory (blobs are backdated), two seconds on Azurite (which cannot backdate, so tests wait it out).
func testCfg(c store.Container) rules.Config {
	cfg := rulestest.ConfigWith(rulestest.Register())
	if !isDir(c) {
		cfg.TTL = 2 * time.Second
	}
	return cfg
}

func isDir(c store.Container) bool {
	if h, ok := c.(*storetest.Hooked); ok {
		c = h.Container
	}
	_, ok := c.(*dirstore.Dir)
	return ok
}

// strand makes root blobs older than the TTL.
func strand(t *testing.T, c store.Container, cfg rules.Config, names ...string) {
	t.Helper()
	if isDir(c) {
		for _, n := range names {
			if err := c.(store.Provisioner).Backdate(bg, n, time.Now().Add(-2*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, n := range names {
		for {
			bi, err := c.Stat(bg, n)
			if err != nil {
				t.Fatal(err)
			}
			now, err := c.Now(bg)
			if err != nil {
				t.Fatal(err)
			}
			if now.Sub(bi.LastModified) >= cfg.TTL {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not pass the TTL in time", n)
			}
			time.Sleep(100 * time.Millisecond) // polling the service clock, bounded by the deadline
		}
	}
}

func put(t *testing.T, c store.Container, name string, events ...string) store.BlobInfo {
	t.Helper()
	bi, err := c.Write(bg, name, []byte("["+strings.Join(events, ",")+"]"), store.WriteOptions{ContentType: "application/json", Metadata: map[string]string{"origin": "eventgrid"}})
	if err != nil {
		t.Fatal(err)
	}
	return bi
}

func snapshot(t *testing.T, c store.Container, cfg rules.Config) *rules.Snapshot {
	t.Helper()
	s, err := replay.NewLoader(c, cfg).List(bg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// named are drain targets the way an operator names them: no ETag, taken as they are read.
func named(names ...string) []rules.DrainTarget {
	out := make([]rules.DrainTarget, len(names))
	for i, n := range names {
		out[i].Name = n
	}
	return out
}

func outcomes(rs []rules.Result) map[string]rules.Outcome {
	m := map[string]rules.Outcome{}
	for _, r := range rs {
		m[r.Name] = r.Outcome
	}
	return m
}

func TestDrainTwiceFindsEverythingYoung(t *testing.T) {
	t.Parallel()
	storetest.Backends(t, func(t *testing.T, c store.Container) {
		cfg := testCfg(c)
		names := []string{"S/2026/1/1/1/a.json", "S/2026/1/1/1/b.json", "T/2026/1/1/2/c.json"}
		for _, n := range names {
			put(t, c, n, ev("x", "Push", ""))
		}
		put(t, c, "quarantine/S/q.json", ev("y", "Push", ""))
		put(t, c, "archived/S/a.json", ev("y", "Push", ""))
		strand(t, c, cfg, names...)
		before, _ := c.Read(bg, names[0], 1<<20)

		res, err := replay.Drain(bg, c, cfg, cfg.DrainTargets(snapshot(t, c, cfg)), rules.DrainOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 3 {
			t.Fatalf("drained %v, want the three stranded root blobs only", res)
		}
		for _, r := range res {
			if r.Outcome != rules.OutcomeDrained {
				t.Fatalf("%+v", r)
			}
		}
		after, _ := c.Read(bg, names[0], 1<<20)
		if string(after.Body) != string(before.Body) || after.ETag == before.ETag || after.ContentType != "application/json" {
			t.Fatalf("drain must re-upload the identical bytes under a new ETag: %+v", after.BlobInfo)
		}
		if v, _ := blob.MetaGet(after.Metadata, rules.MetaDrainCount); v != "1" {
			t.Fatalf("drainCount = %q (%v)", v, after.Metadata)
		}
		if v, _ := blob.MetaGet(after.Metadata, rules.MetaDrainedAt); v == "" {
			t.Fatal("no drainedAt")
		}
		if v, _ := blob.MetaGet(after.Metadata, "origin"); v != "eventgrid" {
			t.Fatalf("metadata lost: %v", after.Metadata)
		}
		// A second drain of the same blobs (by name) finds them young: the re-upload dated them.
		res, _ = replay.Drain(bg, c, cfg, named(names...), rules.DrainOptions{})
		for _, r := range res {
			if r.Outcome != rules.OutcomeYoung {
				t.Fatalf("second drain: %+v", r)
			}
		}
		if s := snapshot(t, c, cfg); len(cfg.DrainTargets(s)) != 0 {
			t.Fatalf("still stranded after a drain: %v", cfg.DrainTargets(s))
		}
		// A third, after the blobs strand again, counts up.
		strand(t, c, cfg, names[0])
		replay.Drain(bg, c, cfg, named(names[0]), rules.DrainOptions{})
		third, _ := c.Read(bg, names[0], 1<<20)
		if v, _ := blob.MetaGet(third.Metadata, rules.MetaDrainCount); v != "2" {
			t.Fatalf("drainCount after two drains = %q", v)
		}
	})
}

func TestDrainNamedExcludedAndGone(t *testing.T) {
	t.Parallel()
	storetest.Backends(t, func(t *testing.T, c store.Container) {
		cfg := testCfg(c)
		put(t, c, "quarantine/S/q.json", ev("y", "Push", ""))
		put(t, c, "S/young.json", ev("y", "Push", ""))
		res, _ := replay.Drain(bg, c, cfg, named("quarantine/S/q.json", "archived/x", "S/young.json", "S/none.json"), rules.DrainOptions{})
		want := map[string]rules.Outcome{"quarantine/S/q.json": rules.OutcomeExcluded, "archived/x": rules.OutcomeExcluded, "S/young.json": rules.OutcomeYoung, "S/none.json": rules.OutcomeGone}
		if got := outcomes(res); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("got %v want %v", got, want)
		}
		if _, err := c.Stat(bg, "S/none.json"); !errors.Is(err, store.ErrNotFound) {
			t.Fatal("a gone blob was resurrected")
		}
	})
}

// While a drain runs, another writer deletes some stranded blobs and rewrites others between the drain's read
// and its conditional write: those come back gone/changed and are neither resurrected nor overwritten.
func TestDrainRacingAnotherWriter(t *testing.T) {
	t.Parallel()
	storetest.Backends(t, func(t *testing.T, inner store.Container) {
		c := &storetest.Hooked{Container: inner}
		cfg := testCfg(c)
		var names []string
		for i := 0; i < 12; i++ {
			n := fmt.Sprintf("S/2026/1/1/1/%02d.json", i)
			names = append(names, n)
			put(t, c, n, ev(fmt.Sprint(i), "Push", ""))
		}
		strand(t, c, cfg, names...)
		targets := cfg.DrainTargets(snapshot(t, c, cfg))
		c.AfterRead = func(name string) {
			var i int
			fmt.Sscanf(name, "S/2026/1/1/1/%02d.json", &i)
			switch i % 3 {
			case 1:
				inner.Delete(bg, name, "")
			case 2:
				inner.Write(bg, name, []byte(`["rewritten by the replay"]`), store.WriteOptions{})
			}
		}
		c.Log = nil
		res, err := replay.Drain(bg, c, cfg, targets, rules.DrainOptions{Concurrency: 4})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			want := []rules.Outcome{rules.OutcomeDrained, rules.OutcomeGone, rules.OutcomeChanged}[i%3]
			if r.Outcome != want {
				t.Fatalf("%s: %s, want %s", r.Name, r.Outcome, want)
			}
			b, err := inner.Read(bg, r.Name, 1<<20)
			switch want {
			case rules.OutcomeGone:
				if !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("%s was resurrected", r.Name)
				}
			case rules.OutcomeChanged:
				if string(b.Body) != `["rewritten by the replay"]` {
					t.Fatalf("%s overwritten: %s", r.Name, b.Body)
				}
			}
		}
		for _, call := range c.Calls() {
			if call.Op == "write" && call.IfMatch == "" {
				t.Fatalf("unconditional write: %+v", call)
			}
		}
	})
}

func TestDrainCancelTouchesNothingAfter(t *testing.T) {
	t.Parallel()
	d := storetest.Dir(t)
	cfg := testCfg(d)
	var names []string
	for i := 0; i < 20; i++ {
		n := fmt.Sprintf("S/%02d.json", i)
		names = append(names, n)
		put(t, d, n, ev(fmt.Sprint(i), "Push", ""))
	}
	strand(t, d, cfg, names...)
	targets := cfg.DrainTargets(snapshot(t, d, cfg))
	ctx, cancel := context.WithCancel(bg)
	var mu sync.Mutex
	done := 0
	res, _ := replay.Drain(ctx, d, cfg, targets, rules.DrainOptions{Concurrency: 1, Progress: func(rules.Result) {
		mu.Lock()
		defer mu.Unlock()
		if done++; done == 5 {
			cancel()
		}
	}})
	drained := 0
	for i, r := range res {
		b, _ := d.Stat(bg, r.Name)
		switch r.Outcome {
		case rules.OutcomeDrained:
			drained++
		case rules.OutcomeCancelled:
			if b.ETag != targets[i].ETag {
				t.Fatalf("%s was touched after the cancel", r.Name)
			}
		default:
			t.Fatalf("%+v", r)
		}
	}
	if drained != 5 {
		t.Fatalf("drained %d before the cancel, want 5", drained)
	}
}

type recordingPublisher struct {
	mu       sync.Mutex
	requests [][]json.RawMessage
	fail     error
}

func (p *recordingPublisher) Publish(ctx context.Context, evs []json.RawMessage) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail != nil {
		return p.fail
	}
	p.requests = append(p.requests, evs)
	return nil
}

func (p *recordingPublisher) ids() []string {
	var out []string
	for _, r := range p.requests {
		for _, e := range r {
			var m struct{ ID string }
			json.Unmarshal(e, &m)
			out = append(out, m.ID)
		}
	}
	return out
}

// Restore of a blob mixing cap / notIdempotent / unroutable events: the new root blob has every id without a
// count, and running the replay function on it republishes exactly the events the prediction said.
func TestRestoreThenHandleDoesWhatWasPredicted(t *testing.T) {
	t.Parallel()
	storetest.Backends(t, func(t *testing.T, c store.Container) {
		cfg := testCfg(c)
		q := "quarantine/S/2026/1/1/1/mixed.json"
		put(t, c, q, ev("cap-a|2", "Push", ""), ev("cap-b", "Push", ""), ev("hook", "Webhook", ""), ev("blob", "Microsoft.Storage.BlobCreated", ""))
		d, err := replay.NewLoader(c, cfg).Inspect(bg, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Restore.Resume) != 2 || len(d.Restore.Requarantine) != 2 {
			t.Fatalf("prediction: %+v", d.Restore)
		}
		res, err := replay.Restore(bg, c, cfg, []string{q}, replay.RestoreOptions{})
		if err != nil || res[0].Outcome != rules.OutcomeRestored || res[0].Resume != 2 {
			t.Fatalf("%+v %v", res, err)
		}
		target := res[0].Target
		if !strings.HasPrefix(target, "S/2026/1/1/1/mixed.restored-") || !strings.HasSuffix(target, "Z.json") {
			t.Fatalf("target %q", target)
		}
		if _, err := c.Stat(bg, q); !errors.Is(err, store.ErrNotFound) {
			t.Fatal("the quarantine copy was not deleted")
		}
		b, _ := c.Read(bg, target, 1<<20)
		for _, e := range rules.ParsePayload(b.Body).Events {
			if strings.Contains(e.ID, "|") {
				t.Fatalf("restored id keeps a count: %q", e.ID)
			}
		}
		pub := &recordingPublisher{}
		h, err := estate.Handle(bg, c, cfg, target, pub)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(pub.ids(), ","); got != "cap-a|1,cap-b|1" {
			t.Fatalf("republished %q, predicted %v", got, d.Restore.Resume)
		}
		qb, err := c.Read(bg, rules.QuarantinePrefix+target, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range rules.ParsePayload(qb.Body).Events {
			ids = append(ids, e.ID)
		}
		if strings.Join(ids, ",") != "hook,blob" || !h.Archived || !h.Deleted {
			t.Fatalf("re-quarantined %v, handled %+v", ids, h)
		}
	})
}

func TestRestoreRefusals(t *testing.T) {
	t.Parallel()
	storetest.Backends(t, func(t *testing.T, c store.Container) {
		cfg := testCfg(c)
		put(t, c, "quarantine/S/hooks.json", ev("hook", "Webhook", ""))
		c.Write(bg, "quarantine/S/bad.json", []byte(`{"not":"an array"}`), store.WriteOptions{})
		res, _ := replay.Restore(bg, c, cfg, []string{"quarantine/S/hooks.json", "quarantine/S/bad.json", "S/root.json", "quarantine/S/none.json"}, replay.RestoreOptions{})
		want := []rules.Outcome{rules.OutcomeRefused, rules.OutcomeRefused, rules.OutcomeRefused, rules.OutcomeNotFound}
		why := []rules.ReasonKind{rules.ReasonNothingResumes, rules.ReasonMalformed, rules.ReasonNotQuarantine, rules.ReasonNotFound}
		for i, r := range res {
			if r.Outcome != want[i] || r.Reason.Kind != why[i] {
				t.Fatalf("%d: %+v", i, r)
			}
		}
		if !res[0].Reason.Forceable || res[0].Reason.Count != 1 || res[0].Reason.Verdicts.Of(rules.VerdictNotIdempotent) != 1 || !res[1].Reason.Forceable {
			t.Fatalf("%+v", res)
		}
		l, _ := store.ListAll(bg, c)
		if len(l.Blobs) != 2 {
			t.Fatalf("a refused restore wrote something: %+v", l.Blobs)
		}
		res, _ = replay.Restore(bg, c, cfg, []string{"quarantine/S/bad.json"}, replay.RestoreOptions{Force: true})
		if res[0].Outcome != rules.OutcomeRestored {
			t.Fatalf("--force: %+v", res)
		}
		b, _ := c.Read(bg, res[0].Target, 100)
		if string(b.Body) != `{"not":"an array"}` {
			t.Fatalf("forced restore must keep the bytes: %q", b.Body)
		}
	})
}

// A failure between the copy and the delete loses nothing, and restoring again converges without a second copy:
// the target is fixed by the quarantine copy's Last-Modified, the retry finds its own body there and only deletes.
func TestRestoreFailureBetweenCopyAndDelete(t *testing.T) {
	t.Parallel()
	storetest.Backends(t, func(t *testing.T, inner store.Container) {
		c := &storetest.Hooked{Container: inner}
		cfg := testCfg(c)
		q := "quarantine/S/2026/1/1/1/g.json"
		put(t, c, q, ev("a", "Push", ""))
		c.BeforeDelete = func(string, string) error { return errors.New("connection reset by peer") }
		for try := 0; try < 3; try++ { // a delete that keeps failing writes no new copy on any retry
			writes := c.Writes.Load()
			res, _ := replay.Restore(bg, c, cfg, []string{q}, replay.RestoreOptions{})
			if res[0].Outcome != rules.OutcomeFailed || res[0].Reason.Kind != rules.ReasonCopiedNotDeleted || res[0].Reason.Name != res[0].Target {
				t.Fatalf("try %d: %+v", try, res)
			}
			if want := int64(0); try > 0 && c.Writes.Load()-writes != want {
				t.Fatalf("try %d wrote %d copies", try, c.Writes.Load()-writes)
			}
		}
		if _, err := inner.Stat(bg, q); err != nil {
			t.Fatal("the quarantine copy was lost")
		}
		c.BeforeDelete = nil
		res, _ := replay.Restore(bg, c, cfg, []string{q}, replay.RestoreOptions{})
		if res[0].Outcome != rules.OutcomeRestored {
			t.Fatalf("after the delete works again: %+v", res)
		}
		if _, err := inner.Stat(bg, q); !errors.Is(err, store.ErrNotFound) {
			t.Fatal("did not converge")
		}
		if roots := restoredCopies(t, inner); len(roots) != 1 || roots[0] != res[0].Target {
			t.Fatalf("restored copies %v, want exactly %s", roots, res[0].Target)
		}
	})
}

func restoredCopies(t *testing.T, c store.Container) []string {
	t.Helper()
	l, err := store.ListAll(bg, c)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range l.Blobs {
		if rules.IsRoot(b.Name) && strings.Contains(b.Name, ".restored-") {
			out = append(out, b.Name)
		}
	}
	return out
}

// Two operators restoring the same 200 quarantine blobs at once leave exactly one restored copy of each.
func TestConcurrentRestoresLeaveOneCopy(t *testing.T) {
	t.Parallel()
	storetest.Backends(t, func(t *testing.T, c store.Container) {
		cfg := testCfg(c)
		n := 200
		if !isDir(c) {
			n = 60 // Azurite: the same race, fewer round trips
		}
		var names []string
		for i := 0; i < n; i++ {
			q := fmt.Sprintf("quarantine/S/2026/1/1/1/%03d.json", i)
			put(t, c, q, ev(fmt.Sprint(i), "Push", ""))
			names = append(names, q)
		}
		var wg sync.WaitGroup
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := replay.Restore(bg, c, cfg, names, replay.RestoreOptions{Concurrency: 8})
				if err != nil {
					t.Error(err)
				}
				for _, r := range res {
					// gone: another restorer wrote the copy and took the quarantine copy first.
					if r.Outcome != rules.OutcomeRestored && r.Outcome != rules.OutcomeNotFound && r.Outcome != rules.OutcomeGone {
						t.Errorf("%+v", r)
					}
				}
			}()
		}
		wg.Wait()
		if roots := restoredCopies(t, c); len(roots) != n {
			t.Fatalf("%d restored copies of %d quarantine blobs", len(roots), n)
		}
		l, _ := store.ListAll(bg, c)
		for _, b := range l.Blobs {
			if !rules.IsRoot(b.Name) {
				t.Fatalf("a quarantine copy survived: %s", b.Name)
			}
		}
	})
}

// The name moves on only past names holding a different body; a name already holding this body is the restore
// having landed.
func TestRestoreTargetAvoidsExistingNames(t *testing.T) {
	t.Parallel()
	d := storetest.Dir(t)
	cfg := testCfg(d)
	q := "quarantine/S/g.json"
	qi := put(t, d, q, ev("a", "Push", ""))
	tgt, _ := rules.RestoreTarget(q, qi.LastModified)
	put(t, d, tgt, ev("x", "Push", ""))
	put(t, d, rules.ArchivedPrefix+rules.AlternateTarget(tgt, 2), ev("x", "Push", ""))
	res, _ := replay.Restore(bg, d, cfg, []string{q}, replay.RestoreOptions{DryRun: true})
	if res[0].Outcome != rules.OutcomeRestored || res[0].Target != rules.AlternateTarget(tgt, 3) {
		t.Fatalf("%+v", res)
	}
	// The replay already consumed an earlier restore of this copy: its archived/ twin holds the body.
	body, _ := d.Read(bg, q, 1<<20)
	d.Write(bg, rules.ArchivedPrefix+rules.AlternateTarget(tgt, 3), body.Body, store.WriteOptions{})
	res, _ = replay.Restore(bg, d, cfg, []string{q}, replay.RestoreOptions{})
	if res[0].Outcome != rules.OutcomeRestored || res[0].Target != rules.AlternateTarget(tgt, 3) {
		t.Fatalf("%+v", res)
	}
	if _, err := d.Stat(bg, rules.AlternateTarget(tgt, 3)); !errors.Is(err, store.ErrNotFound) {
		t.Fatal("a landed restore was written a second time")
	}
}

func TestReadOnlyTouchesNothing(t *testing.T) {
	t.Parallel()
	c := &storetest.Hooked{Container: storetest.Dir(t)}
	cfg := testCfg(c)
	put(t, c, "S/a.json", ev("a", "Push", ""))
	put(t, c, "quarantine/S/a.json", ev("a", "Push", ""))
	strand(t, c, cfg, "S/a.json")
	w, dl := c.Writes.Load(), c.Deletes.Load()
	if _, err := replay.Drain(bg, c, cfg, cfg.DrainTargets(snapshot(t, c, cfg)), rules.DrainOptions{ReadOnly: true}); !errors.Is(err, replay.ErrReadOnly) {
		t.Fatal(err)
	}
	if _, err := replay.Restore(bg, c, cfg, []string{"quarantine/S/a.json"}, replay.RestoreOptions{ReadOnly: true}); !errors.Is(err, replay.ErrReadOnly) {
		t.Fatal(err)
	}
	if c.Writes.Load() != w || c.Deletes.Load() != dl {
		t.Fatalf("read-only mode wrote %d and deleted %d", c.Writes.Load()-w, c.Deletes.Load()-dl)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	c := &storetest.Hooked{Container: storetest.Dir(t)}
	cfg := testCfg(c)
	put(t, c, "S/a.json", ev("a", "Push", ""))
	put(t, c, "quarantine/S/b.json", ev("b", "Push", ""))
	strand(t, c, cfg, "S/a.json")
	w := c.Writes.Load()
	dr, _ := replay.Drain(bg, c, cfg, cfg.DrainTargets(snapshot(t, c, cfg)), rules.DrainOptions{DryRun: true})
	rr, _ := replay.Restore(bg, c, cfg, []string{"quarantine/S/b.json"}, replay.RestoreOptions{DryRun: true})
	if dr[0].Outcome != rules.OutcomeDrained || rr[0].Outcome != rules.OutcomeRestored || rr[0].Target == "" || c.Writes.Load() != w || c.Deletes.Load() != 0 {
		t.Fatalf("dry run: %+v %+v writes %d", dr, rr, c.Writes.Load()-w)
	}
}

// Handle follows the estate's order: the quarantine copy lands before the republish, a failed republish is
// fatal and leaves the original for the redelivery, and archived/quarantine blobs are never consumed.
func TestHandle(t *testing.T) {
	t.Parallel()
	d := storetest.Dir(t)
	cfg := testCfg(d)
	put(t, d, "S/a.json", ev("a", "Push", ""), ev("h", "Webhook", ""))
	pub := &recordingPublisher{fail: errors.New("503")}
	if _, err := estate.Handle(bg, d, cfg, "S/a.json", pub); err == nil || !strings.Contains(err.Error(), "ReplayDeadLetterEvent failed") {
		t.Fatalf("publish failure must be fatal: %v", err)
	}
	if _, err := d.Stat(bg, "S/a.json"); err != nil {
		t.Fatal("the original must survive a failed republish")
	}
	if _, err := d.Stat(bg, "quarantine/S/a.json"); err != nil {
		t.Fatal("the quarantine copy precedes the republish")
	}
	pub.fail = nil
	if _, err := estate.Handle(bg, d, cfg, "S/a.json", pub); err != nil {
		t.Fatal(err)
	}
	if h, _ := estate.Handle(bg, d, cfg, "S/a.json", pub); !h.Missing {
		t.Fatal("a redelivery finds nothing and returns")
	}
	if h, _ := estate.Handle(bg, d, cfg, "archived/S/a.json", pub); !h.Ignored {
		t.Fatal("the prefix guard")
	}
	d.Write(bg, "S/bad.json", []byte("nope"), store.WriteOptions{})
	if h, _ := estate.Handle(bg, d, cfg, "S/bad.json", pub); !h.Preview.Malformed || !h.Deleted {
		t.Fatalf("%+v", h)
	}
	b, _ := d.Read(bg, "quarantine/S/bad.json", 100)
	if string(b.Body) != "nope" {
		t.Fatal("malformed payloads are quarantined as raw bytes")
	}
}

// A restore held to the ETag its plan was read at skips a copy rewritten since, on both backends: the copy stays,
// nothing is written at the root.
func TestRestoreHeldToWhatWasPreviewed(t *testing.T) {
	t.Parallel()
	storetest.Backends(t, func(t *testing.T, c store.Container) {
		cfg := testCfg(c)
		const name = "quarantine/S/capped.json"
		shown := put(t, c, name, ev("a|9", "Push", ""))
		put(t, c, name, ev("a|9", "Push", ""), ev("b|9", "Push", "")) // rewritten after the preview
		res, _ := replay.Restore(bg, c, cfg, []string{name}, replay.RestoreOptions{Previewed: map[string]string{name: shown.ETag}})
		if res[0].Outcome != rules.OutcomeChanged {
			t.Fatalf("%+v", res[0])
		}
		l, _ := store.ListAll(bg, c)
		if len(l.Blobs) != 1 || l.Blobs[0].Name != name {
			t.Fatalf("a restore of a changed copy touched the container: %+v", l.Blobs)
		}
		now, _ := c.Stat(bg, name)
		res, _ = replay.Restore(bg, c, cfg, []string{name}, replay.RestoreOptions{Previewed: map[string]string{name: now.ETag}})
		if res[0].Outcome != rules.OutcomeRestored {
			t.Fatalf("%+v", res[0])
		}
	})
}

// A restore whose name cannot be written is said before any write: a directory's segment limit refuses it in the
// plan, and a taken name whose alternative would pass 1,024 characters fails without trying (a dry run too).
func TestRestoreNamesThatCannotBeWritten(t *testing.T) {
	t.Parallel()
	d := storetest.Dir(t)
	cfg := testCfg(d)
	long := "quarantine/S/1/" + strings.Repeat("z", 230) + ".json"
	qi := put(t, d, long, ev("a", "Push", ""))
	b, _ := d.Read(bg, long, 1<<20)
	rp, err := replay.PlanRestoreIn(bg, d, cfg, long, b.Body, rules.ParsePayload(b.Body), qi.LastModified)
	if err != nil || rp.Target != "" || rp.Refusal.Kind != rules.ReasonCannotHold {
		t.Fatalf("a segment past the directory's limit: %v %+v", err, rp)
	}
	seg := strings.Repeat("a", 240)
	base := "S/" + seg + "/" + seg + "/" + seg + "/" + seg + "/" + strings.Repeat("x", 16) + ".json" // 987: the quarantine/ copy of its restore is 1,024
	q := rules.QuarantinePrefix + base
	qi = put(t, d, q, ev("a", "Push", ""))
	tgt, err := rules.RestoreTarget(q, qi.LastModified)
	if err != nil || len(rules.QuarantinePrefix+tgt) != rules.MaxNameLength {
		t.Fatalf("target %d characters: %v", len(rules.QuarantinePrefix+tgt), err)
	}
	put(t, d, tgt, ev("someone else's", "Push", ""))
	b, _ = d.Read(bg, q, 1<<20)
	if rp, err := replay.PlanRestoreIn(bg, d, cfg, q, b.Body, rules.ParsePayload(b.Body), qi.LastModified); err != nil || rp.Target != "" || rp.Refusal.Kind != rules.ReasonNameTaken {
		t.Fatalf("the plan does not see the taken name: %v %+v", err, rp)
	}
	for _, dry := range []bool{true, false} {
		res, _ := replay.Restore(bg, d, cfg, []string{q}, replay.RestoreOptions{DryRun: dry, Force: true})
		if res[0].Outcome != rules.OutcomeRefused || res[0].Reason.Kind != rules.ReasonNameTaken || res[0].Reason.Name != rules.AlternateTarget(tgt, 2) {
			t.Fatalf("dry run %v: %+v", dry, res)
		}
	}
	// A short name whose restore name is taken: the plan names the one the restore will take.
	short := "quarantine/S/short.json"
	qi = put(t, d, short, ev("a", "Push", ""))
	tgt, _ = rules.RestoreTarget(short, qi.LastModified)
	put(t, d, tgt, ev("someone else's", "Push", ""))
	b, _ = d.Read(bg, short, 1<<20)
	if rp, err := replay.PlanRestoreIn(bg, d, cfg, short, b.Body, rules.ParsePayload(b.Body), qi.LastModified); err != nil || rp.Target != rules.AlternateTarget(tgt, 2) {
		t.Fatalf("the plan names %q, want %q (%v)", rp.Target, rules.AlternateTarget(tgt, 2), err)
	}
	if _, err := d.Stat(bg, q); err != nil {
		t.Fatal("the quarantine copy went:", err)
	}
}

// A restore moves on from its base name, never from the alternative its plan found: when the plan's "-2" is
// taken between the plan and the write, the copy lands at "-3", not at "-2-2".
func TestRestoreMovesOnFromItsBaseName(t *testing.T) {
	t.Parallel()
	d := storetest.Dir(t)
	h := &storetest.Hooked{Container: d}
	cfg := testCfg(h)
	q := "quarantine/S/race.json"
	qi := put(t, d, q, ev("a", "Push", ""))
	base, _ := rules.RestoreTarget(q, qi.LastModified)
	put(t, d, base, ev("someone else's", "Push", ""))
	h.BeforeWrite = func(name string, o store.WriteOptions) error {
		if name == rules.AlternateTarget(base, 2) && o.IfNoneMatchAny {
			put(t, d, name, ev("a second hand's", "Push", "")) // wins the race for -2
		}
		return nil
	}
	res, _ := replay.Restore(bg, h, cfg, []string{q}, replay.RestoreOptions{})
	if res[0].Outcome != rules.OutcomeRestored || res[0].Target != rules.AlternateTarget(base, 3) {
		t.Fatalf("%+v, want the copy at %s", res, rules.AlternateTarget(base, 3))
	}
}

// On a directory a folder may hold a restore's target name (blobs named under it): the restore, and its dry run
// alike, move on to the next free name instead of failing on it forever.
func TestRestoreMovesOnFromAFolder(t *testing.T) {
	t.Parallel()
	d := storetest.Dir(t)
	cfg := testCfg(d)
	q := "quarantine/S/2026/1/1/1/g.json"
	qi := put(t, d, q, ev("a|2", "Push", ""))
	target, _ := rules.RestoreTarget(q, qi.LastModified)
	put(t, d, target+"/other.json", ev("x", "Push", "")) // a folder now holds the target name
	for _, dry := range []bool{true, false} {
		res, err := replay.Restore(bg, d, cfg, []string{q}, replay.RestoreOptions{DryRun: dry})
		if err != nil || res[0].Outcome != rules.OutcomeRestored || res[0].Target != rules.AlternateTarget(target, 2) {
			t.Fatalf("dry run %v: %+v %v", dry, res, err)
		}
	}
	if _, err := d.Stat(bg, rules.AlternateTarget(target, 2)); err != nil {
		t.Fatal(err)
	}
}
