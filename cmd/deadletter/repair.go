package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/deadletter/deadletter/internal/opfile"
	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/spf13/cobra"
)

// repairFlags are what edit and resubmit take: an action's flags, and --force.
type repairFlags struct {
	f *factory
	actionFlags
	force bool
	// via and action name the command for the record (record.ActEdit or record.ActResubmit).
	via, action string
}

func (f *repairFlags) register(cmd *cobra.Command) {
	f.actionFlags.register(cmd, true)
	cmd.Flags().MarkHidden("concurrency") // (one blob: nothing to run at once)
	cmd.Flags().BoolVar(&f.force, "force", false, "write it even where nothing changed, it would still be quarantined or crash, or its original is live")
}

// repair says what the plan will do, asks, writes it, and reports — the end of edit and resubmit. keep, when
// set, keeps the edited bytes in a file if they were not written (refused, declined, a dry run, the original
// changed or a failure), and returns where; the file is said in the report, so no edit is lost.
func (o *repairFlags) repair(ctx context.Context, s *session.Session, rp *rules.RepairPlan, keep func() (string, error)) error {
	a, estate, cfg := o.f, s.Estate(), s.Config()
	if !o.out.json() || !o.yes {
		fmt.Fprintf(a.io.err, "%s\n", textfmt.Printable(estate))
		for _, line := range present.RepairLines(rp, cfg, present.ForceRepair, o.force) {
			fmt.Fprintf(a.io.err, "  %s\n", line)
		}
	}
	r, err := o.settle(ctx, s, rp, estate)
	declined := errors.Is(err, errDeclined)
	if err != nil && !declined {
		return err
	}
	kept := ""
	if keep != nil && (declined || o.dryRun || !r.Outcome.Done()) && r.Reason.Kind != rules.ReasonUnchanged { // (a dry run writes nothing either)
		if kept, err = keep(); err != nil {
			return fmt.Errorf("the edit was not written, and could not be kept in a file either: %w", err)
		}
	}
	if declined {
		if kept != "" {
			fmt.Fprintf(a.io.err, "the edit is kept in %s\n", textfmt.Printable(kept))
		}
		return errDeclined
	}
	out := output.ToRepairJSON(estate, rp, r, o.dryRun, kept)
	out.Rehearsal = s.Rehearsal()
	if err := o.out.print(a.io.out, out, func() { o.print(rp, r, kept) }); err != nil {
		return err
	}
	switch {
	case wasInterrupted(ctx):
		return exitCode{code: exitInterrupted, err: errors.New("interrupted")}
	case r.Outcome == rules.OutcomeFailed:
		return exitCode{code: exitFindings}
	case !r.Outcome.Done():
		return exitCode{code: exitNotDone}
	}
	return nil
}

// settleRepair carries the plan out as it stands (session.Repair): refused, it writes nothing; a retry of a repair
// that landed, with no original to retire, has nothing to ask, do or record; otherwise it asks first.
func (o *repairFlags) settle(ctx context.Context, s *session.Session, rp *rules.RepairPlan, estate string) (rules.Result, error) {
	if session.AsksRepair(rp, o.force) {
		if err := o.f.confirm(o.actionFlags, estate, present.RepairQuestion(rp, estate)); err != nil {
			return rules.Result{}, err
		}
	}
	r, warned, err := s.Repair(ctx, rp, session.Repair{Force: o.force, Action: o.action}, session.Run{DryRun: o.dryRun, Via: o.via})
	o.f.warnAll(warned)
	return r, err
}

// printRepair is a repair's text report: what became of it, what it retired, and where an edit not written is kept.
func (o *repairFlags) print(rp *rules.RepairPlan, r rules.Result, kept string) {
	a, dryRun := o.f, o.dryRun
	switch {
	case r.Reason.Kind == rules.ReasonAlreadyWritten && r.Retired == "":
		fmt.Fprintf(a.io.out, "already there %s: %s\n", textfmt.Printable(r.Target), present.Reason(r.Reason, present.ForceRepair))
	case r.Outcome == rules.OutcomeRefused && len(rp.Also) > 0 && r.Reason.Kind == rp.Refusal.Kind: // every reason, as the preview said
		fmt.Fprintf(a.io.out, "refused       %s: %s\n", textfmt.Printable(r.Name), present.RepairRefused(rp, present.ForceRepair))
	default:
		for _, line := range present.ResultLinesFor([]rules.Result{r}, dryRun, present.ForceRepair) {
			fmt.Fprintln(a.io.out, line)
		}
	}
	if r.Retired != "" {
		fmt.Fprintf(a.io.out, "retired       %s\n", textfmt.Printable(r.Retired))
	}
	if kept != "" {
		replaces := "NAME"
		if rp.Original != nil {
			replaces = rp.Original.Name
		}
		fmt.Fprintf(a.io.out, "the edit is kept in %s: send it (fixed) with deadletter resubmit %s --replaces %s\n",
			textfmt.Printable(kept), textfmt.Printable(kept), textfmt.Printable(replaces))
	}
}

// keepEdit is the keep of an edit of name: the bytes in a new file of the operator's.
func keepEdit(name string, body []byte) func() (string, error) {
	return func() (string, error) { return opfile.Keep(name, body) }
}
