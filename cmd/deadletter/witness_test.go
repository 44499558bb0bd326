package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/session"

	"github.com/deadletter/deadletter/internal/testkit"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/spf13/pflag"
)

const (
	egTopic = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/estate/providers/Microsoft.EventGrid/topics/estate-events"
	egOther = "/subscriptions/00000000-0000-0000-0000-000000000002/resourceGroups/estate/providers/Microsoft.EventGrid/topics/partner"
	egSys   = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/estate/providers/Microsoft.EventGrid/systemTopics/estate-storage"
)

// The witness's keys: event-grid-topics as a list (or one ID), replay-system-topic, witness-window, each set on
// its flag; a resource ID that is not an Event Grid topic is said with its line.
func TestWitnessContextKeys(t *testing.T) {
	t.Parallel()
	p := writeConfig(t, "contexts:\n  - name: prod\n    account-url: https://estate.blob.core.windows.net\n    event-grid-topics:\n      - "+egTopic+
		"\n      - "+egOther+"\n    replay-system-topic: "+egSys+"\n    witness-window: 30m\n  - name: dev\n    connection-string-env: DL_TEST_NOT_SET\n    event-grid-topics: "+egTopic+"\n")
	cf, err := readConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	a := newFactory(stdio{})
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	a.globalFlags(fs)
	if _, err := applyContext(fs, cf.Find("prod")); err != nil {
		t.Fatal(err)
	}
	g := a.g
	if len(g.eventGridTopics) != 2 || g.eventGridTopics[0] != egTopic || g.eventGridTopics[1] != egOther || g.replaySystemTopic != egSys || g.witnessWindow != 30*time.Minute {
		t.Errorf("flags from the context: %q %q %s", g.eventGridTopics, g.replaySystemTopic, g.witnessWindow)
	}
	if v := cf.Find("dev").Values["event-grid-topics"]; v != egTopic {
		t.Errorf("one topic as a scalar: %q", v)
	}
	for _, tc := range []struct{ body, want string }{
		{"event-grid-topics:\n      - estate-events\n", ":5: event-grid-topics: \"estate-events\" is not an Azure resource ID"},
		{"replay-system-topic: /subscriptions/x/resourceGroups/r/providers/Microsoft.Storage/storageAccounts/s\n", ":4: replay-system-topic:"},
		{"event-grid-topics:\n      - [a]\n", ":5: event-grid-topics: want a list"},
		{"function-app: " + egTopic + "\n", ":4: function-app: \"" + egTopic + "\" is a Microsoft.EventGrid/topics, not a Function App"},
	} {
		cf, err := readConfig(writeConfig(t, "contexts:\n  - name: a\n    dir: /tmp\n    "+tc.body))
		if err == nil && cf.Find("a") != nil {
			err = cf.Find("a").Err // a wrong context is its own error: it stops only the commands that use it
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.body, err, tc.want)
		}
	}
}

// A context in by connection string (or a directory) has no ARM token: its witness says so, it never guesses.
func TestWitnessNeedsEntraID(t *testing.T) {
	t.Parallel()
	g := newFactory(stdio{}).g
	g.dir = t.TempDir()
	s, err := session.Open(g.spec(""))
	if err != nil {
		t.Fatal(err)
	}
	if s.Witness() != nil {
		t.Error("a witness with no topic named")
	}
	g.dir, g.connString, g.eventGridTopics = "", "UseDevelopmentStorage=true", []string{egTopic}
	if s, err = session.Open(g.spec("")); err != nil {
		t.Fatal(err)
	}
	rep := s.ReadWitness(context.Background(), time.Now())
	if !strings.Contains(rep.None, "no Event Grid witness: needs Entra ID") || len(rep.Handlers) != 0 {
		t.Errorf("connection-string witness: %+v", rep)
	}
}

// fixedWitness answers the same report every time.
type fixedWitness rules.WitnessReport

func (f fixedWitness) Witness(context.Context, time.Time) rules.WitnessReport {
	return rules.WitnessReport(f)
}

// witnessSaying is a witness that says PUSH-NOTIFICATIONS' handler is failing now (as Event Grid's metric names
// it: lower case), WEBHOOKS' healthy, and that the replay's triggers are being dropped.
func witnessSaying(asOf time.Time) fixedWitness {
	return fixedWitness{Source: "test", AsOf: asOf, Window: 15 * time.Minute,
		Handlers: []rules.HandlerHealth{
			{Subscription: "push-notifications", Verdict: rules.HandlerFailing, Failed: 9, FailedBy: map[string]int64{"Busy": 9}, LastFailure: asOf.Add(-time.Minute)},
			{Subscription: "webhooks", Verdict: rules.HandlerHealthy, Succeeded: 40}},
		Replay: []rules.HandlerHealth{{Subscription: "replay", Verdict: rules.HandlerFailing, Dropped: 3}}}
}

