package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/spf13/cobra"
)

type reportOptions struct {
	f     *factory
	since time.Duration
	out   *printFlags
	monitorFlags
}

func newCmdReport(f *factory, runF func(context.Context, *reportOptions) error) *cobra.Command {
	o := &reportOptions{f: f, since: 72 * time.Hour}
	cmd := &cobra.Command{
		Use:   "report [--since D] [--format md|json]",
		Short: "the incident as a report for the postmortem: timeline, reasons, fates, loss horizon, findings, actions taken",
		Example: `  deadletter report --since 24h > postmortem.md
  deadletter report --format json | jq '.readiness'`,
		Annotations: lookingAtAnEstate(),
		Long: `report reads the whole container and writes the incident picture the dashboard's overview draws — when dead
letters started (an hourly timeline over --since, the burst marked), which subscriptions and reasons, what the
replay will do with the waiting events, what the lifecycle rule deletes within 24h and 72h — with the findings
and the actions taken: from the record (deadletter log: every drain, restore, ack and edit, by whom, and what
became of each blob; it says when the record is local only), and what blob metadata still shows (drainCount,
drainedAt, the restored copies). It is deterministic for a given container, record and service time: Markdown for
a postmortem, or JSON.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWith(runF, runReport)(cmd.Context(), o) },
	}
	durationVar(cmd.Flags(), &o.since, "since", "how far back the timeline reaches")
	o.out = declareOutput(cmd, outMD, outJSON)
	o.out.aliasFormat(cmd, "format")
	o.monitorFlags.register(cmd)
	return cmd
}

func runReport(ctx context.Context, o *reportOptions) error {
	a := o.f
	if o.since < time.Hour {
		return usagef("--since must be at least an hour (the timeline is hourly)")
	}
	ctx, cancel := a.withTimeout(ctx, 0)
	defer cancel()
	s, err := a.session(ctx, a.timeout(0))
	if err != nil {
		return err
	}
	witness := s.StartWitness(ctx) // beside the listing
	l, cfg := s.Loader(), s.Config()
	l.NoCache = true // one look: a cache of every summary would hold the container the report streams past
	t, err := tallyReport(ctx, l, o)
	if err != nil {
		return couldNotLook(ctx, err)
	}
	rep := t.report(cfg, l.Container.Describe())
	addWitness(&rep, cfg, t, witness())
	// A record that cannot be read (a hostile or cut line, an audit container refused) is said in the report, whose
	// other sections stand on the container alone.
	if h, err := s.History(ctx); err != nil {
		rep.Record = &output.ReportRecordJSON{Error: output.OptText(err.Error()), Actions: []output.LogRecordJSON{}}
	} else {
		// Following the record's blobs and their events needs the listing (where each is now, by name): it is
		// listed once more only when there is a record to follow. Its payloads are not kept from the first pass,
		// so tracing the record's events reads them again (time traded for the bound: docs/performance.md).
		snap := rules.NewSnapshot(l.Container.Describe())
		if len(h.Records) > 0 {
			if snap, err = s.List(ctx); err != nil {
				return couldNotLook(ctx, err)
			}
		}
		rep.Record = toReportRecord(ctx, l, snap, h, s.Who())
	}
	rep.Rehearsal = s.Rehearsal()
	return o.out.print(a.io.out, rep, func() { output.WriteMarkdown(a.io.out, rep) })
}

// reportTally is what a report adds up as it streams the container, page by page — the check, the picture, each
// subscription's readiness, and the blobs whose metadata tells of a drain or a restore — so a report of a million
// blobs holds tallies and the names its findings give, never the listing or its payloads' summaries.
type reportTally struct {
	chk      *rules.Checker
	pic      *rules.PictureBuilder
	ready    *rules.ReadinessBuilder
	blobs    int
	now      time.Time // the latest service time a page was listed at
	drains   []output.DrainJSON
	restores []output.RestoredJSON
}

// tallyReport streams the container into a reportTally, every payload read (the archived copies' too: the
// picture counts every event once).
func tallyReport(ctx context.Context, l *replay.Loader, o *reportOptions) (*reportTally, error) {
	twins, err := l.Twins(ctx)
	if err != nil {
		return nil, err
	}
	cfg := l.Config
	t := &reportTally{chk: cfg.NewChecker(rules.CheckOptions{MaxQuarantine: o.maxQuarantine, Names: true}),
		pic: cfg.NewPictureBuilder(rules.PictureOptions{Window: o.since}), ready: cfg.NewReadinessBuilder()}
	err = l.Stream(ctx, func(items []rules.Item, now time.Time) error {
		twins.Mark(items)
		hydrate(ctx, l, items, nil)
		if err := ctx.Err(); err != nil {
			return err // (stopped mid-page: no report of part of the container)
		}
		t.chk.Add(items, now)
		t.pic.Add(items, now)
		t.ready.Add(items, now)
		t.blobs += len(items)
		if now.After(t.now) {
			t.now = now
		}
		for i := range items {
			it := &items[i]
			m := rules.MarksOf(it.Metadata)
			if m.Drained() {
				t.drains = append(t.drains, output.DrainJSON{Name: output.Text(it.Name), DrainCount: output.Text(m.DrainCount), DrainedAt: output.Text(m.DrainedAt)})
			}
			if m.Restored() {
				t.restores = append(t.restores, output.RestoredJSON{Name: output.Text(it.Name), From: output.Text(m.RestoredFrom)})
			}
		}
		return nil
	})
	return t, err
}

// addWitness adds Event Grid's witness to a report: its findings, its verdict beside each subscription's
// readiness, and what it read (nothing changes without one).
func addWitness(r *output.ReportJSON, cfg rules.Config, t *reportTally, w rules.WitnessReport) {
	if !present.HasWitness(w) {
		return
	}
	var chk rules.Report
	chk.AddWitness(w)
	for _, f := range chk.Findings {
		r.Findings = append(r.Findings, output.ToFindingJSON(f, output.Text(present.FindingMessage(f, cfg, t.now))))
		r.Healthy = false
	}
	r.Readiness = output.ToReadinessJSON(t.ready.Readiness(), w)
	r.EventGrid = output.ToEventGridJSON(w)
}

// report lays the tallies out as the report's JSON (the Markdown is written from it).
func (t *reportTally) report(cfg rules.Config, container string) output.ReportJSON {
	p := t.pic.Picture()
	chk := t.chk.Report()
	cj := output.ToCheckJSON(cfg, chk)
	r := output.ReportJSON{Container: output.Text(container), Now: output.RFC3339(p.Now), Since: output.RFC3339(p.Hours[0]), WindowHours: len(p.Hours),
		Counts: chk.Counts, Blobs: t.blobs, Handled: chk.Handled, Events: p.Events, Unread: p.Unread, Unreadable: chk.Unreadable, FirstUnreadable: output.Text(chk.FirstUnreadable), Before: p.Before, Healthy: chk.Healthy, Findings: cj.Findings, AppStart: cj.AppStart,
		Timeline: []output.HourJSON{}, Subscriptions: []output.SubscriptionJSON{}, Loss: []output.LossJSON{}, Drains: []output.DrainJSON{}, Restores: []output.RestoredJSON{}}
	if !p.BurstStart.IsZero() {
		s := output.RFC3339(p.BurstStart)
		r.BurstStart = &s
	}
	for h, t := range p.Hours {
		hj := output.HourJSON{Hour: output.RFC3339(t), Events: p.HourTotal(h), BySubscription: map[string]int{}}
		for s, n := range p.Timeline[h] {
			if n > 0 {
				hj.BySubscription[p.Subscriptions[s]] = n
			}
		}
		r.Timeline = append(r.Timeline, hj)
	}
	for s, name := range p.Subscriptions {
		sj := output.SubscriptionJSON{Name: output.Text(name), Events: p.Totals[s], Reasons: []output.ReasonJSON{}, Fates: map[string]int{}}
		for ri, reason := range p.Reasons {
			if c := p.Matrix[s][ri]; c.Events > 0 {
				sj.Reasons = append(sj.Reasons, output.ReasonJSON{Reason: output.Text(reason), Events: c.Events, Outcome: output.Text(c.Outcome)})
			}
		}
		for _, f := range rules.AllFates {
			if n := p.Fates[s][f]; n > 0 {
				sj.Fates[f.String()] = n
			}
		}
		r.Subscriptions = append(r.Subscriptions, sj)
	}
	for _, lo := range p.Loss {
		r.Loss = append(r.Loss, output.LossJSON{WithinHours: int(lo.Within.Hours()), Blobs: lo.Blobs, Events: lo.Events, Unread: lo.Unread})
	}
	r.Drains, r.Restores = append(r.Drains, t.drains...), append(r.Restores, t.restores...)
	slices.SortFunc(r.Drains, func(a, b output.DrainJSON) int { return strings.Compare(string(a.Name), string(b.Name)) })
	slices.SortFunc(r.Restores, func(a, b output.RestoredJSON) int { return strings.Compare(string(a.Name), string(b.Name)) })
	r.Readiness = output.ToReadinessJSON(t.ready.Readiness(), rules.WitnessReport{})
	return r
}
