package present

import (
	"strings"
	"testing"

	"github.com/deadletter/deadletter/replay/rules"
)

func TestTallyLine(t *testing.T) {
	rs := []rules.Result{{Outcome: rules.OutcomeCancelled}, {Outcome: rules.OutcomeDrained}, {Outcome: rules.OutcomeGone}, {Outcome: rules.OutcomeDrained}, {Outcome: rules.OutcomeExcluded}}
	if got := TallyLine(rules.TallyOf(rs), false); got != "2 drained, 1 excluded, 1 gone, 1 cancelled" {
		t.Fatalf("%q", got)
	}
	if got := TallyLine(rules.TallyOf(rs), true); got != "2 would drain, 1 excluded, 1 gone, 1 cancelled" {
		t.Fatalf("dry run: %q", got)
	}
	if got := TallyLine(nil, false); got != "nothing to do" {
		t.Fatalf("%q", got)
	}
}

// The drain's question counts what it re-uploads, and what it only tries again, in words that read.
func TestDrainQuestion(t *testing.T) {
	for _, tc := range []struct {
		f    rules.Forecast
		want string
	}{
		{rules.Forecast{Blobs: 3}, "Drain 3 blob(s)?"},
		{rules.Forecast{Blobs: 3, Unreadable: 2}, "Drain 3 blob(s), and try again 2 that could not be read?"},
		{rules.Forecast{Unreadable: 2}, "Try again to drain 2 blob(s) that could not be read?"},
	} {
		if got := DrainQuestion(tc.f, "blob(s)"); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.f, got, tc.want)
		}
	}
}

// At 80 columns the reason column keeps what tells blobs apart — the outcome — under a title that says so, and a
// sort arrow never eats a title down to "A…↓".
func TestNarrowColumnsKeepWhatTheyMean(t *testing.T) {
	if got := ColReason.Fit("MaxAttempts/NotFound", 11); strings.TrimSpace(got) != "NotFound" {
		t.Errorf("narrow reason cell %q, want the outcome", got)
	}
	if got := ColReason.Fit("MaxAttempts", 8); strings.TrimSpace(got) != "MaxAtte…" {
		t.Errorf("narrow reason without an outcome %q", got)
	}
	if got := ColReason.Head(11, ""); strings.TrimSpace(got) != "OUTCOME" {
		t.Errorf("narrow reason title %q", got)
	}
	if got := ColAttempt.Head(3, "↓"); got != "AT↓" {
		t.Errorf("ATT sorted at 3 columns: %q", got)
	}
	if got := ColState.Fit("acked ops@host", 8); got != "acked   " {
		t.Errorf("narrow STATE %q, want the word whole", got)
	}
	it := rules.Item{}
	it.Name = "quarantine/WEBHOOKS/2026/12/1/4/g.json"
	if got := ColNameInPane.Cell(Row{Item: &it}); got != "WEBHOOKS/2026/12/1/4/g.json" {
		t.Errorf("ls on a terminal spends width on the pane's prefix: %q", got)
	}
	if got := ColAge.Head(8, "↓"); got != "AGE↓    " {
		t.Errorf("AGE sorted: %q", got)
	}
}
