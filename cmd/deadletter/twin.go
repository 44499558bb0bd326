package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/internal/twin"
	"github.com/spf13/cobra"
)

// twinCmd is the rehearsal twin: an estate simulated on a directory (internal/twin, docs/twin.md).
func newCmdTwin(a *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "twin start|advance|status|script|diff|truth|rm",
		Short: "a rehearsal estate on a directory: Event Grid, the replay function and failing handlers, on a clock of its own",
		Long: `twin simulates the estate on a directory container so an incident can be rehearsed: the application's
subscriptions with Event Grid's retries and dead-lettering, the replay trigger and its filter, the replay function
itself, handlers that fail and recover on a script, and the lifecycle rule — all on the directory's own clock,
which every other command reads as the service's. Whatever drain, restore or the dashboard writes into the
directory reaches the twin's replay trigger as it would on Azure. deadletter demo runs one with its clock going.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCmdTwinStart(a), newCmdTwinAdvance(a), newCmdTwinStatus(a), newCmdTwinScript(a), newCmdTwinDiff(a), newCmdTwinTruth(a), newCmdTwinRm(a))
	return cmd
}

// twinDir is the twin's directory: --dir, required.
func twinDir(g globalFlags) (string, error) {
	if g.dir == "" {
		return "", usagef("a twin lives in a directory: pass --dir")
	}
	return g.dir, nil
}

func newCmdTwinStart(a *factory) *cobra.Command {
	var scen, from string
	var seed int64
	var pr *printFlags
	cmd := &cobra.Command{
		Use:   "start --dir D [--scenario incident] [--seed N] | start --dir D --from SOURCE",
		Short: "create a twin on an empty directory: of a scenario, its clock where the incident is under way, or of a container",
		Long: `start creates a twin on an empty (or new) directory. With --scenario it runs the scenario's month up to where the
rehearsal opens. With --from SOURCE — a context of the config file, a connection string or a directory, as
--context, a connection string or --dir would name it — it copies a snapshot of that container (names, bytes,
Last-Modified, metadata, index tags; read only on the source, by the engine export uses, resumable: run it again
after an interruption) and infers the script from the evidence: a subscription whose readiness (or, with
--event-grid-topics, Event Grid's metrics) says failing is down until further notice, every other up, the replay
running. The twin's clock starts at the source's service time. The directory is yours only (0700) and keeps no
credential of the source; twin rm removes it.`,
		Example: `  deadletter twin start --dir ./rehearsal
  deadletter twin start --dir ./stall --scenario replay-stopped
  deadletter twin start --dir ./prod-rehearsal --from prod
  deadletter twin start --dir ./snap-rehearsal --from ./incident-1130`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := twinDir(a.g)
			if err != nil {
				return err
			}
			if from != "" {
				if cmd.Flags().Changed("scenario") || cmd.Flags().Changed("seed") {
					return usagef("--from copies a container: --scenario and --seed make a scenario's twin")
				}
				return startFrom(a, cmd, dir, from, pr.json())
			}
			asJSON := pr.json()
			if _, err := twin.ScriptOf(scen); err != nil {
				return usagef("--scenario: %s", err)
			}
			// The estate's rules the command line gives (--ttl, --retention, --max-replays, --id-separator) are the
			// twin's: it runs by them from now on.
			cfg, r := twin.Config(), a.g.rules()
			cfg.TTL, cfg.Retention, cfg.MaxReplays, cfg.Separator = r.TTL, r.Retention, r.MaxReplays, r.Separator
			tw, err := twin.StartConfig(cmd.Context(), dir, made.Twin, scen, seed, time.Now(), cfg)
			if err != nil {
				return err
			}
			defer tw.Close()
			if asJSON {
				return pr.print(a.io.out, output.TwinScenarioJSON{Dir: tw.Place().Dir, Scenario: tw.Script().Name, Clock: output.RFC3339(tw.Now()),
					Totals: tw.State().Totals, Script: scriptJSONOf(tw)}, nil)
			}
			fmt.Fprintf(a.io.out, "twin %q started in %s; its clock stands at %s\n", tw.Script().Name, textfmt.Printable(dir), tw.Now().Format(time.RFC3339))
			writeTotals(a.io.out, tw.State().Totals)
			return nil
		},
	}
	cmd.Flags().StringVar(&scen, "scenario", "incident", "the script: "+strings.Join(twin.Scenarios, " or "))
	cmd.Flags().Int64Var(&seed, "seed", 1, "the twin's randomness (the same seed, the same run)")
	cmd.Flags().StringVar(&from, "from", "", "copy this container into the twin: a context's name, a connection string or a directory")
	pr = declareOutput(cmd, outText, outJSON)
	cmd.RegisterFlagCompletionFunc("scenario", cobra.FixedCompletions(twin.Scenarios, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func newCmdTwinAdvance(a *factory) *cobra.Command {
	var by time.Duration
	var pr *printFlags
	cmd := &cobra.Command{
		Use:   "advance --dir D --by DURATION [--json]",
		Short: "run the twin forward as fast as it can and say what happened meanwhile",
		Example: `  deadletter drain --dir ./rehearsal --yes && deadletter twin advance --dir ./rehearsal --by 2h
  deadletter twin advance --dir ./rehearsal --by 24h --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := twinDir(a.g)
			if err != nil {
				return err
			}
			if by <= 0 || by > maxAdvance {
				return usagef("--by must be positive and at most %s (how far to run the twin's clock)", textfmt.Duration(maxAdvance))
			}
			tw, err := twin.Open(cmd.Context(), dir, "twin advance")
			if err != nil {
				return err
			}
			defer tw.Close()
			if r := tw.Repaired(); r != "" {
				fmt.Fprintln(a.io.err, "note: "+r)
			}
			from := tw.Now()
			span, err := tw.Advance(cmd.Context(), from.Add(by))
			if err != nil {
				return err
			}
			acct, err := tw.Check(cmd.Context())
			if err != nil {
				return err
			}
			if pr.json() {
				if err := pr.print(a.io.out, output.TwinSpanJSON{From: output.RFC3339(from), To: output.RFC3339(tw.Now()), Span: span, Account: acct,
					Violations: tw.State().Violations, Repaired: tw.Repaired()}, nil); err != nil {
					return err
				}
				return twinBroken(acct, tw.State().Violations, true)
			}
			fmt.Fprintf(a.io.out, "twin clock %s → %s\n", from.Format(time.RFC3339), tw.Now().Format(time.RFC3339))
			writeTotals(a.io.out, span)
			fmt.Fprintln(a.io.out, "account: "+acct.String())
			return twinBroken(acct, tw.State().Violations, true)
		},
	}
	durationVar(cmd.Flags(), &by, "by", "how far to run the twin's clock (2h, 1d)")
	pr = declareOutput(cmd, outText, outJSON)
	return cmd
}

