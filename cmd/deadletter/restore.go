package main

import (
	"context"
	"fmt"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/spf13/cobra"
)

type restoreOptions struct {
	f *factory
	actionFlags
	force  bool
	all    bool
	filter blobFilter
	names  []string
	via    string
}

func newCmdRestore(f *factory, runF func(context.Context, *restoreOptions) error) *cobra.Command {
	o := &restoreOptions{f: f}
	cmd := &cobra.Command{
		Use:   "restore NAME... | restore --all [filters]",
		Short: "move quarantined blobs back to the root so capped events resume",
		Example: `  deadletter restore quarantine/WEBHOOKS/2026/11/30/20/30e3f153-57de-4c19-983f-484619a0e9e2.json
  deadletter restore --all --subscription friend-requests --dry-run
  deadletter restore 30e3f153 --force --yes`,
		Annotations: lookingAtAnEstate(),
		Long: `restore copies a quarantine blob back to the container root (ids stripped of any count) under a name fixed by
the copy's Last-Modified, then deletes the quarantine copy: restoring again, or from two places at once, leaves
one copy. Only events the cap stopped resume; a blob where nothing would resume is refused unless --force.
--all restores every quarantine blob with something to resume (narrowed by --subscription, --verdict,
--older-than) after one confirmation, and lists the refused ones.`,
		ValidArgsFunction: f.completeNames(replay.QuarantineBlob),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.names, o.via = args, via(cmd)
			return runWith(runF, runRestore)(cmd.Context(), o)
		},
	}
	o.register(cmd, true)
	cmd.Flags().BoolVar(&o.force, "force", false, "restore even where nothing would resume (the replay re-quarantines it)")
	cmd.Flags().BoolVar(&o.all, "all", false, "every quarantine blob with something to resume")
	o.filter.flags(cmd)
	cmd.Flags().MarkHidden("pane") // restore takes quarantine blobs only: the pane is not a choice
	return cmd
}

func (o *restoreOptions) check(names []string) error {
	if err := o.filter.useView(o.f); err != nil {
		return err
	}
	switch {
	case o.all && len(names) > 0:
		return usagef("restore takes names or --all, not both")
	case !o.all && len(names) == 0:
		return usagef("restore needs quarantine blob names (or their GUIDs or fragments), or --all")
	case o.all && o.force:
		return usagef("--all restores only blobs with something to resume; --force takes named blobs")
	case !o.all && (o.filter.pane != "" || o.filter.subscription != "" || o.filter.verdict != "" || o.filter.olderThan != 0 || o.filter.query != ""):
		return usagef("--subscription, --verdict, --older-than, --filter and --view narrow --all")
	case o.filter.pane != "" && o.filter.pane != string(rules.PaneQuarantine):
		return usagef("restore --all takes quarantine blobs: --pane %s would select none", o.filter.pane)
	}
	if err := o.validate(); err != nil {
		return err
	}
	return o.filter.validate(o.f)
}

// ready checks what a restore was asked (read-only refuses a real one) and says how its results lift a refusal.
func (o *restoreOptions) ready(args []string) error {
	if err := o.check(args); err != nil {
		return err
	}
	if o.f.g.readOnly && !o.dryRun { // (a dry run changes nothing: read-only allows it)
		return replay.ErrReadOnly
	}
	if o.all {
		o.forceHow = present.ForceByName // (--all takes no --force: the results say so as the question does)
	}
	return nil
}

func runRestore(ctx context.Context, o *restoreOptions) error {
	a, args := o.f, o.names
	if err := o.ready(args); err != nil {
		return err
	}
	s, err := a.session(ctx, a.timeout(0))
	if err != nil {
		return err
	}
	witness := s.StartWitness(ctx) // beside the listing, never holding it up
	snap, err := s.List(ctx)
	if err != nil {
		return couldNotLook(ctx, err)
	}
	names, missing := o.quarantineBlobs(snap), []rules.Result(nil)
	if !o.all {
		if names, missing, err = replay.ResolveNamed(a.io.err, snap, a.g.container, args, replay.QuarantineBlob); err != nil {
			return err
		}
	}
	// Each copy is held to the ETag it had when it was listed, or when its plan was shown: a copy rewritten
	// since is skipped as changed, never restored unseen.
	previewed := make(map[string]string, len(names))
	for _, n := range names {
		if i, ok := snap.Lookup(n); ok {
			previewed[n] = snap.Items[i].ETag
		}
	}
	var warned output.ResultsJSON
	if o.all || !o.out.json() || !o.yes {
		p := o.preview(ctx, s, snap, names, missing, witness)
		names, previewed = p.Writes(), p.Previewed()
		missing = append(missing, p.Left()...) // refusals are results too, so --json carries them
		for _, w := range p.Warnings {
			warned.Warnings = append(warned.Warnings, output.Text(w))
		}
	}
	if len(names) == 0 {
		return o.nothing(ctx, s, missing)
	}
	if err := a.confirm(o.actionFlags, s.Estate(), present.RestoreQuestion(len(names), rules.TallyOf(missing), "blob(s)")); err != nil {
		return err
	}
	done, err := s.RestoreNames(ctx, names, previewed, o.force, snap, session.Run{DryRun: o.dryRun, Concurrency: o.concurrency,
		Progress: a.progress(len(names), o.dryRun), Via: o.via})
	a.warnAll(done.Warnings)
	if err != nil {
		return err
	}
	res := done.Results
	if warned.Warnings == nil && o.out.json() { // (--json --yes on names reads no preview: the warnings from what resumed)
		for _, w := range present.RestoreWitnessWarnings(witness(), resumed(snap, res)) {
			warned.Warnings = append(warned.Warnings, output.Text(w))
		}
	}
	return a.reportResults(ctx, o.actionFlags, s, append(missing, res...), warned)
}

