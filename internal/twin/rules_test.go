package twin

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// The twin runs by the configuration it is given, not by constants of its own: with a 20-minute TTL every event
// whose time ran out was tried for less than 20 minutes (the default hour would allow seven attempts over 47
// minutes); with a 3-day lifecycle rule no blob older than 3 days is left, and the rule's deletions are counted.
// The rules survive the twin being closed and opened again.
func TestTheTwinFollowsItsConfig(t *testing.T) {
	t.Parallel()
	cfg := Config()
	cfg.TTL, cfg.Retention = 20*time.Minute, 3*24*time.Hour
	dir := t.TempDir()
	ctx := context.Background()
	tw, err := StartConfig(ctx, dir, made.Twin, "incident", 1, opens, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tw.Close()
	tw, err = Open(ctx, dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	if got := tw.Config(); got.TTL != cfg.TTL || got.Retention != cfg.Retention {
		t.Fatalf("reopened with TTL %s, retention %s; started with %s, %s", got.TTL, got.Retention, cfg.TTL, cfg.Retention)
	}
	if _, err := tw.Advance(ctx, tw.Now().Add(6*time.Hour)); err != nil {
		t.Fatal(err)
	}
	holds(t, tw, "after 6h")
	if tw.State().Totals.LifecycleDeleted == 0 {
		t.Fatal("a 3-day lifecycle rule deleted nothing of a month-long incident")
	}
	l, err := store.ListAll(ctx, tw.dir)
	if err != nil {
		t.Fatal(err)
	}
	expired := 0
	for _, bi := range l.Blobs {
		if !tw.Now().Before(bi.LastModified.Add(cfg.Retention)) {
			t.Errorf("%s: %s old, past the 3-day rule", bi.Name, tw.Now().Sub(bi.LastModified))
		}
		if isArchived(bi.Name) {
			continue
		}
		b, err := tw.dir.Read(ctx, bi.Name, store.MaxBlobBytes)
		if err != nil {
			t.Fatal(err)
		}
		var dls []deadLetter
		if json.Unmarshal(b.Body, &dls) != nil {
			continue
		}
		for _, dl := range dls {
			if dl.DeadLetterReason != "TimeToLiveExceeded" {
				continue
			}
			expired++
			pub, _ := time.Parse(time.RFC3339, dl.PublishTime)
			last, _ := time.Parse(time.RFC3339, dl.LastDeliveryAttemptTime)
			if tried := last.Sub(pub); tried >= cfg.TTL || dl.DeliveryAttempts > 6 {
				t.Fatalf("%s: tried for %s in %d attempts under a %s TTL", dl.ID, tried, dl.DeliveryAttempts, cfg.TTL)
			}
		}
	}
	if expired == 0 {
		t.Fatal("no event's time-to-live ran out: the test looked at nothing")
	}
}

// A twin of format 1 (before scripts and rules were kept) is upgraded as it is opened: its scenario's script and
// the default rules, written as format 2 at its next save; a newer format is refused, naming what to do.
func TestAnOlderTwinIsUpgradedANewerRefused(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	tw.Close()
	b, err := os.ReadFile(tw.place.File(stateFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	m["format"] = 1
	delete(m, "script")
	delete(m, "rules")
	old, _ := json.Marshal(m)
	writeState(t, tw, old)
	ctx := context.Background()
	up, err := Open(ctx, tw.root, "test")
	if err != nil {
		t.Fatalf("a format-1 twin: %v", err)
	}
	if up.Script().Name != "incident" || len(up.Script().Windows) == 0 || up.Config().TTL != time.Hour {
		t.Fatalf("upgraded to script %q (%d windows), TTL %s", up.Script().Name, len(up.Script().Windows), up.Config().TTL)
	}
	if _, err := up.Advance(ctx, up.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	up.Close()
	b, _ = os.ReadFile(tw.place.File(stateFile))
	json.Unmarshal(b, &m)
	if m["format"].(float64) != stateFormat || m["script"] == nil || m["rules"] == nil {
		t.Fatalf("saved again as format %v, script %v", m["format"], m["script"] != nil)
	}
	m["format"] = stateFormat + 1
	newer, _ := json.Marshal(m)
	writeState(t, tw, newer)
	if _, err := Open(ctx, tw.root, "test"); err == nil || !strings.Contains(err.Error(), "newer deadletter") || !strings.Contains(err.Error(), "upgrade") {
		t.Fatalf("a newer twin: %v", err)
	}
}

// One grammar edits a script: a subscription in any case, down with a status or up, over a stretch. Bringing one
// handler up inside a window of every handler leaves the others down; bringing it up part way cuts its window.
func TestScriptApply(t *testing.T) {
	t.Parallel()
	s, _ := ScriptOf("incident")
	h := time.Hour
	if _, err := s.Apply(Change{Who: "nope", From: 0, To: h}); err == nil || !strings.Contains(err.Error(), "webhooks") {
		t.Fatalf("an unknown subscription: %v (want the list)", err)
	}
	c, err := s.Apply(Change{Who: "WEBHOOKS", From: h / 2, To: UntilFurtherNotice})
	if err != nil || c.Who != "webhooks" {
		t.Fatalf("up: %v %q", err, c.Who)
	}
	if w := s.Down("webhooks", h/2); w != nil {
		t.Fatalf("webhooks still down inside the all-handlers window: %+v", w)
	}
	if w := s.Down("webhooks", h/4); w == nil {
		t.Fatal("webhooks up before --at")
	}
	if w := s.Down("friend-requests", h/2); w == nil {
		t.Fatal("bringing webhooks up brought friend-requests up too")
	}
	opened := s.Opens
	if w := s.Down("webhooks", opened); w != nil {
		t.Fatalf("webhooks down at the opening after being brought up until further notice: %+v", w)
	}
	if _, err := s.Apply(Change{Who: "Friend-Requests", Down: true, From: opened, To: opened + h, Status: 500}); err != nil {
		t.Fatal(err)
	}
	w := s.Down("friend-requests", opened+h/2)
	if w == nil || w.Status != 500 || w.Outcome != "InternalServerError" {
		t.Fatalf("friend-requests down with 500: %+v", w)
	}
	if s.Down("friend-requests", opened+h) != nil {
		t.Fatal("down past --until")
	}
	if _, err := s.Apply(Change{Who: "replay", Down: true, From: opened, To: UntilFurtherNotice, Status: 0}); err != nil {
		t.Fatal(err)
	}
	if w := s.Down(ReplayFunction, opened+100*24*h); w == nil || w.Outcome != "TimedOut" {
		t.Fatalf("the replay down until further notice: %+v", w)
	}
	if err := s.check(); err != nil {
		t.Fatalf("the edited script does not check: %v", err)
	}
}

// The inferred script: down until further notice exactly where the readiness says failing, unless Event Grid's
// metrics give a verdict, which wins; the replay running.
func TestInfer(t *testing.T) {
	t.Parallel()
	ready := []rules.Readiness{{Subscription: "WEBHOOKS", Failing: true, LastWindow: 2}, {Subscription: "FRIEND-REQUESTS"},
		{Subscription: "PUSH", Failing: true}}
	wit := rules.WitnessReport{Source: "test", Handlers: []rules.HandlerHealth{{Subscription: "push", Verdict: rules.HandlerHealthy},
		{Subscription: "friend-requests", Verdict: rules.HandlerFailing}}}
	for _, tc := range []struct {
		wit  rules.WitnessReport
		down []string
	}{{rules.WitnessReport{}, []string{"PUSH", "WEBHOOKS"}}, {wit, []string{"FRIEND-REQUESTS", "WEBHOOKS"}}} {
		s := Infer([]string{"FRIEND-REQUESTS", "PUSH", "WEBHOOKS"}, ready, tc.wit, nil)
		var down []string
		for _, w := range s.Windows {
			if w.To != UntilFurtherNotice || w.From != 0 {
				t.Fatalf("window %+v: want from the start until further notice", w)
			}
			down = append(down, w.Sub)
		}
		if strings.Join(down, ",") != strings.Join(tc.down, ",") {
			t.Errorf("witness %q: down %v, want %v", tc.wit.Source, down, tc.down)
		}
		if s.Down(ReplayFunction, 0) != nil || len(s.Subs) != 3 {
			t.Errorf("the replay down, or subscriptions %v", s.Subs)
		}
	}
	// A handler down fails as the evidence says: Event Grid's most counted error, else the newest dead letter's
	// last delivery, else 503 Busy.
	wit.Handlers[1].FailedBy = map[string]int64{"Busy": 1, "Unauthorized": 3}
	met := map[string]Failure{"WEBHOOKS": {Status: 404, Outcome: "NotFound"}, "FRIEND-REQUESTS": {Status: 500, Outcome: "InternalServerError"}}
	s := Infer([]string{"FRIEND-REQUESTS", "PUSH", "WEBHOOKS"}, ready, wit, met)
	for sub, want := range map[string]Failure{"FRIEND-REQUESTS": {401, "Unauthorized"}, "WEBHOOKS": {404, "NotFound"}} {
		if w := s.Down(sub, 0); w == nil || w.Status != want.Status || w.Outcome != want.Outcome {
			t.Errorf("%s down with %+v, want %+v", sub, w, want)
		}
	}
	// a dead letter's number that is no HTTP status is not taken as one: the word decides
	for _, c := range []int64{999, 42, -1} {
		f, ok := failureOf(rules.Event{LastDeliveryOutcome: "Forbidden", LastHTTPStatusCode: &c})
		if !ok || f.Status != 403 {
			t.Errorf("lastHttpStatusCode %d with Forbidden: %+v, want 403", c, f)
		}
	}
	// a word OutcomeOf made for another status reads back as that status
	wit.Handlers[1].FailedBy = map[string]int64{"HTTP502": 4}
	if w := Infer([]string{"FRIEND-REQUESTS"}, ready, wit, nil).Down("FRIEND-REQUESTS", 0); w == nil || w.Status != 502 || w.Outcome != "HTTP502" {
		t.Errorf("FRIEND-REQUESTS failing with HTTP502: %+v, want 502", w)
	}
	if w := Infer([]string{"PUSH"}, ready, rules.WitnessReport{}, nil).Down("PUSH", 0); w == nil || w.Status != 503 || w.Outcome != "Busy" {
		t.Errorf("PUSH with no evidence of how: %+v, want 503 Busy", w)
	}
}