// runWithWitness runs the command line in process with a witness in its context.
func runWithWitness(t *testing.T, w rules.Witness, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(withWitness(context.Background(), w), args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	return out.String(), errb.String(), code
}

// drain --dry-run says both witnesses, each named, and warns of the subscription Event Grid says is failing now
// (matched to its capitalised folder); the JSON's readiness carries the verdict beside the container's.
func TestDrainSaysEventGridWitness(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	w := witnessSaying(time.Now().UTC().Truncate(time.Minute))
	_, errs, code := runWithWitness(t, w, "drain", "--dry-run", "--dir", dir)
	if code != 0 { // (the seed's handled blobs are passed by)
		t.Fatalf("exit %d\n%s", code, errs)
	}
	for _, want := range []string{"Last dead letter:", "Event Grid, in the 15m to ", "PUSH-NOTIFICATIONS failing", "WEBHOOKS ok", "no word on FRIEND-REQUESTS, THREAD-REPLIES",
		"warning: PUSH-NOTIFICATIONS: Event Grid says its handler is failing now: 9 failed attempt(s) (Busy 9), none delivered"} {
		if !strings.Contains(errs, want) {
			t.Errorf("drain's question lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, "WEBHOOKS: Event Grid says") {
		t.Errorf("a healthy handler warned of:\n%s", errs)
	}
	out, errs, code := runWithWitness(t, w, "drain", "--dry-run", "--json", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var res output.ResultsJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]string{}
	for _, r := range res.Readiness {
		if r.EventGrid == nil {
			t.Fatalf("%s has no eventGrid", r.Subscription)
		}
		verdicts[string(r.Subscription)] = r.EventGrid.Verdict
	}
	if verdicts["PUSH-NOTIFICATIONS"] != "failing" || verdicts["WEBHOOKS"] != "healthy" || verdicts["FRIEND-REQUESTS"] != "unknown" {
		t.Errorf("verdicts: %v", verdicts)
	}
	// One verdict per row, from both witnesses, naming the one that decided: never failing: false beside an
	// Event Grid verdict of failing with nothing to say which to believe.
	for _, r := range res.Readiness {
		want, by := "", ""
		switch sub := string(r.Subscription); {
		case sub == "PUSH-NOTIFICATIONS":
			want, by = "failing", "eventGrid"
		case sub == "WEBHOOKS" && !r.Container.Failing:
			want, by = "healthy", "eventGrid"
		case sub == "WEBHOOKS":
			want, by = "recovered", "eventGrid"
		case r.Container.Failing:
			want, by = "failing", "container"
		default:
			want, by = "quiet", "container"
		}
		if r.Verdict != want || r.VerdictBy != by || r.Container.Failing != r.Failing || r.Container.LastHour != r.LastHour {
			t.Errorf("%s: verdict %s by %s, container %+v; want %s by %s", r.Subscription, r.Verdict, r.VerdictBy, r.Container, want, by)
		}
	}
	if res.EventGrid == nil || res.EventGrid.AsOf == "" || len(res.EventGrid.ReplayDropped) != 1 || res.EventGrid.ReplayDropped[0].Dropped != 3 {
		t.Errorf("eventGrid: %+v", res.EventGrid)
	}
	// no witness configured: the JSON stays as it was
	out = runExit(t, 0, "drain", "--dry-run", "--json", "--dir", dir)
	if strings.Contains(out, "eventGrid") {
		t.Errorf("eventGrid without a witness:\n%s", out)
	}
}

// check raises handlerFailing and replayDropping from Event Grid's witness, with the evidence per subscription;
// a witness that cannot be read raises nothing but is said.
func TestCheckWitnessFindings(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	w := witnessSaying(time.Now().UTC().Truncate(time.Minute))
	out, errs, code := runWithWitness(t, w, "check", "--json", "--dir", dir)
	if code != exitFindings {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var c output.CheckJSON
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	got := map[rules.FindingKind][]output.Text{}
	for _, f := range c.Findings {
		got[f.Kind] = f.Names
	}
	if n := got[rules.FindingHandlerFailing]; len(n) != 1 || n[0] != "push-notifications" {
		t.Errorf("handlerFailing: %v", n)
	}
	if n := got[rules.FindingReplayDropping]; len(n) != 1 || n[0] != "replay" {
		t.Errorf("replayDropping: %v", n)
	}
	if c.EventGrid == nil || len(c.EventGrid.Handlers) != 2 {
		t.Errorf("eventGrid: %+v", c.EventGrid)
	}
	out, _, _ = runWithWitness(t, w, "check", "--dir", dir)
	for _, want := range []string{"handlerFailing", "push-notifications: Event Grid says its handler is failing now: 9 failed attempt(s) (Busy 9)",
		"replayDropping", "replay: Event Grid dropped 3 trigger(s) of the replay"} {
		if !strings.Contains(out, want) {
			t.Errorf("check lacks %q:\n%s", want, out)
		}
	}
	refused := fixedWitness{Source: "test", AsOf: time.Now(), Window: 15 * time.Minute, Problems: []rules.WitnessProblem{{Topic: egTopic, Status: 403, Err: "AuthorizationFailed"}}}
	out, _, _ = runWithWitness(t, refused, "check", "--dir", dir)
	if strings.Contains(out, "handlerFailing") || !strings.Contains(out, "Event Grid witness unknown: estate-events: refused (403 AuthorizationFailed)") {
		t.Errorf("a refused witness:\n%s", out)
	}
}

// report --format json carries the witness's findings and its verdict beside each subscription's readiness.
func TestReportSaysEventGridWitness(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	out, errs, code := runWithWitness(t, witnessSaying(time.Now().UTC().Truncate(time.Minute)), "report", "--format", "json", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var r output.ReportJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	kinds := map[rules.FindingKind]bool{}
	for _, f := range r.Findings {
		kinds[f.Kind] = true
	}
	if !kinds[rules.FindingHandlerFailing] || !kinds[rules.FindingReplayDropping] || r.Healthy || r.EventGrid == nil {
		t.Errorf("findings %v, healthy %v, eventGrid %+v", kinds, r.Healthy, r.EventGrid)
	}
	for _, rd := range r.Readiness {
		if rd.Subscription == "PUSH-NOTIFICATIONS" && (rd.EventGrid == nil || rd.EventGrid.Verdict != "failing") {
			t.Errorf("PUSH-NOTIFICATIONS readiness: %+v", rd)
		}
	}
}

// switchWitness says failing until recovered is set.
type switchWitness struct {
	failing   fixedWitness
	recovered atomic.Bool
}

func (s *switchWitness) Witness(ctx context.Context, now time.Time) rules.WitnessReport {
	if s.recovered.Load() {
		return rules.WitnessReport{Source: "test", AsOf: now.Truncate(time.Minute), Window: 15 * time.Minute}
	}
	return s.failing.Witness(ctx, now)
}

// watch says a handler failing as a change of state, and its recovery as resolved — the broker's word, pass by pass.
func TestWatchSaysHandlerFailingAndRecovered(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	w := &switchWitness{failing: witnessSaying(time.Now().UTC().Truncate(time.Minute))}
	ctx, cancel := context.WithCancel(withWitness(context.Background(), w))
	out := &testkit.LockedBuffer{}
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"watch", "--dir", dir, "--interval", "100ms"}, stdio{in: strings.NewReader(""), out: out, err: out})
	}()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), "no longer handlerFailing"); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(out.String(), "1 subscription(s) failing now (Event Grid): push-notifications") {
			w.recovered.Store(true)
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("watch never said the handler failing, then recovered:\n%s", out.String())
		}
	}
	cancel()
	<-done
	if !strings.Contains(out.String(), "replay subscription(s) dropping triggers (Event Grid): replay") {
		t.Errorf("no replayDropping line:\n%s", out.String())
	}
}

