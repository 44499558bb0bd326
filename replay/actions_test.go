package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

var bg = context.Background()

// testCfg is the estate's configuration with the test register, and a TTL the backend can reach: an hour on a
// directory (blobs are backdated), two seconds on Azurite (which cannot backdate, so tests wait it out).
func testCfg(c store.Container) Config {
	cfg := cfgWith(testRegister)
	if !isDir(c) {
		cfg.TTL = 2 * time.Second
	}
	return cfg
}

func isDir(c store.Container) bool {
	if h, ok := c.(*storetest.Hooked); ok {
		c = h.Container
	}
	_, ok := c.(*store.Dir)
	return ok
}

// strand makes root blobs older than the TTL.
func strand(t *testing.T, c store.Container, cfg Config, names ...string) {
	t.Helper()
	if isDir(c) {
		for _, n := range names {
			if err := c.(Backdater).Backdate(n, time.Now().Add(-2*time.Hour)); err != nil {
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

func snapshot(t *testing.T, c store.Container, cfg Config) *Snapshot {
	t.Helper()
	s, err := NewLoader(c, cfg).List(bg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func outcomes(rs []Result) map[string]Outcome {
	m := map[string]Outcome{}
	for _, r := range rs {
		m[r.Name] = r.Outcome
	}
	return m
}

func TestDrainTwiceFindsEverythingYoung(t *testing.T) {
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

		res, err := Drain(bg, c, cfg, DrainTargets(snapshot(t, c, cfg)), ActionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 3 {
			t.Fatalf("drained %v, want the three stranded root blobs only", res)
		}
		for _, r := range res {
			if r.Outcome != OutcomeDrained {
				t.Fatalf("%+v", r)
			}
		}
		after, _ := c.Read(bg, names[0], 1<<20)
		if string(after.Body) != string(before.Body) || after.ETag == before.ETag || after.ContentType != "application/json" {
			t.Fatalf("drain must re-upload the identical bytes under a new ETag: %+v", after.BlobInfo)
		}
		if v, _ := store.MetaGet(after.Metadata, MetaDrainCount); v != "1" {
			t.Fatalf("drainCount = %q (%v)", v, after.Metadata)
		}
		if v, _ := store.MetaGet(after.Metadata, MetaDrainedAt); v == "" {
			t.Fatal("no drainedAt")
		}
		if v, _ := store.MetaGet(after.Metadata, "origin"); v != "eventgrid" {
			t.Fatalf("metadata lost: %v", after.Metadata)
		}
		// A second drain of the same blobs (by name) finds them young: the re-upload dated them.
		targets := make([]store.BlobInfo, len(names))
		for i, n := range names {
			targets[i] = store.BlobInfo{Name: n}
		}
		res, _ = Drain(bg, c, cfg, targets, ActionOptions{})
		for _, r := range res {
			if r.Outcome != OutcomeYoung {
				t.Fatalf("second drain: %+v", r)
			}
		}
		if s := snapshot(t, c, cfg); len(DrainTargets(s)) != 0 {
			t.Fatalf("still stranded after a drain: %v", DrainTargets(s))
		}
		// A third, after the blobs strand again, counts up.
		strand(t, c, cfg, names[0])
		Drain(bg, c, cfg, []store.BlobInfo{{Name: names[0]}}, ActionOptions{})
		third, _ := c.Read(bg, names[0], 1<<20)
		if v, _ := store.MetaGet(third.Metadata, MetaDrainCount); v != "2" {
			t.Fatalf("drainCount after two drains = %q", v)
		}
	})
}

func TestDrainNamedExcludedAndGone(t *testing.T) {
	storetest.Backends(t, func(t *testing.T, c store.Container) {
		cfg := testCfg(c)
		put(t, c, "quarantine/S/q.json", ev("y", "Push", ""))
		put(t, c, "S/young.json", ev("y", "Push", ""))
		res, _ := Drain(bg, c, cfg, []store.BlobInfo{{Name: "quarantine/S/q.json"}, {Name: "archived/x"}, {Name: "S/young.json"}, {Name: "S/none.json"}}, ActionOptions{})
		want := map[string]Outcome{"quarantine/S/q.json": OutcomeExcluded, "archived/x": OutcomeExcluded, "S/young.json": OutcomeYoung, "S/none.json": OutcomeGone}
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
		targets := DrainTargets(snapshot(t, c, cfg))
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
		res, err := Drain(bg, c, cfg, targets, ActionOptions{Concurrency: 4})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			want := []Outcome{OutcomeDrained, OutcomeGone, OutcomeChanged}[i%3]
			if r.Outcome != want {
				t.Fatalf("%s: %s, want %s", r.Name, r.Outcome, want)
			}
			b, err := inner.Read(bg, r.Name, 1<<20)
			switch want {
			case OutcomeGone:
				if !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("%s was resurrected", r.Name)
				}
			case OutcomeChanged:
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
	d := storetest.Dir(t)
	cfg := testCfg(d)
	var names []string
	for i := 0; i < 20; i++ {
		n := fmt.Sprintf("S/%02d.json", i)
		names = append(names, n)
		put(t, d, n, ev(fmt.Sprint(i), "Push", ""))
	}
	strand(t, d, cfg, names...)
	targets := DrainTargets(snapshot(t, d, cfg))
	ctx, cancel := context.WithCancel(bg)
	var mu sync.Mutex
	done := 0
	res, _ := Drain(ctx, d, cfg, targets, ActionOptions{Concurrency: 1, Progress: func(Result) {
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
		case OutcomeDrained:
			drained++
		case OutcomeCancelled:
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
	storetest.Backends(t, func(t *testing.T, c store.Container) {
		cfg := testCfg(c)
		q := "quarantine/S/2026/1/1/1/mixed.json"
		put(t, c, q, ev("cap-a|2", "Push", ""), ev("cap-b", "Push", ""), ev("hook", "Webhook", ""), ev("blob", "Microsoft.Storage.BlobCreated", ""))
		d, err := NewLoader(c, cfg).Inspect(bg, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Restore.Resume) != 2 || len(d.Restore.Requarantine) != 2 {
			t.Fatalf("prediction: %+v", d.Restore)
		}
		res, err := Restore(bg, c, cfg, []string{q}, ActionOptions{})
		if err != nil || res[0].Outcome != OutcomeRestored || res[0].Resume != 2 {
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
		for _, e := range ParsePayload(b.Body).Events {
			if strings.Contains(e.ID, "|") {
				t.Fatalf("restored id keeps a count: %q", e.ID)
			}
		}
		pub := &recordingPublisher{}
		h, err := Handle(bg, c, cfg, target, pub)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(pub.ids(), ","); got != "cap-a|1,cap-b|1" {
			t.Fatalf("republished %q, predicted %v", got, d.Restore.Resume)
		}
		qb, err := c.Read(bg, QuarantinePrefix+target, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range ParsePayload(qb.Body).Events {
			ids = append(ids, e.ID)
		}
		if strings.Join(ids, ",") != "hook,blob" || !h.Archived || !h.Deleted {
			t.Fatalf("re-quarantined %v, handled %+v", ids, h)
		}
	})
}

func TestRestoreRefusals(t *testing.T) {
	storetest.Backends(t, func(t *testing.T, c store.Container) {
		cfg := testCfg(c)
		put(t, c, "quarantine/S/hooks.json", ev("hook", "Webhook", ""))
		c.Write(bg, "quarantine/S/bad.json", []byte(`{"not":"an array"}`), store.WriteOptions{})
		res, _ := Restore(bg, c, cfg, []string{"quarantine/S/hooks.json", "quarantine/S/bad.json", "S/root.json", "quarantine/S/none.json"}, ActionOptions{})
		want := []Outcome{OutcomeRefused, OutcomeRefused, OutcomeRefused, OutcomeFailed}
		for i, r := range res {
			if r.Outcome != want[i] || r.Error == "" {
				t.Fatalf("%d: %+v", i, r)
			}
		}
		if !strings.Contains(res[0].Error, "no event would resume") || !strings.Contains(res[1].Error, "malformed") {
			t.Fatalf("%+v", res)
		}
		l, _ := c.List(bg)
		if len(l.Blobs) != 2 {
			t.Fatalf("a refused restore wrote something: %+v", l.Blobs)
		}
		res, _ = Restore(bg, c, cfg, []string{"quarantine/S/bad.json"}, ActionOptions{Force: true})
		if res[0].Outcome != OutcomeRestored {
			t.Fatalf("--force: %+v", res)
		}
		b, _ := c.Read(bg, res[0].Target, 100)
		if string(b.Body) != `{"not":"an array"}` {
			t.Fatalf("forced restore must keep the bytes: %q", b.Body)
		}
	})
}

// A failure between the copy and the delete loses nothing, and restoring again converges: the events reach the
// root twice (the idempotency bar makes that safe) but never zero times.
func TestRestoreFailureBetweenCopyAndDelete(t *testing.T) {
	storetest.Backends(t, func(t *testing.T, inner store.Container) {
		c := &storetest.Hooked{Container: inner}
		cfg := testCfg(c)
		q := "quarantine/S/2026/1/1/1/g.json"
		put(t, c, q, ev("a", "Push", ""))
		c.BeforeDelete = func(string, string) error { return errors.New("connection reset by peer") }
		res, _ := Restore(bg, c, cfg, []string{q}, ActionOptions{})
		if res[0].Outcome != OutcomeFailed || !strings.Contains(res[0].Error, "restoring again is safe") {
			t.Fatalf("%+v", res)
		}
		first := res[0].Target
		if _, err := inner.Stat(bg, first); err != nil {
			t.Fatalf("the copy did not land: %v", err)
		}
		if _, err := inner.Stat(bg, q); err != nil {
			t.Fatal("the quarantine copy was lost")
		}
		c.BeforeDelete = nil
		res, _ = Restore(bg, c, cfg, []string{q}, ActionOptions{})
		if res[0].Outcome != OutcomeRestored || res[0].Target == first {
			t.Fatalf("second restore: %+v (first target %s)", res, first)
		}
		if _, err := inner.Stat(bg, q); !errors.Is(err, store.ErrNotFound) {
			t.Fatal("did not converge")
		}
		for _, n := range []string{first, res[0].Target} {
			if _, err := inner.Stat(bg, n); err != nil {
				t.Fatalf("%s: %v", n, err)
			}
		}
	})
}

func TestRestoreTargetAvoidsExistingNames(t *testing.T) {
	d := storetest.Dir(t)
	cfg := testCfg(d)
	q := "quarantine/S/g.json"
	put(t, d, q, ev("a", "Push", ""))
	now, _ := d.Now(bg)
	// Occupy the first candidate names: the name itself, then its archived/ copy (for the next second too).
	for _, at := range []time.Time{now, now.Add(time.Second)} {
		tgt, _ := RestoreTarget(q, at)
		put(t, d, tgt, ev("x", "Push", ""))
		put(t, d, ArchivedPrefix+AlternateTarget(tgt, 2), ev("x", "Push", ""))
	}
	res, _ := Restore(bg, d, cfg, []string{q}, ActionOptions{})
	if res[0].Outcome != OutcomeRestored || !strings.HasSuffix(res[0].Target, "-3.json") {
		t.Fatalf("%+v", res)
	}
}

func TestReadOnlyTouchesNothing(t *testing.T) {
	c := &storetest.Hooked{Container: storetest.Dir(t)}
	cfg := testCfg(c)
	put(t, c, "S/a.json", ev("a", "Push", ""))
	put(t, c, "quarantine/S/a.json", ev("a", "Push", ""))
	strand(t, c, cfg, "S/a.json")
	w, dl := c.Writes.Load(), c.Deletes.Load()
	if _, err := Drain(bg, c, cfg, DrainTargets(snapshot(t, c, cfg)), ActionOptions{ReadOnly: true}); !errors.Is(err, ErrReadOnly) {
		t.Fatal(err)
	}
	if _, err := Restore(bg, c, cfg, []string{"quarantine/S/a.json"}, ActionOptions{ReadOnly: true}); !errors.Is(err, ErrReadOnly) {
		t.Fatal(err)
	}
	if c.Writes.Load() != w || c.Deletes.Load() != dl {
		t.Fatalf("read-only mode wrote %d and deleted %d", c.Writes.Load()-w, c.Deletes.Load()-dl)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	c := &storetest.Hooked{Container: storetest.Dir(t)}
	cfg := testCfg(c)
	put(t, c, "S/a.json", ev("a", "Push", ""))
	put(t, c, "quarantine/S/b.json", ev("b", "Push", ""))
	strand(t, c, cfg, "S/a.json")
	w := c.Writes.Load()
	dr, _ := Drain(bg, c, cfg, DrainTargets(snapshot(t, c, cfg)), ActionOptions{DryRun: true})
	rr, _ := Restore(bg, c, cfg, []string{"quarantine/S/b.json"}, ActionOptions{DryRun: true})
	if dr[0].Outcome != OutcomeDrained || rr[0].Outcome != OutcomeRestored || rr[0].Target == "" || c.Writes.Load() != w || c.Deletes.Load() != 0 {
		t.Fatalf("dry run: %+v %+v writes %d", dr, rr, c.Writes.Load()-w)
	}
}

// Handle follows the estate's order: the quarantine copy lands before the republish, a failed republish is
// fatal and leaves the original for the redelivery, and archived/quarantine blobs are never consumed.
func TestHandle(t *testing.T) {
	d := storetest.Dir(t)
	cfg := testCfg(d)
	put(t, d, "S/a.json", ev("a", "Push", ""), ev("h", "Webhook", ""))
	pub := &recordingPublisher{fail: errors.New("503")}
	if _, err := Handle(bg, d, cfg, "S/a.json", pub); err == nil || !strings.Contains(err.Error(), "ReplayDeadLetterEvent failed") {
		t.Fatalf("publish failure must be fatal: %v", err)
	}
	if _, err := d.Stat(bg, "S/a.json"); err != nil {
		t.Fatal("the original must survive a failed republish")
	}
	if _, err := d.Stat(bg, "quarantine/S/a.json"); err != nil {
		t.Fatal("the quarantine copy precedes the republish")
	}
	pub.fail = nil
	if _, err := Handle(bg, d, cfg, "S/a.json", pub); err != nil {
		t.Fatal(err)
	}
	if h, _ := Handle(bg, d, cfg, "S/a.json", pub); !h.Missing {
		t.Fatal("a redelivery finds nothing and returns")
	}
	if h, _ := Handle(bg, d, cfg, "archived/S/a.json", pub); !h.Ignored {
		t.Fatal("the prefix guard")
	}
	d.Write(bg, "S/bad.json", []byte("nope"), store.WriteOptions{})
	if h, _ := Handle(bg, d, cfg, "S/bad.json", pub); !h.Preview.Malformed || !h.Deleted {
		t.Fatalf("%+v", h)
	}
	b, _ := d.Read(bg, "quarantine/S/bad.json", 100)
	if string(b.Body) != "nope" {
		t.Fatal("malformed payloads are quarantined as raw bytes")
	}
}

func TestTally(t *testing.T) {
	rs := []Result{{Outcome: OutcomeCancelled}, {Outcome: OutcomeDrained}, {Outcome: OutcomeGone}, {Outcome: OutcomeDrained}, {Outcome: OutcomeExcluded}}
	if got := TallyOf(rs).String(); got != "2 drained, 1 excluded, 1 gone, 1 cancelled" {
		t.Fatalf("%q", got)
	}
}
