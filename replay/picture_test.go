package replay_test

import (
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store/storetest"
)

// A report streams the container (issue 52): its picture and readiness, added up page by page in pages of any
// size, are the ones the dashboard works out from the whole snapshot.
func TestThePictureAndReadinessAddUpPageByPage(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 6; seed++ {
		now := time.Date(2026, 12, 7, 10, 17, 0, 0, time.UTC).Add(time.Duration(seed) * 37 * time.Minute)
		mem := storetest.NewMem(now)
		cfg := rules.DefaultConfig()
		if _, err := scenario.Seed(bg, mem, scenario.SeedOptions{Count: 60, Seed: seed, Config: cfg}); err != nil {
			t.Fatal(err)
		}
		cfg.Handlers = scenario.IncidentRegister
		l := replay.NewLoader(mem, cfg)
		snap, err := l.List(bg)
		if err != nil {
			t.Fatal(err)
		}
		l.HydrateWhere(bg, snap, nil)
		o := rules.PictureOptions{Window: time.Duration(6+seed*5) * time.Hour}
		wantPic, wantReady := cfg.Picture(snap, o), cfg.Readiness(snap.Items, snap.Now)

		rng := rand.New(rand.NewSource(seed))
		pic, ready := cfg.NewPictureBuilder(o), cfg.NewReadinessBuilder()
		items := make([]rules.Item, len(snap.Items))
		for i, it := range snap.Items {
			items[i] = *it
		}
		for len(items) > 0 {
			n := min(len(items), 1+rng.Intn(17))
			pic.Add(items[:n], snap.Now)
			ready.Add(items[:n], snap.Now)
			items = items[n:]
		}
		if got := pic.Picture(); !reflect.DeepEqual(got, wantPic) {
			t.Errorf("seed %d: the picture added page by page\n%+v\nthe snapshot's\n%+v", seed, got, wantPic)
		}
		if got := ready.Readiness(); !reflect.DeepEqual(got, wantReady) {
			t.Errorf("seed %d: readiness added page by page\n%+v\nthe snapshot's\n%+v", seed, got, wantReady)
		}
	}
}
