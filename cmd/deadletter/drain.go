package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/spf13/cobra"
)

type drainOptions struct {
	f *factory
	actionFlags
	includeHandled bool
	force          bool
	filter         blobFilter
	names          []string
	via            string
	rate           string
	canary         bool
	canaryWait     time.Duration
}

func newCmdDrain(f *factory, runF func(context.Context, *drainOptions) error) *cobra.Command {
	o := &drainOptions{f: f}
	cmd := &cobra.Command{
		Use:   "drain [NAME... | --filter QUERY]",
		Short: "re-upload stranded blobs (all, or the named ones) so the replay sees them",
		Example: `  deadletter drain --dry-run              # what it would do, and whether each handler still fails
  deadletter drain 6cfb4200 --yes
  deadletter drain --json --yes | jq '.readiness'`,
		Annotations: lookingAtAnEstate(),
		Long: `drain re-uploads each stranded blob's identical bytes, If-Match the ETag it read, so a fresh BlobCreated
reaches the replay function. With no names it takes every stranded blob; names may be full names, URLs, GUIDs
or unique fragments. Blobs the replay already handled (their archived/ copy exists, or a quarantine/ copy that
holds all their events) are skipped as handled: draining them would republish their events a second time — name
them and pass --include-handled to drain them anyway. Blobs the replay function crashes on (nested too deep to
serialize) are left as crash: a drain only makes it throw again — name one with --force to drain it anyway. A
drain of every stranded blob passes them by with a note (exit 0); a named one left so exits 3.`,
		ValidArgsFunction: f.completeNames(rules.IsRoot),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.names, o.via = args, via(cmd)
			return runWith(runF, runDrain)(cmd.Context(), o)
		},
	}
	o.register(cmd, true)
	cmd.Flags().BoolVar(&o.includeHandled, "include-handled", false, "also drain the named blobs the replay already handled (their events are republished again)")
	o.filter.queryFlag(cmd, "drain only the stranded blobs of")
	cmd.Flags().BoolVar(&o.force, "force", false, "also drain the named blobs the replay function crashes on (it throws on them again)")
	cmd.Flags().BoolVar(&o.canary, "canary", false, "drain one blob per subscription first, wait for its handler's fate (Event Grid's witness, else the container), then only the subscriptions whose canary was delivered")
	cmd.Flags().DurationVar(&o.canaryWait, "canary-wait", 90*time.Minute, "how long --canary waits for the canaries' word; the subscriptions still unheard are left stranded")
	cmd.Flags().StringVar(&o.rate, "rate", "", "pace the drain: N/s or N/m blobs; in waves of ten seconds, stopping a subscription whose handler Event Grid says fails again")
	return cmd
}

// check refuses what a drain of names cannot be asked.
func (o *drainOptions) check(names []string, readOnly bool) error {
	if err := o.validate(); err != nil {
		return err
	}
	if readOnly && !o.dryRun { // (a dry run changes nothing: read-only allows it)
		return replay.ErrReadOnly
	}
	if err := o.filter.validate(o.f); err != nil {
		return err
	}
	if _, err := parseRate(o.rate); err != nil {
		return err
	}
	switch {
	case o.filter.query != "" && len(names) > 0:
		return usagef("drain takes names or --filter, not both")
	case o.includeHandled && len(names) == 0:
		return usagef("--include-handled drains only blobs you name: a handled blob is republished a second time")
	case o.force && len(names) == 0:
		return usagef("--force drains only blobs you name: the replay function throws on a crash blob again")
	}
	return nil
}

