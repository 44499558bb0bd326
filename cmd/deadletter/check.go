package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/spf13/cobra"
)

// monitorFlags are the thresholds the dashboard, check and watch share.
type monitorFlags struct {
	maxQuarantine int
	ignoreAcks    bool
	// witness is Event Grid's witness the command reads beside each look (nil: none configured).
	witness rules.Witness
}

// lookTimeout bounds a command that looks (check, each pass of watch, ls, show) unless --timeout says otherwise:
// a black-holed endpoint is reported as could-not-check within it, and a cron job never piles up behind a hung
// network. A container of hundreds of thousands of blobs takes longer to read whole: raise --timeout for it
// (0: none), as the message says.
const lookTimeout = 30 * time.Second

func (f *monitorFlags) register(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.maxQuarantine, "max-quarantine", 0, "more quarantined blobs than this is a finding")
	cmd.Flags().BoolVar(&f.ignoreAcks, "ignore-acks", false, "acknowledgements silence nothing: every blob counts")
}

// apply sets what the flags change in the rules.
func (f *monitorFlags) apply(cfg *rules.Config) { cfg.IgnoreAcks = f.ignoreAcks }

func (f *monitorFlags) checkOptions() rules.CheckOptions {
	return rules.CheckOptions{MaxQuarantine: f.maxQuarantine, Names: true}
}

type checkOptions struct {
	f *factory
	monitorFlags
	out         *printFlags
	allContexts bool
	cmd         *cobra.Command // (every context's run takes the command line's flags: eachContext)
}

