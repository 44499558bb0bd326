package twin

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store/dirstore"
)

// A twin stopped after any one of its own writes or deletes (as kill -9 stops it) is repaired when next opened,
// and its account balances: every crash point of a two-day step past the lifecycle rule's first deletions.
func TestATwinStoppedAtAnyWriteBalances(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := filepath.Join(t.TempDir(), "base")
	tw, err := Start(ctx, base, made.Twin, "incident", 1, opens)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Advance(ctx, tw.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	from := tw.Now()
	tw.Close()
	// Every crash point n, in strides run side by side: stride i tries i, i+strides, … until a step ends
	// uncrashed (past its last write).
	const strides = 4
	for i := 1; i <= strides; i++ {
		t.Run(fmt.Sprintf("from %d", i), func(t *testing.T) {
			t.Parallel()
			crashEvery(t, base, from, i, strides)
		})
	}
}

// crashEvery stops copies of the twin at base after n = first, first+stride, … of their own writes and deletes
// in a two-day step from from, and checks each is repaired and balances.
func crashEvery(t *testing.T, base string, from time.Time, first, stride int) {
	ctx := context.Background()
	for n := first; n < 2000; n += stride {
		dir := filepath.Join(t.TempDir(), "t")
		if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
			t.Fatal(err)
		}
		copyPlace(t, base, dir)
		tw, err := Open(ctx, dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		crashed := func() (stopped bool) {
			defer func() {
				if r := recover(); r != nil {
					if r != errCrash {
						panic(r)
					}
					stopped = true
				}
			}()
			tw.crashAfter = n
			defer func() { tw.crashAfter = 0 }()
			if _, err := tw.Advance(ctx, from.Add(48*time.Hour)); err != nil {
				t.Fatal(err)
			}
			return false
		}()
		tw.Close()
		operatorActs(t, tw, dir)
		if !crashed {
			t.Logf("crash points up to %d tried", n-1)
			return // past the step's last write: every crash point of this stride was tried
		}
		again, err := OpenToLook(ctx, dir, "test")
		if err != nil {
			t.Fatalf("crash after %d writes: %v", n, err)
		}
		a, err := again.Check(ctx)
		again.Close()
		if err != nil || !a.Balanced() {
			t.Fatalf("crash after %d writes: %v; %+v", n, err, a)
		}
	}
}

// copyPlace makes dir a twin with base's state: its own record, holding a copy of every file of base's.
func copyPlace(t *testing.T, base, dir string) {
	t.Helper()
	from, err := made.Find(base)
	if err != nil {
		t.Fatal(err)
	}
	to, err := made.Make(dir, made.Twin)
	if err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(from.File(""))
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if !de.Type().IsRegular() || de.Name() == "lock" || de.Name() == "record.json" {
			continue
		}
		b, err := os.ReadFile(from.File(de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to.File(de.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// operatorActs does what the soak's operator does between rounds: drain every stranded blob, and restore (forced)
// the first quarantine copy — on the directory as it stands, the twin not yet repaired.
func operatorActs(t *testing.T, tw *Twin, dir string) {
	t.Helper()
	ctx := context.Background()
	d, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d.UseClockFile(ClockPath(tw.place))
	cfg := Config()
	snap, err := replay.NewLoader(d, cfg).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replay.DrainAsPlanned(ctx, d, cfg, cfg.PlanDrainStranded(snap), rules.DrainOptions{}); err != nil {
		t.Fatal(err)
	}
	if q := snap.InPane(rules.PaneQuarantine); len(q) > 0 {
		if _, err := replay.Restore(ctx, d, cfg, []string{q[0].Name}, replay.RestoreOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
	}
}

// Ten rounds of a two-day step stopped at a random one of its writes, the operator's drain and restore, and a
// look (which repairs): the account balances after every round, as the kill -9 soak asks of the binary.
//
// It reproduces the known defect docs/twin.md describes (a step re-run after an operator acted meets a dead-letter
// blob its lost run wrote with other events at the same name), so it runs only where asked.
func TestATwinStoppedRoundAfterRoundBalances(t *testing.T) {
	t.Parallel()
	if os.Getenv("DEADLETTER_SOAK_KNOWN_DEFECTS") == "" {
		t.Skip("known defect (docs/twin.md): run with DEADLETTER_SOAK_KNOWN_DEFECTS=1")
	}
	ctx := context.Background()
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 9))
		dir := filepath.Join(t.TempDir(), "t")
		tw, err := Start(ctx, dir, made.Twin, "incident", 1, opens)
		if err != nil {
			t.Fatal(err)
		}
		tw.Close()
		for round := range 10 {
			tw, err := Open(ctx, dir, "test")
			if err != nil {
				t.Fatalf("seed %d round %d: %v", seed, round, err)
			}
			n := 1 + rng.IntN(60)
			func() {
				defer func() {
					if r := recover(); r != nil && r != errCrash {
						panic(r)
					}
				}()
				tw.crashAfter = n
				defer func() { tw.crashAfter = 0 }()
				if _, err := tw.Advance(ctx, tw.Now().Add(48*time.Hour)); err != nil {
					t.Fatal(err)
				}
			}()
			tw.Close()
			operatorActs(t, tw, dir)
			look, err := OpenToLook(ctx, dir, "test")
			if err != nil {
				t.Fatalf("seed %d round %d: %v", seed, round, err)
			}
			a, err := look.Check(ctx)
			look.Close()
			if err != nil || !a.Balanced() {
				t.Fatalf("seed %d round %d (stopped after %d writes): %v; %+v", seed, round, n, err, a)
			}
		}
	}
}
