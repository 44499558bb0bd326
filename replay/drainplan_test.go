package replay_test

import (
	"slices"
	"testing"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

// One plan says what the drain does: its dry run reports exactly the plan's Names as drained and its Left as
// left, in the order given; a blob rewritten after the plan was made is not re-uploaded over (the plan holds the
// ETag it listed); and what the plan leaves, the drain never touches.
func TestTheDrainDoesWhatItsPlanSays(t *testing.T) {
	t.Parallel()
	storetest.Backends(t, func(t *testing.T, c store.Container) {
		cfg := testCfg(c)
		names := []string{"S/2026/1/1/1/a.json", "S/2026/1/1/1/b.json", "T/2026/1/1/2/c.json"}
		for _, n := range names {
			put(t, c, n, ev("x-"+n, "Push", ""))
		}
		put(t, c, "archived/S/2026/1/1/1/b.json", ev("x-"+names[1], "Push", "")) // b was handled by the replay
		strand(t, c, cfg, names...)
		s := snapshot(t, c, cfg)
		plan := cfg.PlanDrainStranded(s)
		if !slices.Equal(plan.Names, []string{names[0], names[2]}) || len(plan.Left) != 1 || plan.Left[0].Name != names[1] ||
			plan.Left[0].Outcome != rules.OutcomeHandled || len(plan.Targets) != 2 || len(plan.Items) != 3 {
			t.Fatalf("plan: names %v, left %+v, %d targets of %d", plan.Names, plan.Left, len(plan.Targets), len(plan.Items))
		}
		for i, tg := range plan.Targets {
			if tg.Name != plan.Taken[i].Name || tg.ETag == "" || tg.ETag != plan.Taken[i].ETag {
				t.Fatalf("target %d %s is not held to the ETag listed (%q, listed %q)", i, tg.Name, tg.ETag, plan.Taken[i].ETag)
			}
		}
		dry, err := replay.DrainAsPlanned(bg, c, cfg, plan, rules.DrainOptions{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]rules.Outcome{names[0]: rules.OutcomeDrained, names[1]: rules.OutcomeHandled, names[2]: rules.OutcomeDrained}
		for i, r := range dry {
			if r.Name != plan.Items[i].Name || r.Outcome != want[r.Name] {
				t.Fatalf("dry run %d: %s %s, want %s in the plan's order", i, r.Name, r.Outcome, want[r.Name])
			}
		}
		put(t, c, names[2], ev("x-changed", "Push", "")) // rewritten after the plan: its ETag moved
		strand(t, c, cfg, names[2])
		res, _ := replay.DrainAsPlanned(bg, c, cfg, plan, rules.DrainOptions{})
		if got := outcomes(res); got[names[0]] != rules.OutcomeDrained || got[names[1]] != rules.OutcomeHandled || got[names[2]] != rules.OutcomeChanged {
			t.Fatalf("drain: %v", got)
		}
	})
}