// restore's question warns of the subscriptions Event Grid says are failing now whose events the copies resume —
// and of no other.
func TestRestoreSaysEventGridWitness(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	w := witnessSaying(time.Now().UTC().Truncate(time.Minute))
	_, errs, code := runWithWitness(t, w, "restore", "--all", "--dry-run", "--dir", dir)
	if code != exitNotDone { // the seed's refused copies are left
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, "warning: PUSH-NOTIFICATIONS: Event Grid says its handler is failing now: 9 failed attempt(s) (Busy 9)") ||
		!strings.Contains(errs, "restored events would go to a handler that is failing now") {
		t.Errorf("restore's question lacks the failing handler:\n%s", errs)
	}
	if strings.Contains(errs, "WEBHOOKS: Event Grid says") {
		t.Errorf("a healthy handler (whose copy resumes nothing) warned of:\n%s", errs)
	}
	out, _, _ := runWithWitness(t, w, "restore", "--all", "--dry-run", "--json", "--dir", dir)
	var res output.ResultsJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Warnings) != 1 || !strings.Contains(string(res.Warnings[0]), "PUSH-NOTIFICATIONS: Event Grid says its handler is failing now") {
		t.Errorf("restore --json's warnings: %v %v\n%s", res.Warnings, err, out)
	}
	// named, --json --yes (no preview is read): the warnings still come, from what resumed
	var push string
	for _, b := range lsJSONOf(t, "--dir", dir, "--pane", "quarantine").Blobs {
		if n := b["name"].(string); strings.Contains(n, "PUSH-NOTIFICATIONS") {
			var d struct {
				Restore map[string]any `json:"restore"`
			}
			json.Unmarshal([]byte(mustRun(t, "show", n, "--json", "--dir", dir)), &d)
			if r, _ := d.Restore["resume"].([]any); len(r) > 0 {
				push = n
			}
		}
	}
	if push == "" {
		t.Fatal("the seed has no PUSH-NOTIFICATIONS copy that resumes")
	}
	out, _, _ = runWithWitness(t, w, "restore", push, "--dry-run", "--json", "--yes", "--dir", dir)
	res = output.ResultsJSON{}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Warnings) != 1 {
		t.Errorf("restore NAME --json --yes's warnings: %v %v\n%s", res.Warnings, err, out)
	}
	if _, errs, _ = runWithWitness(t, nil, "restore", "--all", "--dry-run", "--dir", dir); strings.Contains(errs, "Event Grid") {
		t.Errorf("Event Grid said without a witness:\n%s", errs)
	}
}