func runDrain(ctx context.Context, o *drainOptions) error {
	a, names := o.f, o.names
	if err := o.check(names, a.g.readOnly); err != nil {
		return err
	}
	// A drain of every stranded blob passes the crash blobs by (a cron drain must not fail forever on a blob
	// nobody can replay); one the operator named and could not have drained is not done.
	if len(names) == 0 {
		o.passedBy = func(r rules.Result) bool { return r.Outcome == rules.OutcomeCrash || r.Outcome == rules.OutcomeHandled }
		o.forceHow = present.ForceByName
	}
	s, err := a.session(ctx, a.timeout(0))
	if err != nil {
		return err
	}
	witness := s.StartWitness(ctx) // beside the listing, never holding it up
	l, cfg := s.Loader(), s.Config()
	// One listing: a cache of a backlog's summaries would only hold them twice. A canary drain keeps it — its
	// later looks trace the canaries' events through the summaries it holds.
	l.NoCache = !o.canary
	snap, err := s.List(ctx)
	if err != nil {
		return couldNotLook(ctx, err)
	}
	missing, take, err := o.named(snap)
	if err != nil {
		return err
	}
	if o.filter.query != "" {
		take = o.filter.selectBy(ctx, l, cfg, snap, take)
	}
	if !o.out.json() || !o.yes {
		// What is asked must be what is done: read the payloads first, so the blobs the replay already handled
		// (a quarantine copy that holds all of them) are known before the question, not only at write time.
		l.HydrateWhere(ctx, snap, take)
	}
	n := 0
	for _, it := range snap.Items {
		if take(it) {
			n++
		}
	}
	items := make([]rules.Item, 0, n) // (counted first: a backlog's copy is made once, at its size)
	for _, it := range snap.Items {
		if take(it) {
			items = append(items, *it)
		}
	}
	slices.SortStableFunc(items, func(a, b rules.Item) int { return present.ByHour(&a, &b) }) // names said in time order
	p := s.PreviewDrain(snap, items, rules.DrainOptions{IncludeHandled: o.includeHandled, Force: o.force}, witness(), o.forceHow)
	both := output.ResultsJSON{Readiness: output.ToReadinessJSON(p.Readiness, p.Witness), EventGrid: output.ToWitnessJSON(p.Witness)}
	if o.dryRun { // what a worker start would take is advice before a drain, not a fact after one
		both.AppStart = output.ToAppStartJSON(p.AppStart)
	}
	if len(items) == 0 && len(missing) == 0 {
		return o.nothingToDrain(snap, both)
	}
	res, err := o.drain(ctx, s, snap, p, len(items))
	if err != nil {
		return err
	}
	return a.reportResults(ctx, o.actionFlags, s, append(missing, res...), both)
}

// drain asks, then drains as the flags say: canary first, paced, or at once (nothing when no item was taken).
func (o *drainOptions) drain(ctx context.Context, s *session.Session, snap *rules.Snapshot, p *session.DrainPreview, items int) ([]rules.Result, error) {
	if items == 0 {
		return nil, nil
	}
	if err := o.ask(s, p); err != nil {
		return nil, err
	}
	if o.dryRun {
		o.sayPacing(s, snap, p)
	}
	if o.canary && !o.dryRun {
		return o.canaryDrain(ctx, s, snap, p)
	}
	a := o.f
	rate, _ := parseRate(o.rate)
	done, err := s.Drain(ctx, p, session.Run{DryRun: o.dryRun, Concurrency: o.concurrency, Progress: a.pacedProgress(items, o.dryRun, rate),
		Via: o.via, Rate: rate})
	a.warnAll(done.Warnings)
	return done.Results, err
}

// sayPacing says, in a dry run, what --canary and --rate would make of the drain: the canaries, and how long.
func (o *drainOptions) sayPacing(s *session.Session, snap *rules.Snapshot, p *session.DrainPreview) {
	w := o.f.io.err
	if o.canary {
		cp := s.PlanCanary(snap, p, o.forceHow)
		fmt.Fprintf(w, "--canary would drain first, one per subscription (%d), then each subscription's rest once its canary was delivered:\n", len(cp.Canaries.Items))
		for _, it := range cp.Canaries.Items {
			fmt.Fprintf(w, "  %s\n", textfmt.Printable(it.Name))
		}
	}
	if rate, _ := parseRate(o.rate); rate > 0 {
		took := time.Duration(float64(len(p.Targets)) / rate * float64(time.Second))
		fmt.Fprintf(w, "--rate %s would take about %s for %d blob(s), in waves of %d\n", o.rate, textfmt.Duration(took.Round(time.Second)), len(p.Targets), session.WaveOf(rate))
	}
}

