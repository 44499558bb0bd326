package present

import (
	"testing"

	"github.com/deadletter/deadletter/replay"
)

func TestTallyLine(t *testing.T) {
	rs := []replay.Result{{Outcome: replay.OutcomeCancelled}, {Outcome: replay.OutcomeDrained}, {Outcome: replay.OutcomeGone}, {Outcome: replay.OutcomeDrained}, {Outcome: replay.OutcomeExcluded}}
	if got := TallyLine(replay.TallyOf(rs), false); got != "2 drained, 1 excluded, 1 gone, 1 cancelled" {
		t.Fatalf("%q", got)
	}
	if got := TallyLine(replay.TallyOf(rs), true); got != "2 would drain, 1 excluded, 1 gone, 1 cancelled" {
		t.Fatalf("dry run: %q", got)
	}
	if got := TallyLine(nil, false); got != "nothing to do" {
		t.Fatalf("%q", got)
	}
}