// resumed are the listed copies a restore wrote that set events moving again.
func resumed(snap *rules.Snapshot, res []rules.Result) []rules.Item {
	var out []rules.Item
	for _, r := range res {
		if i, ok := snap.Lookup(r.Name); ok && r.Outcome.Done() && r.Resume > 0 {
			out = append(out, *snap.Items[i])
		}
	}
	return out
}

// quarantineBlobs are what --all considers: every quarantine blob the listing filters keep.
func (o *restoreOptions) quarantineBlobs(snap *rules.Snapshot) []string {
	var names []string
	for i := range snap.Items {
		if it := snap.Items[i]; it.Pane == rules.PaneQuarantine && o.filter.listed(it) {
			names = append(names, it.Name)
		}
	}
	return names
}

func (o *restoreOptions) nothing(ctx context.Context, s *session.Session, missing []rules.Result) error {
	a := o.f
	if len(missing) > 0 {
		return a.reportResults(ctx, o.actionFlags, s, missing)
	}
	fmt.Fprintln(a.io.err, "nothing to restore")
	return o.out.print(a.io.out, output.ToResultsJSON(o.dryRun, nil, present.ForceFlag), nil)
}

// previewRestore reads each copy's restore plan (session.PreviewRestore) and says it — the names not found first,
// then each plan, the refusals and Event Grid's warnings.
func (o *restoreOptions) preview(ctx context.Context, s *session.Session, snap *rules.Snapshot, names []string, missing []rules.Result,
	witness func() rules.WitnessReport) *session.RestorePreview {
	a := o.f
	for _, r := range missing { // named but not found: said before the question counts them
		fmt.Fprintf(a.io.err, "%s: %s %s\n", textfmt.Printable(r.Name), r.Outcome, present.Reason(r.Reason, present.ForceFlag))
	}
	var keep func(*replay.Detail) bool
	if o.all {
		keep = func(d *replay.Detail) bool { return o.filter.readDetail(s.Config(), d) }
	}
	p := s.PreviewRestore(ctx, snap, names, o.force, witness(), keep)
	o.describe(s.Config(), p.RestorePreview)
	for _, w := range p.Warnings {
		fmt.Fprintln(a.io.err, "warning: "+w)
	}
	return p
}

// describeRestore says, per blob, what its restore will do — named blobs a page each, --all in one summary — and
// which blobs it leaves where they are, and why.
func (o *restoreOptions) describe(cfg rules.Config, p *replay.RestorePreview) {
	a := o.f
	force := present.ForceFlag
	if o.all {
		force = present.ForceByName // (--all takes no --force)
	}
	if !o.all {
		for i := range p.Entries {
			if e := &p.Entries[i]; e.Detail != nil {
				fmt.Fprintf(a.io.err, "%s\n", textfmt.Printable(e.Name))
				for _, line := range present.Explain(e.Detail, cfg) {
					fmt.Fprintf(a.io.err, "  %s\n", line)
				}
			}
		}
	}
	if left := p.Left(); len(left) > 0 && (o.dryRun || o.yes) {
		// Nobody is asked: the results list each one, with why — said once.
		fmt.Fprintf(a.io.err, "%d blob(s) are refused or unreadable and left where they are (each below, with why).\n", len(left))
	} else if len(left) > 0 {
		fmt.Fprintf(a.io.err, "%d blob(s) are refused or unreadable and left where they are:\n", len(left))
		for _, r := range left {
			fmt.Fprintf(a.io.err, "  %s: %s %s\n", textfmt.Printable(r.Name), r.Outcome, present.Reason(r.Reason, force))
		}
	}
	if o.all {
		n := p.Counts()
		fmt.Fprintf(a.io.err, "%d quarantine blob(s) to restore: %d event(s) resume.\n", n.Writes, n.Resume)
	}
}
