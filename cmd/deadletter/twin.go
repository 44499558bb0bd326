package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/internal/twin"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/spf13/cobra"
)

// twinCmd is the rehearsal twin: an estate simulated on a directory (internal/twin, docs/twin.md).
func (a *app) twinCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "twin start|advance|status",
		Short: "a rehearsal estate on a directory: Event Grid, the replay function and failing handlers, on a clock of its own",
		Long: `twin simulates the estate on a directory container so an incident can be rehearsed: the application's
subscriptions with Event Grid's retries and dead-lettering, the replay trigger and its filter, the replay function
itself, handlers that fail and recover on a script, and the lifecycle rule — all on the directory's own clock,
which every other command reads as the service's. Whatever drain, restore or the dashboard writes into the
directory reaches the twin's replay trigger as it would on Azure. deadletter demo runs one with its clock going.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(a.twinStartCmd(), a.twinAdvanceCmd(), a.twinStatusCmd())
	return cmd
}

// twinDir is the twin's directory: --dir, required.
func (a *app) twinDir() (string, error) {
	if a.g.dir == "" {
		return "", usagef("a twin lives in a directory: pass --dir")
	}
	return a.g.dir, nil
}

func (a *app) twinStartCmd() *cobra.Command {
	var scen string
	var seed int64
	cmd := &cobra.Command{
		Use:   "start --dir D [--scenario incident] [--seed N]",
		Short: "create a twin on an empty directory, its clock where the incident is under way",
		Example: `  deadletter twin start --dir ./rehearsal
  deadletter twin start --dir ./stall --scenario replay-stopped`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := a.twinDir()
			if err != nil {
				return err
			}
			if _, err := twin.ScriptOf(scen); err != nil {
				return usagef("--scenario: %s", err)
			}
			tw, err := twin.Start(cmd.Context(), dir, scen, seed, time.Now())
			if err != nil {
				return err
			}
			if err := writeRegister(dir, dirstore.RegisterPath(dir), scenario.IncidentRegister); err != nil {
				return err
			}
			fmt.Fprintf(a.io.out, "twin %q started in %s; its clock stands at %s\n", tw.Script().Name, textfmt.Printable(dir), tw.Now().Format(time.RFC3339))
			writeTotals(a.io.out, tw.State().Totals)
			return nil
		},
	}
	cmd.Flags().StringVar(&scen, "scenario", "incident", "the script: "+strings.Join(twin.Scenarios, " or "))
	cmd.Flags().Int64Var(&seed, "seed", 1, "the twin's randomness (the same seed, the same run)")
	cmd.RegisterFlagCompletionFunc("scenario", cobra.FixedCompletions(twin.Scenarios, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (a *app) twinAdvanceCmd() *cobra.Command {
	var by time.Duration
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "advance --dir D --by DURATION [--json]",
		Short: "run the twin forward as fast as it can and say what happened meanwhile",
		Example: `  deadletter drain --dir ./rehearsal --yes && deadletter twin advance --dir ./rehearsal --by 2h
  deadletter twin advance --dir ./rehearsal --by 24h --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := a.twinDir()
			if err != nil {
				return err
			}
			if by <= 0 {
				return usagef("--by must be positive (how far to run the twin's clock)")
			}
			tw, err := twin.Open(dir)
			if err != nil {
				return err
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
			if asJSON {
				if err := writeJSON(a.io.out, twinSpanJSON{From: rfc3339(from), To: rfc3339(tw.Now()), Span: span, Account: acct,
					Violations: tw.State().Violations}); err != nil {
					return err
				}
				return twinBroken(acct, tw.State().Violations)
			}
			fmt.Fprintf(a.io.out, "twin clock %s → %s\n", from.Format(time.RFC3339), tw.Now().Format(time.RFC3339))
			writeTotals(a.io.out, span)
			fmt.Fprintln(a.io.out, "account: "+acct.String())
			return twinBroken(acct, tw.State().Violations)
		},
	}
	durationVar(cmd.Flags(), &by, "by", "how far to run the twin's clock (2h, 1d)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "JSON output")
	return cmd
}

type twinSpanJSON struct {
	From       string       `json:"from"`
	To         string       `json:"to"`
	Span       twin.Totals  `json:"span"`
	Account    twin.Account `json:"account"`
	Violations []string     `json:"violations"`
}

