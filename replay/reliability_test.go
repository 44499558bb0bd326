package replay_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
	"github.com/deadletter/deadletter/replay/rules"

	"github.com/deadletter/deadletter/replay"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/azureblob"
	"github.com/deadletter/deadletter/store/storetest"
)

// proxied returns a fresh Azurite container reached through a fault proxy, and a direct handle on the same
// container for the test's own reads and for a second actor.
func proxied(t *testing.T) (*storetest.FaultProxy, store.Container, *azureblob.Container) {
	t.Helper()
	cs := storetest.AzuriteConnectionString(t)
	direct := storetest.Azure(t)
	name := strings.TrimPrefix(direct.Describe(), "devstoreaccount1/")
	p := storetest.NewFaultProxy(t, cs)
	via, err := azureblob.Open(azureblob.Options{ConnectionString: p.ConnectionString(cs), Container: name})
	if err != nil {
		t.Fatal(err)
	}
	return p, via, direct
}

// faulty injects, deterministically per request, the faults a bad network and a busy service produce.
func faulty(seed int64, rate float64) func(*http.Request) storetest.Fault {
	var mu sync.Mutex
	rng := rand.New(rand.NewSource(seed))
	return func(r *http.Request) storetest.Fault {
		mu.Lock()
		x := rng.Float64()
		mu.Unlock()
		if x > rate {
			return storetest.Fault{}
		}
		switch k := int(x / rate * 6); {
		case k == 0:
			return storetest.Fault{Status: http.StatusServiceUnavailable}
		case k == 1:
			return storetest.Fault{Status: http.StatusInternalServerError}
		case k == 2:
			return storetest.Fault{Latency: 150 * time.Millisecond}
		case k == 3 && r.Method == http.MethodGet:
			return storetest.Fault{ResetMidBody: true}
		case k == 4 && r.Method == http.MethodGet:
			return storetest.Fault{SlowBody: 2 * time.Millisecond}
		case r.Method == http.MethodPut || r.Method == http.MethodDelete:
			return storetest.Fault{LoseResponse: true}
		}
		return storetest.Fault{Latency: 20 * time.Millisecond}
	}
}