func newCmdCheck(f *factory, runF func(context.Context, *checkOptions) error) *cobra.Command {
	o := &checkOptions{f: f}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "exit 0 healthy, 1 findings, 2 could not check (for cron and CI)",
		Example: `  deadletter check || page-oncall          # exit 1 on findings, 2 when it could not look
  deadletter check --json | jq '.findings[].kind'`,
		Annotations: lookingAtAnEstate(),
		Long: `check reads the container once and reports what needs a human: stranded, expiring, replay stalled, crash,
quarantine (over --max-quarantine) and malformed blobs, naming them. A check that cannot see the whole container —
unreachable, refused, interrupted, past --timeout (30s unless set), or a payload it could not read (refused, failed, over 64 MiB) — exits 2, never 0.
Acknowledged blobs (deadletter ack) and copies the replay already handled raise nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.cmd = cmd
			return runWith(runF, runCheck)(cmd.Context(), o)
		},
	}
	o.monitorFlags.register(cmd)
	o.out = declareOutput(cmd, outText, outWide, outJSON).fitted()
	cmd.Flags().BoolVar(&o.allContexts, "all-contexts", false, "check every context of the config file at once (exit: the worst; JSON keyed by context)")
	return cmd
}

// look reads the container once, page by page: each page's root and quarantine payloads are read, the page goes
// to the checker (and to also, when set: watch's metrics), and then it is dropped — a check of a million blobs
// holds what its findings name, not the container. A pass that could not see everything is an error, never a
// partial picture: a check must not call a container it could not read healthy.
func look(ctx context.Context, l *replay.Loader, o rules.CheckOptions, also func([]rules.Item, time.Time), w rules.Witness) (rules.Report, error) {
	witness := session.StartWitness(ctx, w) // beside the listing: Azure Monitor never holds it up beyond its own bound
	twins, err := l.Twins(ctx)
	if err != nil {
		return rules.Report{}, couldNotLook(ctx, err)
	}
	k := l.Config.NewChecker(o)
	var failed, unread []string
	err = l.Stream(ctx, func(items []rules.Item, now time.Time) error {
		twins.Mark(items)
		hydrate(ctx, l, items, func(it *rules.Item) bool { return it.Pane != rules.PaneArchived })
		for i := range items {
			it := &items[i]
			switch {
			case it.Pane == rules.PaneArchived:
			case it.ReadFailed:
				failed = append(failed, it.Name+": "+it.ReadErr)
			case it.Unread():
				unread = append(unread, it.Name)
			}
		}
		if len(unread) > 0 {
			return ctx.Err() // stopped mid-page: the pass is incomplete
		}
		k.Add(items, now)
		if also != nil {
			also(items, now)
		}
		return nil
	})
	switch {
	// Cut short: payloads left unread, or the listing ended by the context — not a container found gone, which
	// is said as itself even when a stop came as it was found so.
	case len(unread) > 0 || (err != nil && ctx.Err() != nil && !errors.Is(err, store.ErrContainerNotFound)):
		why := "stopped"
		if wasInterrupted(ctx) {
			why = "interrupted"
		} else if ctx.Err() != nil {
			why = "out of time (--timeout)"
		}
		first := ""
		if len(unread) > 0 {
			first = fmt.Sprintf(": %d payload(s) not read, the first %s", len(unread), unread[0])
		}
		return rules.Report{}, cutShort{fmt.Sprintf("%s before the whole container was read, so the check is incomplete%s", why, first), ctx.Err()}
	case err != nil:
		return rules.Report{}, couldNotLook(ctx, err)
	case len(failed) > 0:
		// The listing is whole: the report holds every blob, those whose payload could not be read as unknowns.
		r := k.Report()
		r.AddWitness(witness())
		return r, unreadPayloads{n: len(failed), first: failed[0]}
	}
	r := k.Report()
	r.AddWitness(witness())
	return r, nil
}

// unreadPayloads is a look that listed the whole container but could not read some payloads: not healthy, yet
// what it did see stands (watch publishes it, with the count of what it could not judge).
type unreadPayloads struct {
	n     int
	first string
}

func (u unreadPayloads) Error() string {
	return fmt.Sprintf("could not read %d payload(s), so the check is incomplete: %s", u.n, u.first)
}

func runCheck(ctx context.Context, o *checkOptions) error {
	a := o.f
	if err := positiveInt("max-quarantine", o.maxQuarantine); err != nil {
		return err
	}
	if o.allContexts {
		runs, err := a.eachContext(o.cmd, func(sub *factory) error {
			one := *o
			one.f, one.allContexts = sub, false
			return runCheck(ctx, &one)
		})
		if err != nil {
			return err
		}
		if err := a.printContexts(runs, o.out); err != nil {
			return err
		}
		return worst(runs)
	}
	ctx, cancel := a.withTimeout(ctx, lookTimeout)
	defer cancel()
	fail := func(err error) error {
		o.out.print(a.io.out, output.CheckErrorJSON{Healthy: false, Error: output.Text(err.Error())}, nil) // (words: the error is said)
		return exitCode{code: exitError, err: err}
	}
	s, err := a.session(ctx, a.timeout(lookTimeout))
	if err != nil {
		return fail(fmt.Errorf("could not check: %w", err))
	}
	l := s.Loader()
	o.apply(&l.Config)
	cfg := l.Config
	l.NoCache = true // one look: keeping every summary would only hold the container in memory
	r, err := look(ctx, l, o.checkOptions(), nil, s.Witness())
	if err != nil {
		return fail(fmt.Errorf("could not check %s: %w", s.Estate(), err))
	}
	var result error
	if !r.Healthy {
		result = exitCode{code: exitFindings}
	}
	out := output.ToCheckJSON(cfg, r)
	out.Rehearsal = s.Rehearsal()
	if err := o.out.print(a.io.out, out, func() { printCheck(a.io.out, s.Estate(), cfg, r) }); err != nil {
		return err
	}
	return result
}

// printCheck says the report for a person: every finding with its first names, what acknowledgements silence or
// only annotate, and the acks that were ignored.
func printCheck(w io.Writer, container string, cfg rules.Config, r rules.Report) {
	kept := ""
	if r.Handled+r.Acked > 0 {
		kept = fmt.Sprintf("; %d handled and %d acknowledged blob(s)", r.Handled, r.Acked)
	}
	if r.Healthy {
		fmt.Fprintf(w, "healthy: %s has nothing stranded, quarantined, expiring, stalled, crashing, untriggerable or malformed (%s%s)\n", textfmt.Printable(container), paneCounts(r.Counts), kept)
	} else {
		fmt.Fprintf(w, "%s: %d finding(s) (%s%s)\n", textfmt.Printable(container), len(r.Findings), paneCounts(r.Counts), kept)
	}
	// Every message starts in one column, whatever the longest kind (handlerFailing is 14), and what a finding
	// names sits under its message.
	kw := 13
	for _, f := range append(slices.Clone(r.Findings), r.Acknowledged...) {
		kw = max(kw, len(f.Kind))
	}
	under := strings.Repeat(" ", 2+kw+2)
	for _, f := range r.Findings {
		fmt.Fprintf(w, "  %-*s  %s\n", kw, f.Kind, present.ReportFindingMessage(f, cfg, r))
		if ev := present.WitnessEvidence(f.Kind, r.Witness); ev != nil {
			for _, line := range ev { // a subscription and the counts behind it
				fmt.Fprintf(w, "%s%s\n", under, line)
			}
			continue
		}
		shown := f.Names[:min(len(f.Names), output.MaxFindingNames)]
		for _, n := range shown {
			fmt.Fprintf(w, "%s%s\n", under, textfmt.Printable(n))
		}
		if more := f.Count - len(shown); more > 0 {
			fmt.Fprintf(w, "%s… and %d more (%s)\n", under, more, listCommand(f.Kind))
		}
		printAcked(w, f, !f.Kind.Silenced(), under)
	}
	for _, f := range r.Acknowledged {
		fmt.Fprintf(w, "  %-*s  every one acknowledged, so none raises it:\n", kw, f.Kind)
		printAcked(w, f, false, under)
	}
	if l := present.AppStartLine(r.AppStart); l != "" && !r.Healthy {
		fmt.Fprintln(w, "  → "+l)
	}
	for _, line := range present.WitnessUnknown(r.Witness) {
		fmt.Fprintf(w, "  %s\n", line)
	}
	if r.SuspiciousCount > 0 {
		fmt.Fprintf(w, "  %d blob(s) carry ack tags deadletter did not write as they are: ignored, they silence nothing\n", r.SuspiciousCount)
		for _, s := range r.Suspicious[:min(len(r.Suspicious), output.MaxFindingNames)] {
			fmt.Fprintf(w, "%s%s: %s\n", under, textfmt.Printable(s.Name), textfmt.Printable(s.Why))
		}
	}
}

// printAcked lists a finding's acknowledged blobs (counted says they still count in it).
func printAcked(w io.Writer, f rules.Finding, counted bool, under string) {
	if len(f.Acked) == 0 {
		return
	}
	how := "silenced"
	if counted {
		how = "still counted: an ack does not silence this"
	}
	fmt.Fprintf(w, "%s%d acknowledged (%s):\n", under, len(f.Acked), how)
	for _, ack := range f.Acked[:min(len(f.Acked), output.MaxFindingNames)] {
		fmt.Fprintf(w, "%s%s by %s until %s\n", under, textfmt.Printable(ack.Name), textfmt.Printable(ack.Ack.By), ack.Ack.Until.UTC().Format("2006-01-02 15:04Z"))
	}
}

// listCommand is where the rest of a finding's blobs are listed.
func listCommand(k rules.FindingKind) string {
	if p, ok := k.Pane(); ok {
		return "deadletter ls --pane " + p.String()
	}
	return "deadletter check --json"
}

func paneCounts(m map[rules.Pane]int) string {
	var parts []string
	for _, p := range rules.Panes {
		parts = append(parts, fmt.Sprintf("%d %s", m[p], p))
	}
	return strings.Join(parts, ", ")
}

// cutShort is a look the context ended before the container was read whole: said in words, and the context's error
// beneath them, so a watch tells a pass its stop cut short (exit 2) from one that failed on its own.
type cutShort struct {
	said  string
	cause error
}

func (c cutShort) Error() string { return c.said }
func (c cutShort) Unwrap() error { return c.cause }
