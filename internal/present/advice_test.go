package present

import (
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
)

// Every state a blob can be in — pane × handled × stalled × expiring × crash × may-crash × malformed ×
// untriggerable × acked × unreadable × restore plan × readiness × gone — gets advice in one voice: one sentence that decides, and no two
// sentences on the screen that disagree.
func TestAdviceNeverContradictsItself(t *testing.T) {
	plans := []*rules.RestorePlan{nil, {Target: "S/x.restored.json", Resume: []rules.Resuming{{}}},
		{Target: "S/x.restored.json", Refusal: rules.Reason{Kind: rules.ReasonNothingResumes}},
		{Target: "S/x.restored.json", Refusal: rules.Reason{Kind: rules.ReasonLingers, Name: "S/x.json"}},
		{Refusal: rules.Reason{Kind: rules.ReasonNoTarget}}}
	gones := []*replay.Whereabouts{nil, {Kind: replay.WhereArchived, Name: "archived/S/x.json"}, {Kind: replay.WhereRestored, Name: "S/x.r.json"},
		{Kind: replay.WhereDeleted}}
	ack := &rules.Ack{By: "ops", Until: time.Now().Add(time.Hour)}
	n := 0
	for _, pane := range rules.Panes {
		for bits := 0; bits < 1<<9; bits++ {
			b := func(i int) bool { return bits&(1<<i) != 0 }
			a := rules.Alerts{Handled: b(0), Stalled: b(1), Expiring: b(2), Crash: b(3), Malformed: b(4), Untriggerable: b(5), Acked: b(6),
				MayCrash: b(8), DeletesIn: time.Hour}
			if a.Handled {
				a.HandledBy = "archived/S/x.json"
			}
			if a.Acked {
				a.Ack = ack
			}
			for _, plan := range plans {
				for _, gone := range gones {
					for _, failing := range []bool{false, true} {
						s := BlobState{Pane: pane, Alerts: a, Unreadable: b(7), Restore: plan, Gone: gone,
							Readiness: &rules.Readiness{Subscription: "S", Failing: failing, NewestDeadLetter: time.Now()}}
						checkAdvice(t, s, Advice(s))
						n++
					}
				}
			}
		}
	}
	t.Logf("%d states", n)
}

func checkAdvice(t *testing.T, s BlobState, lines []string) {
	t.Helper()
	all := strings.Join(lines, " ")
	has := func(x string) bool { return strings.Contains(all, x) }
	bad := func(why string) { t.Fatalf("%s: %+v\n%s", why, s, strings.Join(lines, "\n")) }
	switch {
	case len(lines) == 0:
		bad("no advice")
	case has("Drain it") && (has("a second time") || has("Do not drain") || has("Leave") || has("Restore")):
		bad("drain beside advice not to")
	case has("Drain it") && s.Pane != rules.PaneStranded:
		bad("drain offered outside the stranded pane")
	case (s.Pane == rules.PaneQuarantine || s.Pane == rules.PaneArchived) && (has("drain") || has("Drain")):
		bad("drain offered for the replay's own records")
	case s.Pane != rules.PaneQuarantine && has("Restore it"):
		bad("restore offered outside the quarantine pane")
	case has("not consuming") && has("Leave it alone"):
		bad("a stalled replay beside 'leave it alone'")
	case s.Alerts.Crash && has("Drain it"):
		bad("drain offered for a blob the replay crashes on")
	case has("still dead-lettered") && !has("Drain it"):
		bad("a readiness warning without a drain to warn about")
	case s.Gone != nil && (has("Drain it") || has("Restore it") || has("Hurry")):
		bad("an action offered on a blob that is gone")
	case has("Nothing to do") && (has("Drain it") || has("Restore it") || has("Hurry")):
		bad("nothing to do beside something to do")
	}
	if strings.Count(all, "Drain it")+strings.Count(all, "Restore it")+strings.Count(all, "Leave")+strings.Count(all, "Do not drain") > 1 {
		bad("more than one deciding sentence")
	}
}

