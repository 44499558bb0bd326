package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/spf13/cobra"
)

type showOptions struct {
	f    *factory
	out  *printFlags
	name string
}

func newCmdShow(f *factory, runF func(context.Context, *showOptions) error) *cobra.Command {
	o := &showOptions{f: f}
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "one blob: every event, its verdicts, the preview or restore prediction",
		Example: `  deadletter show 6cfb4200                 # a unique fragment of the name
  deadletter show WEBHOOKS/2026/11/30/19/6cfb4200-69c9-ee25-2bdd-2bcae3e70162.json --json`,
		Annotations: lookingAtAnEstate(),
		Long: `show reads one blob and says what the estate's replay function will do with it, event by event. NAME is the
full name, the blob's URL, its GUID or any fragment that picks out one blob; an ambiguous fragment lists the
candidates (exit 2).`,
		Args:              exactArgs(1, "show takes one blob name (or its URL, GUID or a unique fragment)"),
		ValidArgsFunction: f.completeNames(replay.AnyBlob),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return runWith(runF, runShow)(cmd.Context(), o)
		},
	}
	o.out = declareOutput(cmd, outText, outWide, outJSON).fitted()
	return cmd
}

func runShow(ctx context.Context, o *showOptions) error {
	f := o.f
	ctx, cancel := f.withTimeout(ctx, lookTimeout)
	defer cancel()
	s, err := f.session(ctx, f.timeout(lookTimeout))
	if err != nil {
		return err
	}
	name, err := replay.ResolveOne(ctx, s.Loader(), o.name, f.g.container, replay.AnyBlob)
	if err != nil {
		return couldNotLook(ctx, err)
	}
	d, err := s.Loader().Inspect(ctx, name)
	if err != nil {
		return couldNotLook(ctx, err)
	}
	state := present.StateOf(d, s.Config())
	if sub := d.Parsed.Subscription; sub != "" { // (as the dashboard's detail says it: whether its handler still fails)
		if state.Readiness, err = s.Loader().ReadinessOf(ctx, sub, d.Now); err != nil {
			return couldNotLook(ctx, err)
		}
	}
	if s.Witness() != nil { // (Event Grid's word on the handler, and the activity log's on the Function App's starts)
		w := s.ReadWitness(ctx, d.Now)
		state.SetStarts(s.Config(), &d.Item, w.App)
		state.SetHandler(w, d.Parsed.Subscription)
	}
	advice := present.Advice(state)
	sj := output.ToShowJSON(s.Config(), d)
	sj.MissedByStart = missedWord(state.Missed)
	sj.Rehearsal = s.Rehearsal()
	for _, l := range advice {
		sj.Advice = append(sj.Advice, output.Text(l))
	}
	return o.out.print(f.io.out, sj, func() { f.sayRehearsal(s); writeShow(f.io.out, d, s.Config(), advice) })
}

// exactArgs is cobra.ExactArgs with a usage error that says what is wanted.
func exactArgs(n int, want string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s (got %d arguments)", want, len(args))
		}
		return nil
	}
}

// writeShow prints one blob for a person. Every string from the blob goes through textfmt.Printable.
func writeShow(w io.Writer, d *replay.Detail, cfg rules.Config, advice []string) {
	p := textfmt.Printable
	now := d.Now
	al := cfg.AlertsOf(&d.Item, now)
	fmt.Fprintf(w, "%s\n", p(d.Name))
	fmt.Fprintf(w, "  pane        %s (age %s; TTL %s)\n", d.Pane, textfmt.Duration(d.Age), textfmt.Duration(cfg.TTL))
	fmt.Fprintf(w, "  modified    %s   deleted by the lifecycle rule at %s (in %s)\n", output.RFC3339(d.LastModified), output.RFC3339(al.ExpiresAt), textfmt.Duration(al.DeletesIn))
	drained := rules.MarksOf(d.Metadata).DrainCount
	if drained == "" {
		drained = "0"
	}
	fmt.Fprintf(w, "  size        %s   etag %s   drained %s time(s)\n", textfmt.Bytes(d.Size), p(d.ETag), p(drained))
	for _, l := range present.StateLines(al) {
		fmt.Fprintf(w, "  %s\n", l)
	}
	for _, l := range advice {
		fmt.Fprintf(w, "  → %s\n", l)
	}
	if d.ReadErr != "" {
		fmt.Fprintf(w, "  NOT READ    %s\n", p(d.ReadErr))
		return
	}
	if d.Payload.Malformed() {
		fmt.Fprintf(w, "  MALFORMED   %s\n", p(d.Payload.Err.Error()))
		fmt.Fprintf(w, "              %s\n", present.BestEffortNote)
	}
	fmt.Fprintf(w, "  events      %d\n\n", len(d.Payload.Events))
	// The events as the dashboard's detail lists them (with the subject): fitted to a terminal, else whole.
	cols := append(slices.Clone(present.EventColumns), present.EvSubject)
	rows := present.EventRows(d)
	f, fitted := w.(*fitWriter)
	if !fitted {
		cols[slices.IndexFunc(cols, func(c present.Column[present.EventRow]) bool { return c.ID == "reason" })] = present.EvReasonLong
	}
	cols = present.FitColumns(cols, rows)
	widths := make([]int, len(cols))
	for i := range cols {
		widths[i] = cols[i].Max
	}
	if fitted {
		widths = present.Layout(cols, f.width)
	}
	printTable(w, cols, widths, rows)
	fmt.Fprintln(w)
	for _, line := range present.Explain(d, cfg) {
		fmt.Fprintln(w, line)
	}
}

// missedWord is a start's miss as JSON says it: "" (not missed, or not known), "young" or "listed".
func missedWord(m rules.StartMiss) string {
	switch m {
	case rules.MissedYoung:
		return "young"
	case rules.MissedListed:
		return "listed"
	}
	return ""
}
