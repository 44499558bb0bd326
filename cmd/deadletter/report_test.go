package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/replay/rules"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store/storetest"
)

var reportNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// reportOf is the report of the seeded incident at a pinned service time, after a drain and a restore, so the
// actions section has something to say.
func reportOf(t *testing.T) (output.ReportJSON, *rules.Snapshot, *replay.Loader) {
	t.Helper()
	ctx := context.Background()
	mem := storetest.NewMem(reportNow)
	cfg := rules.DefaultConfig()
	if _, err := scenario.Seed(ctx, mem, scenario.SeedOptions{Count: 40, Seed: 7, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	cfg.Handlers = scenario.IncidentRegister
	l := replay.NewLoader(mem, cfg)
	snap, _ := l.List(ctx)
	targets := cfg.DrainTargets(snap)
	if _, err := replay.Drain(ctx, mem, cfg, targets[:3], rules.DrainOptions{}); err != nil {
		t.Fatal(err)
	}
	var q []string
	for _, it := range snap.InPane(rules.PaneQuarantine) {
		q = append(q, it.Name)
	}
	replay.Restore(ctx, mem, cfg, q[:2], replay.RestoreOptions{Force: true})
	tally, err := tallyReport(ctx, l, &reportOptions{since: 72 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	snap, _ = l.List(ctx)
	return tally.report(cfg, snap.Container), snap, l
}

// withRecord puts the record of reportOf's actions in a report, as runReport does: a drain and a restore by one
// operator, and an ack by another, at fixed times, local only.
func withRecord(t *testing.T, r *output.ReportJSON, snap *rules.Snapshot, l *replay.Loader) {
	t.Helper()
	var drained, restored []record.Blob
	for _, it := range snap.Items {
		if _, ok := blob.MetaGet(it.Metadata, rules.MetaDrainCount); ok {
			drained = append(drained, record.Blob{Name: it.Name, ETag: `"before"`, ETagAfter: it.ETag, Outcome: "drained"})
		}
		if from, ok := blob.MetaGet(it.Metadata, rules.MetaRestoredFrom); ok {
			restored = append(restored, record.Blob{Name: from, ETag: `"q"`, Target: it.Name, ETagAfter: it.ETag, Outcome: "restored"})
		}
	}
	at := func(m int) time.Time { return reportNow.Add(time.Duration(m-30) * time.Minute) }
	rec := func(id, action, user string, m int, blobs []record.Blob) record.Record {
		svc := at(m)
		in := record.Line{V: 1, ID: id, Phase: record.PhaseIntent, Action: action, Wall: at(m), Service: &svc,
			Who: record.Who{User: user, Host: "laptop"}, Estate: record.EstateOf("", snap.Container), Via: "deadletter " + action + " --yes", Blobs: blobs}
		out := in
		out.Phase = record.PhaseOutcome
		return record.Record{Intent: in, Outcome: &out}
	}
	ack := []record.Blob{{Name: drained[0].Name, ETag: drained[0].ETagAfter, ETagAfter: drained[0].ETagAfter, Outcome: "acked"}}
	h := history{Local: "/home/oncall/.local/state/deadletter/record", Records: []record.Record{
		rec("c3", record.ActAck, "bob", 3, ack), rec("b2", record.ActRestore, "alice", 2, restored), rec("a1", record.ActDrain, "alice", 1, drained)}}
	r.Record = toReportRecord(context.Background(), l, snap, h, record.Who{User: "alice", Host: "laptop"})
}

func TestReportMarkdown(t *testing.T) {
	t.Parallel()
	r, snap, l := reportOf(t)
	withRecord(t, &r, snap, l)
	var b bytes.Buffer
	output.WriteMarkdown(&b, r)
	golden.RequireEqual(t, b.Bytes())
	again, snap, l := reportOf(t)
	withRecord(t, &again, snap, l)
	var b2 bytes.Buffer
	output.WriteMarkdown(&b2, again)
	if b.String() != b2.String() {
		t.Fatal("the report is not deterministic for one container and service time")
	}
}

// The JSON report, field by field, and its totals agree with what ls and check say of the same snapshot.
func TestReportJSON(t *testing.T) {
	t.Parallel()
	r, snap, l := reportOf(t)
	cfg := l.Config
	var out bytes.Buffer
	output.WriteJSON(&out, r)
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	want := []string{"appStart", "blobs", "burstStart", "container", "counts", "drains", "events", "eventsBeforeWindow", "findings", "handled", "healthy", "loss", "now",
		"readiness", "restores", "since", "subscriptions", "timeline", "unread", "unreadable", "windowHours"}
	if got := keys(m); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("report fields %v, want %v", got, want)
	}
	if m["now"] != "2026-11-30T12:00:00Z" || m["since"] != "2026-11-27T13:00:00Z" || m["windowHours"].(float64) != 72 {
		t.Fatalf("clock: %v %v %v", m["now"], m["since"], m["windowHours"])
	}
	tl := m["timeline"].([]any)
	if len(tl) != 72 {
		t.Fatalf("%d hours", len(tl))
	}
	// Every event counted once: the timeline plus what falls before it is every event the report read.
	sum := int(m["eventsBeforeWindow"].(float64))
	for _, h := range tl {
		hm := h.(map[string]any)
		n := 0
		for _, v := range hm["bySubscription"].(map[string]any) {
			n += int(v.(float64))
		}
		if n != int(hm["events"].(float64)) {
			t.Fatalf("hour %v: %d by subscription, %v in all", hm["hour"], n, hm["events"])
		}
		sum += n
	}
	if sum != int(m["events"].(float64)) {
		t.Fatalf("timeline %d, events %v", sum, m["events"])
	}
	// …and equal to the EVS column over every blob the table lists (handled roots count through their copy; a
	// payload that does not parse, EVS 0, counts one dead letter).
	evs := 0
	for i := range snap.Items {
		if it := snap.Items[i]; it.Summary != nil && !cfg.AlertsOf(it, snap.Now).Handled {
			evs += max(it.Summary.Events, 1)
		}
	}
	if evs != sum {
		t.Fatalf("the table's events %d, the timeline's %d", evs, sum)
	}
	if len(m["drains"].([]any)) != 3 || len(m["restores"].([]any)) != 2 {
		t.Fatalf("actions: %v %v", m["drains"], m["restores"])
	}
	d := m["drains"].([]any)[0].(map[string]any)
	if d["drainCount"] != "1" || d["drainedAt"] == "" {
		t.Fatalf("drain %v", d)
	}
	for _, l := range m["loss"].([]any) {
		lm := l.(map[string]any)
		if lm["withinHours"] != 24.0 && lm["withinHours"] != 72.0 {
			t.Fatalf("loss %v", lm)
		}
	}
	s0 := m["subscriptions"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "events", "reasons", "fates"} {
		if _, ok := s0[k]; !ok {
			t.Fatalf("subscription lacks %s: %v", k, s0)
		}
	}
	found := map[string]bool{}
	for _, f := range m["findings"].([]any) {
		found[f.(map[string]any)["kind"].(string)] = true
	}
	for _, k := range []string{"stranded", "expiring", "quarantine", "malformed", "crash"} {
		if !found[k] {
			t.Errorf("no %s finding in %v", k, found)
		}
	}
}

// Through the binary: report runs on a directory in both formats.
func TestReportCommand(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	out := mustRun(t, "report", "--dir", dir)
	for _, want := range []string{"# Dead-letter incident report", "## Timeline", "## Loss horizon", "## Findings", "stranded"} {
		if !strings.Contains(out, want) {
			t.Fatalf("report lacks %q:\n%s", want, out)
		}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, "report", "--dir", dir, "--format", "json", "--since", "1d")), &m); err != nil || m["windowHours"].(float64) != 24 {
		t.Fatalf("json: %v %v", err, m["windowHours"])
	}
	if _, errs, code := runCmd(t, "report", "--dir", dir, "--format", "html"); code != 2 || !strings.Contains(errs, "md or json") {
		t.Fatalf("%d %s", code, errs)
	}
}

// An empty container's report is dated by the clock, not year 1.
func TestReportOfAnEmptyContainer(t *testing.T) {
	t.Parallel()
	out, errs, code := runCmd(t, "report", "--dir", t.TempDir(), "--format", "json")
	var r struct{ Now string }
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || !strings.HasPrefix(r.Now, time.Now().UTC().Format("2006-")) {
		t.Fatalf("exit %d %s %s", code, out, errs)
	}
}

// A name holding a backtick is shown as itself in the Markdown report — a code span CommonMark cannot end early —
// never as a name with a quote in its place, which does not exist.
func TestMarkdownSpanKeepsBackticks(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"A/x`y.json": "``A/x`y.json``", "`start": "`` `start ``", "plain": "`plain`", "a``b": "```a``b```"} {
		if got := output.MdSpan(in); got != want {
			t.Errorf("mdSpan(%q) = %q, want %q", in, got, want)
		}
	}
}