// A failing handler matters only to events the replay would republish: a drain of blobs whose events are all
// quarantined (not idempotent) warns of nothing, in the dialog's list and in the blob's own advice.
func TestReadinessWarnsOnlyWhereEventsAreRepublished(t *testing.T) {
	cfg := rules.DefaultConfig()
	now := time.Now()
	item := func(sub string, vc rules.VerdictCounts) rules.Item {
		return rules.Item{Parsed: rules.BlobName{Subscription: sub}, Summary: &rules.Summary{Events: 1, Verdicts: vc}}
	}
	webhooks := item("WEBHOOKS", rules.VerdictCounts{rules.VerdictNotIdempotent: 3})
	push := item("PUSH", rules.VerdictCounts{rules.VerdictReplay: 2})
	ready := []rules.Readiness{{Subscription: "WEBHOOKS", Failing: true, LastWindow: 4, NewestDeadLetter: now},
		{Subscription: "PUSH", Failing: true, LastWindow: 2, NewestDeadLetter: now}}
	ws := ReadinessWarnings(cfg, []rules.Item{webhooks, push}, ready, now)
	if len(ws) != 1 || !strings.HasPrefix(ws[0], "PUSH:") {
		t.Fatalf("warnings %q: want PUSH's only", ws)
	}
	s := BlobState{Pane: rules.PaneStranded, Readiness: &ready[0], Now: now, NothingRepublished: true}
	for _, l := range Advice(s) {
		if strings.Contains(l, "handler still fails") {
			t.Fatalf("advice for a blob nothing of which is republished: %q", l)
		}
	}
	s.NothingRepublished = false
	if !strings.Contains(strings.Join(Advice(s), " "), "handler still fails") {
		t.Fatal("no warning for a blob whose events are republished")
	}
}

// A blob deadletter drained that is stranded again is not told "Drain it" as if nothing had happened: it says it
// was drained, when, and that no trigger reached the replay within the TTL in force (issue 51).
func TestAStrandedAgainBlobSaysItWasDrained(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 7, 3, 40, 48, 0, time.UTC)
	first := Advice(BlobState{Pane: rules.PaneStranded, TTL: 5 * time.Second})
	again := Advice(BlobState{Pane: rules.PaneStranded, Drains: 2, DrainedAt: at, TTL: 5 * time.Second})
	if !strings.HasPrefix(first[0], "Drain it:") {
		t.Fatalf("never drained: %q", first)
	}
	for _, want := range []string{"drained 2 time(s), last at 2026-12-07 03:40:48Z", "stranded again", "within the TTL (5s)"} {
		if !strings.Contains(again[0], want) {
			t.Errorf("stranded again: %q lacks %q", again[0], want)
		}
	}
}

// The advice to drain warns of a failing handler by the one verdict every output gives (rules.HandlerNow): Event
// Grid's word where it has one — failing though the container, a TTL behind, has no recent dead letter; recovered
// though it has — and the container's where Event Grid is silent (issue 51, found by a fresh-eyes audit).
func TestTheDrainAdviceWarnsByTheOneVerdict(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	recent := &rules.Readiness{Subscription: "BLOB-DELETIONS", NewestDeadLetter: now.Add(-10 * time.Minute), Failing: true}
	old := &rules.Readiness{Subscription: "BLOB-DELETIONS", NewestDeadLetter: now.Add(-5 * time.Hour)}
	for _, c := range []struct {
		what    string
		ready   *rules.Readiness
		handler rules.HandlerVerdict
		want    string
	}{
		{"Event Grid says failing, the container quiet", old, rules.HandlerFailing, "But Event Grid says BLOB-DELETIONS's handler fails now"},
		{"Event Grid says failing, no dead letter at all", nil, rules.HandlerFailing, "But Event Grid says BLOB-DELETIONS's handler fails now"},
		{"the container says failing, Event Grid healthy since", recent, rules.HandlerHealthy, ""},
		{"the container says failing, Event Grid silent", recent, rules.HandlerUnknown, "But BLOB-DELETIONS dead-lettered 10m ago"},
		{"neither", old, rules.HandlerUnknown, ""},
	} {
		adv := Advice(BlobState{Pane: rules.PaneStranded, Readiness: c.ready, Handler: c.handler, Subscription: "BLOB-DELETIONS", Now: now, TTL: time.Hour})
		got := ""
		for _, l := range adv {
			if strings.HasPrefix(l, "But ") {
				got = l
			}
		}
		if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q", c.what, got)
		}
	}
}