func newCmdTwinStatus(a *factory) *cobra.Command {
	var pr *printFlags
	cmd := &cobra.Command{
		Use:     "status --dir D [--json]",
		Short:   "the twin's clock, its script and the account of every event it published",
		Example: `  deadletter twin status --dir ./rehearsal`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := twinDir(a.g)
			if err != nil {
				return err
			}
			// Looked at under the twin's lock when it is free; a twin a demo is running is looked at as it
			// stands, and its account is a glimpse between two of the demo's steps.
			tw, err := twin.OpenToLook(cmd.Context(), dir, "twin status")
			running := errors.Is(err, made.ErrBusy)
			if running {
				fmt.Fprintln(a.io.err, "note: "+err.Error()+"; this is a glimpse between two of its steps")
				tw, err = twin.Peek(dir)
			}
			if err != nil {
				return err
			}
			defer tw.Close()
			if r := tw.Repaired(); r != "" {
				fmt.Fprintln(a.io.err, "note: "+r)
			}
			acct, err := tw.Check(cmd.Context())
			if err != nil {
				return err
			}
			st, sc := tw.State(), tw.Script()
			out := output.TwinStatusJSON{Scenario: sc.Name, Source: st.Source, Clock: output.RFC3339(tw.Now()), Start: output.RFC3339(st.Start), Totals: st.Totals, Account: acct,
				Violations: st.Violations, Script: scriptJSONOf(tw), Starts: startsJSONOf(tw), Repaired: tw.Repaired()}
			if pr.json() {
				if err := pr.print(a.io.out, out, nil); err != nil {
					return err
				}
				return twinBroken(acct, st.Violations, !running)
			}
			w := a.io.out
			fmt.Fprintf(w, "twin %q, clock at %s (started %s)\n", out.Scenario, out.Clock, out.Start)
			if out.Source != "" {
				fmt.Fprintf(w, "a twin of %s\n", textfmt.Printable(out.Source))
			}
			fmt.Fprintln(w, "script:")
			writeScript(w, out.Script)
			writeStarts(w, out.Starts)
			fmt.Fprintln(w, "all its life:")
			writeTotals(w, st.Totals)
			fmt.Fprintln(w, "account: "+acct.String())
			for _, v := range st.Violations {
				fmt.Fprintln(w, "VIOLATION: "+v)
			}
			return twinBroken(acct, st.Violations, !running)
		},
	}
	pr = declareOutput(cmd, outText, outJSON)
	return cmd
}