// named resolves the names a drain was given: the ones that match nothing (reported notFound), and which listed
// items to take — the named ones, or with no names every stranded blob.
func (o *drainOptions) named(snap *rules.Snapshot) ([]rules.Result, func(*rules.Item) bool, error) {
	if len(o.names) == 0 {
		return nil, func(it *rules.Item) bool { return it.Pane == rules.PaneStranded }, nil
	}
	found, missing, err := replay.ResolveNamed(o.f.io.err, snap, o.f.g.container, o.names, rules.IsRoot)
	if err != nil {
		return nil, nil, err
	}
	named := map[string]bool{}
	for _, n := range found {
		named[n] = true
	}
	return missing, func(it *rules.Item) bool { return named[it.Name] }, nil
}

// ask says what the drain will do — what its preview says (session.PreviewDrain), the same the dashboard's
// dialog shows — and asks.
func (o *drainOptions) ask(s *session.Session, p *session.DrainPreview) error {
	if !o.out.json() || !o.yes {
		o.f.saySaid(p.Said)
	}
	if !p.Said.Asks {
		// Nothing will be written: no question to answer, the outcomes say why each blob is left alone.
		return nil
	}
	return o.f.confirm(o.actionFlags, s.Estate(), p.Said.Question)
}

// nothingToDrain says that the drain took nothing: nothing is stranded, or the filter kept none of what is.
func (o *drainOptions) nothingToDrain(snap *rules.Snapshot, both output.ResultsJSON) error {
	a := o.f
	out := output.ToResultsJSON(o.dryRun, nil, o.forceHow)
	out.Readiness, out.EventGrid, out.AppStart = both.Readiness, both.EventGrid, both.AppStart
	return o.out.print(a.io.out, out, func() {
		if o.filter.query == "" {
			fmt.Fprintln(a.io.out, "nothing is stranded: no blob to drain")
			return
		}
		stranded := 0 // stranded blobs there may be: the filter kept none of them
		for _, it := range snap.Items {
			if it.Pane == rules.PaneStranded {
				stranded++
			}
		}
		fmt.Fprintf(a.io.out, "the filter matches no stranded blob (%d stranded): no blob to drain\n", stranded)
	})
}

// parseRate reads --rate: N/s or N/m (a bare N is a second's), more than none; "" is unpaced (0).
func parseRate(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	num, per := s, time.Second
	if n, unit, ok := strings.Cut(s, "/"); ok {
		num = n
		switch unit {
		case "s":
		case "m", "min":
			per = time.Minute
		default:
			return 0, usagef("--rate %q: give N/s or N/m (blobs a second or a minute)", s)
		}
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n <= 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return 0, usagef("--rate %q: give N/s or N/m, N a number above 0", s)
	}
	return n / per.Seconds(), nil
}

// canaryDrain drains the canaries first (session.PlanCanary, RunCanary: the dashboard's too), saying on stderr
// what it waits for and what each canary told.
func (o *drainOptions) canaryDrain(ctx context.Context, s *session.Session, snap *rules.Snapshot, p *session.DrainPreview) ([]rules.Result, error) {
	a := o.f
	cp := s.PlanCanary(snap, p, o.forceHow)
	rate, _ := parseRate(o.rate)
	fmt.Fprintf(a.io.err, "canary: draining %d blob(s) first, one per subscription, and waiting (up to %s) for each handler's fate\n",
		len(cp.Canaries.Items), textfmt.Duration(o.canaryWait))
	done, _, err := s.RunCanary(ctx, cp, o.canaryWait, session.Run{Concurrency: o.concurrency, Via: o.via, Rate: rate,
		Say: func(line string) { fmt.Fprintln(a.io.err, textfmt.Printable(line)) }})
	a.warnAll(done.Warnings)
	return done.Results, err
}
