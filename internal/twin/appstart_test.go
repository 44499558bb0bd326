package twin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// A scale-out of three workers: each lists the container and re-uploads what it listed, each re-upload
// conditional on the ETag it listed — so every stranded blob is re-uploaded once, the two later workers lose
// every race, and no blob is triggered twice.
func TestWorkersStartingAtOnceReuploadEachBlobOnce(t *testing.T) {
	t.Parallel()
	tw, l := started(t, "incident")
	s, err := l.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	takes := Config().AppStartDrain(s.Items, s.Now).Takes()
	if takes < 10 {
		t.Fatalf("the incident opens on %d blobs a start would take", takes)
	}
	if err := tw.ChangeApp(AppChange{Kind: AppScaleOut, From: tw.offset(), Workers: 3}); err != nil {
		t.Fatal(err)
	}
	taken := map[string]bool{}
	for _, it := range s.Items {
		if Config().AppStartTakes(it, s.Now) {
			taken[it.Name] = true
		}
	}
	if _, err := tw.Advance(context.Background(), tw.Now()); err != nil {
		t.Fatal(err)
	}
	r := tw.State().Starts[len(tw.State().Starts)-1]
	if r.Kind != AppScaledOut || r.Workers != 3 || r.Reuploaded != takes || r.Raced != 2*takes {
		t.Fatalf("the scale-out: %+v (want %d re-uploaded, %d raced)", r, takes, 2*takes)
	}
	ran := map[string]int{} // (the re-uploads' triggers are due at once: the replay ran within the same instant)
	for _, r := range tw.State().Runs {
		if taken[r.Blob] && r.At.Equal(tw.Now()) {
			ran[r.Blob]++
		}
	}
	for name := range taken {
		if ran[name] != 1 {
			t.Errorf("%s: the replay ran %d time(s) on it at the start, want once (its one re-upload's trigger)", name, ran[name])
		}
	}
	s2, _ := l.List(context.Background())
	if n := Config().AppStartDrain(s2.Items, s2.Now).Takes(); n != 0 {
		t.Errorf("a second start just after would take %d: a re-upload dates the blob", n)
	}
	if ops := tw.OperatedStarts(); len(ops) != 2 {
		t.Errorf("the activity log holds %d starts after a scale-out, want the incident's 2: a scale-out is no operation", len(ops))
	}
	holds(t, tw, "after the scale-out")
}