type twinStatusJSON struct {
	Scenario   string       `json:"scenario"`
	Clock      string       `json:"clock"`
	Start      string       `json:"start"`
	Script     []windowJSON `json:"script"`
	Totals     twin.Totals  `json:"totals"`
	Account    twin.Account `json:"account"`
	Violations []string     `json:"violations"`
}

type windowJSON struct {
	Who     string `json:"who"`
	From    string `json:"from"`
	To      string `json:"to"`
	Outcome string `json:"outcome"`
	Status  int    `json:"status,omitempty"`
	Why     string `json:"why"`
}

func (a *app) twinStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "status --dir D [--json]",
		Short:   "the twin's clock, its script and the account of every event it published",
		Example: `  deadletter twin status --dir ./rehearsal`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := a.twinDir()
			if err != nil {
				return err
			}
			tw, err := twin.Open(dir)
			if err != nil {
				return err
			}
			acct, err := tw.Check(cmd.Context())
			if err != nil {
				return err
			}
			st, sc := tw.State(), tw.Script()
			out := twinStatusJSON{Scenario: sc.Name, Clock: rfc3339(tw.Now()), Start: rfc3339(st.Start), Totals: st.Totals, Account: acct,
				Violations: st.Violations, Script: []windowJSON{}}
			for _, w := range sc.Windows {
				out.Script = append(out.Script, windowJSON{Who: w.Sub, From: rfc3339(st.Start.Add(w.From)), To: rfc3339(st.Start.Add(w.To)),
					Outcome: w.Outcome, Status: w.Status, Why: w.Why})
			}
			sort.SliceStable(out.Script, func(i, j int) bool { return out.Script[i].From < out.Script[j].From })
			if asJSON {
				if err := writeJSON(a.io.out, out); err != nil {
					return err
				}
				return twinBroken(acct, st.Violations)
			}
			w := a.io.out
			fmt.Fprintf(w, "twin %q, clock at %s (started %s)\n", out.Scenario, out.Clock, out.Start)
			fmt.Fprintln(w, "script:")
			for _, s := range out.Script {
				mark := " "
				if s.From <= out.Clock && out.Clock < s.To {
					mark = "▶"
				}
				fmt.Fprintf(w, "  %s %s → %s  %-18s %s (%s)\n", mark, s.From, s.To, s.Who, s.Outcome, s.Why)
			}
			fmt.Fprintln(w, "all its life:")
			writeTotals(w, st.Totals)
			fmt.Fprintln(w, "account: "+acct.String())
			for _, v := range st.Violations {
				fmt.Fprintln(w, "VIOLATION: "+v)
			}
			return twinBroken(acct, st.Violations)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "JSON output")
	return cmd
}

// twinBroken is exit 1 when the twin broke its own rules — an event found nowhere, a sum that does not add up, an
// estate rule violated — so a script or a soak that runs twin status or advance stops on it rather than reading
// past a line it printed.
func twinBroken(acct twin.Account, violations []string) error {
	if acct.Balanced() && len(violations) == 0 {
		return nil
	}
	return exitCode{code: exitFindings, err: fmt.Errorf("the twin broke its own rules: %s; %d violation(s)", acct, len(violations))}
}

// writeTotals says what a twin did, one fact a line.
func writeTotals(w io.Writer, t twin.Totals) {
	fmt.Fprintf(w, "  published %d, delivered %d\n", t.Published, t.Delivered)
	fmt.Fprintf(w, "  dead-lettered %d event(s) in %d blob(s)\n", t.DeadLettered, t.DeadLetterBlobs)
	fmt.Fprintf(w, "  replay: %d trigger(s) taken, %d dropped (their blobs stranded), %d blob(s) replayed, %d run(s) crashed\n",
		t.Triggers, t.TriggersDropped, t.Replayed, t.Crashed)
	fmt.Fprintf(w, "  republished %d, quarantined %d, archived %d blob(s)\n", t.Republished, t.Quarantined, t.Archived)
	fmt.Fprintf(w, "  lifecycle deleted %d blob(s); %d event(s) lost\n", t.LifecycleDeleted, t.Lost)
}