func seedRoot(t *testing.T, c store.Container, n int) []string {
	t.Helper()
	var names []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("S/2026/1/1/1/%03d.json", i)
		body := "[" + ev(fmt.Sprintf("e%d", i), "Push", `,"data":{"pad":"`+strings.Repeat("x", 2000)+`"}`) + "]"
		if _, err := c.Write(bg, name, []byte(body), store.WriteOptions{ContentType: "application/json"}); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

// Drain under 5xx bursts, latency, slow and reset bodies and lost responses: every blob drained exactly once.
func TestDrainThroughFaults(t *testing.T) {
	t.Parallel()
	p, via, direct := proxied(t)
	cfg := testCfg(direct)
	names := seedRoot(t, direct, 40)
	strand(t, direct, cfg, names...)
	p.SetFaults(faulty(1, 0.3))
	res, err := replay.Drain(bg, via, cfg, cfg.DrainTargets(snapshot(t, via, cfg)), rules.DrainOptions{Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	p.SetFaults(nil)
	if len(res) != len(names) {
		t.Fatalf("%d results for %d blobs", len(res), len(names))
	}
	// A blob whose write still fails after the SDK's retries is reported failed and left as it was; every other
	// one is drained exactly once. Nothing is lost either way.
	drained := 0
	for _, r := range res {
		bi, err := direct.Stat(bg, r.Name)
		n, _ := blob.MetaGet(bi.Metadata, rules.MetaDrainCount)
		switch {
		case err != nil:
			t.Errorf("%s: %s, and the blob is gone: %v", r.Name, r.Outcome, err)
		case r.Outcome == rules.OutcomeDrained && n != "1":
			t.Errorf("%s: drainCount %q: drained once, counted once", r.Name, n)
		case r.Outcome == rules.OutcomeFailed && n != "" || r.Outcome == rules.OutcomeFailed && r.Reason.Err == "":
			t.Errorf("%s: failed (%+v) but changed (drainCount %q)", r.Name, r.Reason, n)
		case r.Outcome != rules.OutcomeDrained && r.Outcome != rules.OutcomeFailed:
			t.Errorf("%s: %s %+v", r.Name, r.Outcome, r.Reason)
		}
		if r.Outcome == rules.OutcomeDrained {
			drained++
		}
	}
	if drained < len(names)*9/10 {
		t.Fatalf("only %d of %d drained: the SDK's retries should absorb most faults", drained, len(names))
	}
	for _, l := range p.Log() {
		if l.Method == http.MethodPut && l.IfMatch == "" {
			t.Fatalf("an unconditional drain write: %+v", l)
		}
	}
}

// The proxy's second actor rewrites or deletes the blob between the drain's read and its conditional write.
func TestSecondActorBetweenReadAndWrite(t *testing.T) {
	t.Parallel()
	p, via, direct := proxied(t)
	cfg := testCfg(direct)
	names := seedRoot(t, direct, 12)
	strand(t, direct, cfg, names...)
	p.SetFaults(func(r *http.Request) storetest.Fault {
		if !storetest.IsBlobWrite(r) {
			return storetest.Fault{}
		}
		name := storetest.BlobName(r.URL.Path)
		h := fnv.New32a()
		h.Write([]byte(name))
		switch h.Sum32() % 3 {
		case 1:
			return storetest.Fault{Before: func() { direct.Delete(bg, name, "") }}
		case 2:
			return storetest.Fault{Before: func() { direct.Write(bg, name, []byte(`["the replay got there first"]`), store.WriteOptions{}) }}
		}
		return storetest.Fault{}
	})
	res, _ := replay.Drain(bg, via, cfg, cfg.DrainTargets(snapshot(t, via, cfg)), rules.DrainOptions{})
	p.SetFaults(nil)
	seen := map[rules.Outcome]int{}
	for _, r := range res {
		seen[r.Outcome]++
		b, err := direct.Read(bg, r.Name, 1<<20)
		switch r.Outcome {
		case rules.OutcomeGone:
			if !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("%s resurrected", r.Name)
			}
		case rules.OutcomeChanged:
			if string(b.Body) != `["the replay got there first"]` {
				t.Fatalf("%s overwritten", r.Name)
			}
		case rules.OutcomeDrained:
		default:
			t.Fatalf("%+v", r)
		}
	}
	if seen[rules.OutcomeGone] == 0 || seen[rules.OutcomeChanged] == 0 || seen[rules.OutcomeDrained] == 0 {
		t.Fatalf("outcomes %v: the hash should give all three", seen)
	}
}

// A restore whose write lands but whose answer is lost still makes exactly one root copy and deletes the
// quarantine copy.
func TestRestoreWhoseAnswerIsLost(t *testing.T) {
	t.Parallel()
	p, via, direct := proxied(t)
	cfg := testCfg(direct)
	q := "quarantine/S/2026/1/1/1/g.json"
	put(t, direct, q, ev("a", "Push", ""))
	lost := false
	p.SetFaults(func(r *http.Request) storetest.Fault {
		if storetest.IsBlobWrite(r) && !lost {
			lost = true
			return storetest.Fault{LoseResponse: true}
		}
		return storetest.Fault{}
	})
	res, _ := replay.Restore(bg, via, cfg, []string{q}, replay.RestoreOptions{})
	p.SetFaults(nil)
	if res[0].Outcome != rules.OutcomeRestored || !lost {
		t.Fatalf("%+v (lost %v)", res, lost)
	}
	l, _ := store.ListAll(bg, direct)
	var names []string
	for _, b := range l.Blobs {
		names = append(names, b.Name)
	}
	if len(names) != 1 || names[0] != res[0].Target {
		t.Fatalf("container holds %v, want only %s", names, res[0].Target)
	}
}

// The container vanishes mid-drain: the next blobs fail with a clear error, and after StopAfterFailures of them in a
// row the drain stops and reports the rest cancelled, saying why. Nothing is recreated, nothing panics.
func TestContainerVanishesMidDrain(t *testing.T) {
	t.Parallel()
	p, via, direct := proxied(t)
	cfg := testCfg(direct)
	names := seedRoot(t, direct, 20)
	strand(t, direct, cfg, names...)
	targets := cfg.DrainTargets(snapshot(t, via, cfg))
	var once sync.Once
	writes := 0
	var mu sync.Mutex
	p.SetFaults(func(r *http.Request) storetest.Fault {
		mu.Lock()
		defer mu.Unlock()
		if storetest.IsBlobWrite(r) {
			if writes++; writes == 5 {
				return storetest.Fault{Before: func() { once.Do(func() { direct.DeleteContainer(context.Background()) }) }}
			}
		}
		return storetest.Fault{}
	})
	res, err := replay.Drain(bg, via, cfg, targets, rules.DrainOptions{Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[rules.Outcome]int{}
	for _, r := range res {
		seen[r.Outcome]++
		if r.Outcome == rules.OutcomeFailed && !errors.Is(errors.New(r.Reason.Err), store.ErrContainerNotFound) && !strings.Contains(r.Reason.Err, store.ErrContainerNotFound.Error()) {
			t.Fatalf("unclear error: %+v", r.Reason)
		}
		if r.Outcome == rules.OutcomeCancelled && (r.Reason.Kind != rules.ReasonStopped || r.Reason.Count != replay.StopAfterFailures) {
			t.Fatalf("a stopped drain must say why: %+v", r)
		}
	}
	if seen[rules.OutcomeDrained] != 4 || seen[rules.OutcomeFailed] != replay.StopAfterFailures || seen[rules.OutcomeCancelled] != len(names)-4-replay.StopAfterFailures {
		t.Fatalf("outcomes %v", seen)
	}
	if _, err := store.ListAll(bg, direct); !errors.Is(err, store.ErrContainerNotFound) {
		t.Fatalf("the container came back: %v", err)
	}
}

// Every drain write lands but its answer is lost (the connection breaks after the request went out): each blob
// is still reported drained, once.
func TestDrainWhoseAnswersAreLost(t *testing.T) {
	t.Parallel()
	p, via, direct := proxied(t)
	cfg := testCfg(direct)
	names := seedRoot(t, direct, 6)
	strand(t, direct, cfg, names...)
	var mu sync.Mutex
	lost := map[string]bool{}
	p.SetFaults(func(r *http.Request) storetest.Fault {
		mu.Lock()
		defer mu.Unlock()
		if n := storetest.BlobName(r.URL.Path); storetest.IsBlobWrite(r) && !lost[n] {
			lost[n] = true
			return storetest.Fault{LoseResponse: true}
		}
		return storetest.Fault{}
	})
	res, _ := replay.Drain(bg, via, cfg, cfg.DrainTargets(snapshot(t, via, cfg)), rules.DrainOptions{})
	p.SetFaults(nil)
	for _, r := range res {
		bi, _ := direct.Stat(bg, r.Name)
		if n, _ := blob.MetaGet(bi.Metadata, rules.MetaDrainCount); r.Outcome != rules.OutcomeDrained || n != "1" {
			t.Fatalf("%s: %s %+v, drainCount %q", r.Name, r.Outcome, r.Reason, n)
		}
	}
	if len(lost) != len(names) {
		t.Fatalf("lost %d answers of %d", len(lost), len(names))
	}
}