// The Function App as script set changes it: a stop that ends starts the app then; a start ends a stop; a start
// of a running app, or a restart or scale-out of a stopped one, is refused; a scale-out is no operation (the
// activity log holds starts and restarts only).
func TestTheAppAsTheScriptChangesIt(t *testing.T) {
	t.Parallel()
	var s Script
	h := time.Hour
	if err := s.ApplyApp(AppChange{Kind: AppStop, From: h, To: 3 * h, Status: 503}); err != nil {
		t.Fatal(err)
	}
	if !s.AppDown(2*h) || s.AppDown(3*h) || len(s.Starts) != 1 || s.Starts[0].At != 3*h {
		t.Fatalf("stopped 1h–3h: down at 2h %v, at 3h %v, starts %+v", s.AppDown(2*h), s.AppDown(3*h), s.Starts)
	}
	if err := s.ApplyApp(AppChange{Kind: AppStartNow, From: 2 * h}); err != nil {
		t.Fatal(err)
	}
	if s.AppDown(2*h) || !s.AppDown(h) || len(s.Starts) != 1 || s.Starts[0].At != 2*h {
		t.Fatalf("started at 2h: down at 2h %v, starts %+v", s.AppDown(2*h), s.Starts)
	}
	for _, c := range []AppChange{{Kind: AppStartNow, From: 4 * h}, {Kind: AppRestart, From: h + h/2}, {Kind: AppScaleOut, From: h}, {Kind: "reboot", From: h}} {
		if err := s.ApplyApp(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if err := s.ApplyApp(AppChange{Kind: AppScaleOut, From: 4 * h, Workers: 2}); err != nil || s.Starts[1].Operated() {
		t.Errorf("scale-out: %v, %+v", err, s.Starts)
	}
	if err := s.check(); err != nil {
		t.Error(err)
	}
	// A stop around a scripted scale-out, or over part of another stop, is refused: a stopped app neither scales
	// out nor stops again.
	for _, c := range []AppChange{{Kind: AppStop, From: 3 * h, To: 5 * h, Status: 503}, {Kind: AppStop, From: h / 2, To: 3 * h / 2, Status: 503}} {
		if err := s.ApplyApp(c); err == nil {
			t.Errorf("%+v accepted over %+v and %+v", c, s.Windows, s.Starts)
		}
	}
	if err := s.ApplyApp(AppChange{Kind: AppStop, From: 5 * h, To: 6 * h, Status: 503}); err != nil || len(s.Starts) != 3 {
		t.Errorf("a stop after the scale-out: %v, starts %+v", err, s.Starts)
	}
	s.Starts = append(s.Starts, AppStart{At: h, Kind: AppStarted, Workers: 1})
	if err := s.check(); err == nil || !strings.Contains(err.Error(), "before the start listed before it") {
		t.Errorf("starts out of order: %v", err)
	}
}

// A start whose listing fails re-uploads nothing and leaves every blob to the next start (the hook never
// rejects); the next start takes them.
func TestAStartWhoseListingFailsLeavesTheBlobs(t *testing.T) {
	t.Parallel()
	tw, l := started(t, "incident")
	r := tw.State().Starts
	if len(r) != 2 || !r[1].ListingFailed || r[1].Reuploaded != 0 || r[0].ListingFailed {
		t.Fatalf("the incident's starts: %+v", r)
	}
	if err := tw.ChangeApp(AppChange{Kind: AppRestart, From: tw.offset()}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Advance(context.Background(), tw.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	s, _ := l.List(context.Background())
	if n := s.Count()[rules.PaneStranded]; n != 0 {
		for _, it := range s.Items {
			if it.Pane == rules.PaneStranded && (it.Summary == nil || it.Summary.CrashDepth == 0) {
				t.Errorf("%s stranded a minute after a restart", it.Name)
			}
		}
	}
	if ops := tw.OperatedStarts(); len(ops) != 3 {
		t.Errorf("the activity log's starts: %v", ops)
	}
}

// Probation is Event Grid skipping attempts, not the handler's answer: a twin of a container whose newest dead
// letter of a failing subscription ended in Probation fails it as 503 Busy, not with a status-less "Probation".
func TestInferTakesNoProbationForAHandlersAnswer(t *testing.T) {
	t.Parallel()
	ready := []rules.Readiness{{Subscription: "PUSH-NOTIFICATIONS", Failing: true}}
	s := Infer([]string{"PUSH-NOTIFICATIONS"}, ready, rules.WitnessReport{}, map[string]Failure{"PUSH-NOTIFICATIONS": {Outcome: "Probation"}})
	if len(s.Windows) != 1 || s.Windows[0].Status != 503 || s.Windows[0].Outcome != "Busy" {
		t.Fatalf("inferred %+v", s.Windows)
	}
}

// The replay's republished events carry an eventTime: the publisher stamps the send time on an event the replay
// sends without one.
func TestRepublishedEventsCarryAnEventTime(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	l, err := store.ListAll(context.Background(), tw.dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, bi := range l.Blobs {
		b, err := tw.dir.Read(context.Background(), bi.Name, store.MaxBlobBytes)
		if err != nil {
			t.Fatal(err)
		}
		var evs []struct {
			ID        string `json:"id"`
			EventTime string `json:"eventTime"`
		}
		if json.Unmarshal(b.Body, &evs) != nil {
			continue
		}
		for _, e := range evs {
			if strings.Contains(e.ID, "|") {
				seen++
				if _, err := time.Parse(time.RFC3339, e.EventTime); err != nil {
					t.Errorf("%s in %s: eventTime %q", e.ID, bi.Name, e.EventTime)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no republished event in the incident")
	}
}
