package replay_test

import (
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/estate"
	"github.com/deadletter/deadletter/replay/rules"

	"github.com/deadletter/deadletter/replay"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

// handleRetried runs the replay function as Event Grid would deliver it: again on failure, a few times.
func handleRetried(t *testing.T, c store.Container, cfg rules.Config, name string, pub estate.Publisher) {
	for i := 0; i < 6; i++ {
		if _, err := estate.Handle(bg, c, cfg, name, pub); err == nil {
			return
		}
	}
	t.Logf("the replay of %s kept failing; Event Grid would discard the trigger and the blob stays", name)
}

// The soak: rounds of seed → drain → the replay function → restore → the replay again, with faults on, and
// after every round the invariants that matter to an operator.
func TestSoak(t *testing.T) {
	t.Parallel()
	p, via, direct := proxied(t)
	cfg := testCfg(direct)
	cfg.Handlers = rules.Register{"Push": true, "Thread": true, "Webhook": false}
	pub := &recordingPublisher{}
	types := []string{"Push", "Thread", "Webhook", "Microsoft.Storage.BlobCreated"}
	originals := map[string]string{} // every event ever seeded: original id → eventType
	var malformed []string           // bodies of malformed blobs
	rng := rand.New(rand.NewSource(42))
	rounds := 3
	if os.Getenv("DEADLETTER_SOAK_ROUNDS") != "" {
		fmt.Sscan(os.Getenv("DEADLETTER_SOAK_ROUNDS"), &rounds)
	}
	deadline := time.Now().Add(150 * time.Second)
	for round := 0; round < rounds && time.Now().Before(deadline); round++ {
		// Event Grid dead-letters a batch (written straight to the container, not through the tool).
		var fresh []string
		for b := 0; b < 12; b++ {
			name := fmt.Sprintf("SUB/2026/1/%d/%d/%02d.json", round+1, b%24, b)
			if b == 11 { // and one that is not a dead letter at all
				body := `[{"id":"bad-` + fmt.Sprint(round) + `","subject":`
				malformed = append(malformed, body)
				if _, err := direct.Write(bg, name, []byte(body), store.WriteOptions{ContentType: "application/json"}); err != nil {
					t.Fatal(err)
				}
				fresh = append(fresh, name)
				continue
			}
			var evs []string
			for e := 0; e < 1+rng.Intn(5); e++ {
				id := fmt.Sprintf("r%d-b%d-e%d", round, b, e)
				typ := types[rng.Intn(len(types))]
				originals[id] = typ
				if rng.Intn(4) == 0 {
					id = rules.FormatID(id, rules.Attempt(1+rng.Intn(3)), cfg.Separator) // some already replayed, some at the cap
				}
				evs = append(evs, ev(id, typ, ""))
			}
			body := "[" + strings.Join(evs, ",") + "]"
			if _, err := direct.Write(bg, name, []byte(body), store.WriteOptions{ContentType: "application/json"}); err != nil {
				t.Fatal(err)
			}
			fresh = append(fresh, name)
		}
		strand(t, direct, cfg, fresh...)
		records := copies(t, direct)

		p.SetFaults(faulty(int64(round), 0.2))
		res, err := replay.Drain(bg, via, cfg, cfg.DrainTargets(snapshot(t, via, cfg)), rules.DrainOptions{Concurrency: 4})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Outcome == rules.OutcomeFailed {
				t.Logf("round %d: drain failed for %s (reported, nothing lost): %s", round, r.Name, r.Reason.Err)
			}
		}
		for n, etag := range records {
			if cur, ok := copies(t, direct)[n]; ok && cur != etag {
				t.Fatalf("round %d: the drain rewrote %s", round, n)
			}
		}
		// The replay function handles every root blob (the BlobCreated the drain raised).
		for _, n := range rootNames(t, direct) {
			handleRetried(t, via, cfg, n, pub)
		}
		// The operator restores every quarantine blob where something resumes; the replay handles the copies.
		var qs []string
		for n := range copies(t, direct) {
			if strings.HasPrefix(n, rules.QuarantinePrefix) {
				qs = append(qs, n)
			}
		}
		// Two operators restore them at once, and a third whose role lacks delete permission.
		noDelete := &storetest.Hooked{Container: via, BeforeDelete: func(name, _ string) error {
			return fmt.Errorf("delete %q: %w: this identity may write but not delete", name, store.ErrForbidden)
		}}
		var runs [3][]rules.Result
		var wg sync.WaitGroup
		for i, c := range []store.Container{via, via, noDelete} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runs[i], _ = replay.Restore(bg, c, cfg, qs, replay.RestoreOptions{Concurrency: 4})
			}()
		}
		wg.Wait()
		rres := runs[0]
		targets := map[string]map[string]bool{} // quarantine copy → the restored names any restorer reported
		for _, run := range runs {
			for _, r := range run {
				if r.Target != "" && (r.Outcome == rules.OutcomeRestored || r.Outcome == rules.OutcomeFailed) {
					if targets[r.Name] == nil {
						targets[r.Name] = map[string]bool{}
					}
					targets[r.Name][r.Target] = true
				}
			}
		}
		for q, ts := range targets {
			if len(ts) > 1 {
				t.Fatalf("round %d: %s was restored to %d names: %v", round, q, len(ts), ts)
			}
			for target := range ts {
				if _, err := direct.Stat(bg, target); err == nil {
					handleRetried(t, via, cfg, target, pub)
				}
			}
		}
		p.SetFaults(nil)
		// Invariant 0: at most one restored copy per quarantine copy, wherever the replay has taken it since.
		perSource := map[string]map[string]bool{}
		for _, n := range allNames(t, direct) {
			base := strings.TrimPrefix(strings.TrimPrefix(n, rules.ArchivedPrefix), rules.QuarantinePrefix)
			if i := strings.LastIndex(base, ".restored-"); i >= 0 {
				src := base[:i]
				if perSource[src] == nil {
					perSource[src] = map[string]bool{}
				}
				perSource[src][base] = true
			}
		}
		for src, ts := range perSource {
			if len(ts) > 1 {
				t.Fatalf("round %d: %s has %d restored copies: %v", round, src, len(ts), ts)
			}
		}

		// Invariant 1: every event that ever existed is still in the container or was handed to the publisher.
		present := map[string]bool{}
		var bodies []string
		l, _ := store.ListAll(bg, direct)
		for _, bi := range l.Blobs {
			b, err := direct.Read(bg, bi.Name, store.MaxBlobBytes)
			if err != nil {
				t.Fatal(err)
			}
			bodies = append(bodies, string(b.Body))
			for _, e := range rules.ParsePayload(b.Body).Events {
				present[rules.ParseID(e.ID, cfg.Separator).Original] = true
			}
		}
		published := map[string]int{}
		for _, id := range pub.ids() {
			published[rules.ParseID(id, cfg.Separator).Original]++
		}
		for id := range originals {
			if !present[id] && published[id] == 0 {
				t.Fatalf("round %d: event %s was lost", round, id)
			}
		}
		for _, m := range malformed {
			found := false
			for _, b := range bodies {
				found = found || b == m
			}
			if !found {
				t.Fatalf("round %d: malformed payload %q was lost", round, m)
			}
		}
		// Invariant 2: duplicates only for idempotent handlers.
		for id, n := range published {
			if n > 1 && !cfg.Handlers[originals[id]] {
				t.Fatalf("round %d: %s (%s, not idempotent) was published %d times", round, id, originals[id], n)
			}
		}
		// Invariants 3 and 4: drain writes only root blobs; every write and delete carries its condition.
		for _, l := range p.Log() {
			name := storetest.BlobName(l.Path)
			switch {
			case l.Method == http.MethodPut && strings.Contains(l.Query, "restype=container"):
			case l.Method == http.MethodPut && strings.Contains(l.Query, "comp=lease"):
				// A restore's lease on its quarantine copy, held until its delete (taken If-Match; released
				// when the restore stops short): never a write.
			case l.Method == http.MethodPut && l.IfMatch == "" && l.IfNoneMatch != "*":
				t.Fatalf("unconditional write: %+v", l)
			case l.Method == http.MethodPut && l.IfMatch != "" && !rules.IsRoot(name):
				t.Fatalf("a drain rewrote the record %s", name)
			case l.Method == http.MethodDelete && l.IfMatch == "":
				t.Fatalf("unconditional delete: %+v", l)
			}
		}
		t.Logf("round %d: %d blobs, %d events published so far, %d drain results, %d restores", round, len(l.Blobs), len(pub.ids()), len(res), len(rres))
	}
}

func copies(t *testing.T, c store.Container) map[string]string {
	l, err := store.ListAll(bg, c)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, b := range l.Blobs {
		if !rules.IsRoot(b.Name) {
			m[b.Name] = b.ETag
		}
	}
	return m
}

func allNames(t *testing.T, c store.Container) []string {
	l, err := store.ListAll(bg, c)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range l.Blobs {
		out = append(out, b.Name)
	}
	return out
}

func rootNames(t *testing.T, c store.Container) []string {
	l, err := store.ListAll(bg, c)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range l.Blobs {
		if rules.IsRoot(b.Name) {
			out = append(out, b.Name)
		}
	}
	return out
}
