package replay_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// strandedIn writes n stranded dead letters of a subscription into c and names them as drain targets.
func strandedIn(t *testing.T, c store.Container, cfg rules.Config, n int, sub string) []rules.DrainTarget {
	t.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("%s/2026/12/1/10/%08d-0000-0000-0000-000000000000.json", sub, i)
		put(t, c, name, ev(fmt.Sprintf("%s-%d", sub, i), "ProcessThreadReply", ""))
		names = append(names, name)
	}
	strand(t, c, cfg, names...)
	return named(names...)
}

func dirFixture(t *testing.T) (store.Container, rules.Config) {
	d, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d, testCfg(d)
}

// A paced drain of 30 blobs at 5 a second takes at least the 5.8 s its pacing allows, whatever the concurrency.
func TestAPacedDrainKeepsItsRate(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("takes six seconds by design")
	}
	c, cfg := dirFixture(t)
	targets := strandedIn(t, c, cfg, 30, "WEBHOOKS")
	start := time.Now()
	res, err := replay.Drain(context.Background(), c, cfg, targets, rules.DrainOptions{Rate: 5, Concurrency: 16})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 5800*time.Millisecond {
		t.Fatalf("30 blobs at 5/s took %s", took)
	}
	if n := rules.TallyOf(res)[rules.OutcomeDrained]; n != 30 {
		t.Fatalf("%d drained: %v", n, rules.TallyOf(res))
	}
}

// Waves: when the check says a subscription's handler fails again, that subscription's blobs not yet drained
// are left stranded (handlerFailing), within one wave; the other subscription's go on; the results keep the
// targets' order.
func TestAWaveStopsASubscriptionWhoseHandlerFailsAgain(t *testing.T) {
	t.Parallel()
	c, cfg := dirFixture(t)
	a := strandedIn(t, c, cfg, 20, "WEBHOOKS")
	b := strandedIn(t, c, cfg, 20, "FRIEND-REQUESTS")
	var targets []rules.DrainTarget
	for i := range a { // interleaved, as a listing by age would mix them
		targets = append(targets, a[i], b[i])
	}
	var waves atomic.Int32
	check := func(context.Context) map[string]string {
		if waves.Add(1) == 2 { // after the second wave, webhooks fails again
			return map[string]string{"webhooks": "Event Grid: 8 failed deliveries"}
		}
		return nil
	}
	res, err := replay.Drain(context.Background(), c, cfg, targets, rules.DrainOptions{Wave: 4, Check: check, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	drained := map[string]int{}
	for i, r := range res {
		if r.Name != targets[i].Name {
			t.Fatalf("result %d is %s, want %s", i, r.Name, targets[i].Name)
		}
		sub := strings.SplitN(r.Name, "/", 2)[0]
		switch r.Outcome {
		case rules.OutcomeDrained:
			drained[sub]++
		case rules.OutcomeHeld:
			if r.Reason.Kind != rules.ReasonHandlerFailing || sub != "WEBHOOKS" {
				t.Errorf("%s left: %+v", r.Name, r.Reason)
			}
		default:
			t.Errorf("%s: %s", r.Name, r.Outcome)
		}
	}
	// Two waves of four went out before the check said so: four webhooks blobs; friend-requests all twenty.
	if drained["WEBHOOKS"] != 4 || drained["FRIEND-REQUESTS"] != 20 {
		t.Fatalf("drained %v", drained)
	}
}

// A screen's trace reads only what its index says may hold the event — never a blob its hydration has not read
// yet (it counts those) — while the command line's reads every blob that may.
func TestAnIndexedTraceReadsNothingTwice(t *testing.T) {
	t.Parallel()
	c, cfg := dirFixture(t)
	put(t, c, "WEBHOOKS/2026/12/1/10/a.json", ev("e1", "ProcessThreadReply", ""))
	put(t, c, "WEBHOOKS/2026/12/1/11/b.json", ev("e1|1", "ProcessThreadReply", ""))
	put(t, c, "WEBHOOKS/2026/12/1/12/c.json", ev("other", "ProcessThreadReply", ""))
	l := replay.NewLoader(c, cfg)
	snap := snapshot(t, c, cfg)
	l.HydrateWhere(bg, snap, func(it *rules.Item) bool { return it.Name != "WEBHOOKS/2026/12/1/11/b.json" })
	p := l.PlanTraceIndexed(snap, []string{"e1"})
	js, read, err := p.Run(bg, nil)
	if err != nil || p.Unread != 1 || read != 1 || len(js) != 1 || len(js[0].Passes) != 1 {
		t.Fatalf("indexed: unread %d, read %d, %+v, %v", p.Unread, read, js, err)
	}
	js, read, err = l.PlanTrace(snap, []string{"e1"}).Run(bg, nil)
	if err != nil || read != 2 || len(js[0].Passes) != 2 {
		t.Fatalf("whole: read %d, %+v, %v", read, js, err)
	}
}