// maxAdvance bounds one twin advance: a year of the estate is far more than any rehearsal, and a step of any
// length must end.
const maxAdvance = 366 * 24 * time.Hour

// twinBroken is exit 1 when the twin saw the estate's rules broken, or (settled: not mid-run in another
// process) its account does not balance — a script must not read "NOWHERE" under exit 0.
func twinBroken(acct twin.Account, violations []string, settled bool) error {
	switch {
	case len(violations) > 0:
		return exitCode{code: exitFindings, err: fmt.Errorf("the twin saw the estate's rules broken %d time(s) (VIOLATION above)", len(violations))}
	case settled && !acct.Balanced():
		return exitCode{code: exitFindings, err: fmt.Errorf("the twin's account does not balance: %s", acct)}
	}
	return nil
}

// writeTotals says what a twin did, one fact a line.
func writeTotals(w io.Writer, t twin.Totals) {
	fmt.Fprintf(w, "  published %d, delivered %d\n", t.Published, t.Delivered)
	fmt.Fprintf(w, "  dead-lettered %d event(s) in %d blob(s)\n", t.DeadLettered, t.DeadLetterBlobs)
	fmt.Fprintf(w, "  replay: %d trigger(s) taken, %d dropped (their blobs stranded), %d blob(s) replayed, %d run(s) crashed\n",
		t.Triggers, t.TriggersDropped, t.Replayed, t.Crashed)
	fmt.Fprintf(w, "  republished %d, quarantined %d, archived %d blob(s)\n", t.Republished, t.Quarantined, t.Archived)
	fmt.Fprintf(w, "  lifecycle deleted %d blob(s); %d event(s) lost\n", t.LifecycleDeleted, t.Lost)
	if t.StartReuploaded > 0 || t.RepublishedTwice > 0 {
		fmt.Fprintf(w, "  the Function App's starts re-uploaded %d blob(s); %d event(s) republished a second time\n", t.StartReuploaded, t.RepublishedTwice)
	}
}

func newCmdTwinTruth(a *factory) *cobra.Command {
	var pr *printFlags
	cmd := &cobra.Command{
		Use:   "truth --dir D [ID...]",
		Short: "what really became of events: the twin's ground truth, to check what trace inferred",
		Long: `truth says what became of each event named (its id, with or without its |n count) as the twin that simulated
it knows: on its way, in a dead letter, quarantined, delivered or lost — what deadletter trace can only infer
from the container ("presumed delivered"). With no ID, every event still outstanding. An id the twin never
published reads as delivered: ask about ids you saw.`,
		Example: `  deadletter twin truth --dir ./rehearsal 74c6b959-1b5e-4f6c-9a43-3f0c2d0b9c11 -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := twinDir(a.g)
			if err != nil {
				return err
			}
			tw, err := twin.OpenToLook(cmd.Context(), dir, "twin truth")
			if errors.Is(err, made.ErrBusy) {
				fmt.Fprintln(a.io.err, "note: "+err.Error()+"; this is a glimpse between two of its steps")
				tw, err = twin.Peek(dir)
			}
			if err != nil {
				return err
			}
			defer tw.Close()
			ts, err := tw.Truth(cmd.Context(), args)
			if err != nil {
				return err
			}
			doc := output.TwinTruthJSON{Clock: output.RFC3339(tw.Now()), Events: []output.TruthJSON{}}
			for _, t := range ts {
				blobs := make([]output.Text, len(t.Blobs))
				for i, b := range t.Blobs {
					blobs[i] = output.Text(b)
				}
				doc.Events = append(doc.Events, output.TruthJSON{ID: output.Text(t.ID), State: t.State, Attempt: output.Attempt(t.Attempt), Blobs: blobs})
			}
			return pr.print(a.io.out, doc, func() {
				fmt.Fprintf(a.io.out, "twin clock at %s\n", doc.Clock)
				for _, t := range ts {
					fmt.Fprintf(a.io.out, "%s  %s  attempt %s  %s\n", textfmt.Printable(t.ID), t.State, t.Attempt, textfmt.Printable(strings.Join(t.Blobs, " ")))
				}
			})
		},
	}
	pr = declareOutput(cmd, outText, outJSON)
	return cmd
}
