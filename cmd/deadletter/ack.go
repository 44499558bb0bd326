package main

import (
	"context"
	"fmt"
	"time"

	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/spf13/cobra"
)

type ackOptions struct {
	f *factory
	actionFlags
	dur      time.Duration
	note, by string
	clear    bool
	filter   blobFilter
	names    []string
	via      string
}

func newCmdAck(f *factory, runF func(context.Context, *ackOptions) error) *cobra.Command {
	o := &ackOptions{f: f, dur: 24 * time.Hour}
	cmd := &cobra.Command{
		Use:   "ack NAME... | --filter QUERY  [--for D] [--note TEXT] [--by WHO] | ack --clear NAME...",
		Short: "acknowledge blobs: they stay visible but raise no finding until the ack expires or the blob changes",
		Example: `  deadletter ack 6cfb4200 --for 4h --note "INC-1234: webhook vendor down"
  deadletter ack --clear 6cfb4200`,
		Annotations: lookingAtAnEstate(),
		Long: `ack records that someone has seen a blob and is handling it. The blob stays in every list (dimmed, with who,
until when and the note) but check, watch and the badges stop counting it until --for runs out (default 24h) or
the blob changes (a drain, the replay). The ack lives in the blob's index tags — shared by everyone who looks, and
setting it changes neither the blob's ETag nor its Last-Modified, so the lifecycle clock does not move. On Azure it
needs the tags/write data action (Storage Blob Data Owner, or a custom role).`,
		ValidArgsFunction: f.completeNames(replay.AnyBlob),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.names, o.via = args, via(cmd)
			return runWith(runF, runAck)(cmd.Context(), o)
		},
	}
	o.register(cmd, true)
	fs := cmd.Flags()
	durationVar(fs, &o.dur, "for", "how long the acknowledgement holds (3d, 12h)")
	fs.StringVar(&o.note, "note", "", "what is being done about it")
	fs.StringVar(&o.by, "by", "", "who acknowledges (default: user@host)")
	fs.BoolVar(&o.clear, "clear", false, "remove the acknowledgement")
	o.filter.queryFlag(cmd, "acknowledge (or --clear) every blob of")
	return cmd
}

// check refuses what an ack of names cannot be asked.
func (o *ackOptions) check(names []string) error {
	switch {
	case len(names) == 0 && o.filter.query == "" && o.filter.view == "":
		return usagef("ack needs blob names (or their GUIDs or fragments), or --filter or --view")
	case len(names) > 0 && (o.filter.query != "" || o.filter.view != ""):
		return usagef("ack takes names or --filter/--view, not both")
	}
	if err := o.validate(); err != nil {
		return err
	}
	return o.filter.validate(o.f)
}

func runAck(ctx context.Context, o *ackOptions) error {
	a, names := o.f, o.names
	if err := o.check(names); err != nil {
		return err
	}
	if !o.clear && (o.dur <= 0 || o.dur > a.g.rules().AckLimit()) {
		return usagef("--for must be positive and at most %s (--max-ack, never past --retention)", textfmt.Duration(a.g.rules().AckLimit()))
	}
	if a.g.readOnly && !o.dryRun { // (a dry run changes nothing: read-only allows it)
		return replay.ErrReadOnly
	}
	if o.by == "" {
		o.by = defaultAckBy()
	}
	s, err := a.session(ctx, a.timeout(0))
	if err != nil {
		return err
	}
	snap, err := s.List(ctx)
	listedAt := time.Now()
	if err != nil {
		return couldNotLook(ctx, err)
	}
	items, missing, err := o.taken(ctx, s, snap)
	if err != nil {
		return err
	}
	p := s.PreviewAck(items, snap.Now)
	o.sayPreview(p)
	verb := fmt.Sprintf("Acknowledge %d blob(s) for %s?", len(p.Targets), textfmt.Duration(o.dur))
	if o.clear {
		verb = fmt.Sprintf("Clear the acknowledgement of %d blob(s)?", len(p.Targets))
	}
	if len(p.Targets) > 0 {
		if err := a.confirm(o.actionFlags, s.Estate(), verb); err != nil {
			return err
		}
	}
	// (a dry run: what the ack would write on each target, written nowhere — wouldAck, wouldClear)
	done, err := s.Acknowledge(ctx, p, session.Ack{For: o.dur, Note: o.note, By: o.by, Clear: o.clear, Now: snap.Since(listedAt, time.Now())},
		session.Run{DryRun: o.dryRun, Concurrency: o.concurrency, Via: o.via})
	a.warnAll(done.Warnings)
	if err != nil {
		return err
	}
	return a.reportResults(ctx, o.actionFlags, s, append(append(missing, p.Left...), done.Results...))
}

// ackTaken is what an ack takes: the named blobs (and the names that match nothing), or every blob --filter keeps.
func (o *ackOptions) taken(ctx context.Context, s *session.Session, snap *rules.Snapshot) ([]rules.Item, []rules.Result, error) {
	var items []rules.Item
	if o.filter.query != "" {
		keep := o.filter.selectBy(ctx, s.Loader(), s.Config(), snap, func(*rules.Item) bool { return true })
		for i := range snap.Items {
			if keep(snap.Items[i]) {
				items = append(items, *snap.Items[i])
			}
		}
		return items, nil, nil
	}
	found, missing, err := replay.ResolveNamed(o.f.io.err, snap, o.f.g.container, o.names, replay.AnyBlob)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range found {
		i, _ := snap.Lookup(n)
		items = append(items, *snap.Items[i])
	}
	return items, missing, nil
}

// sayAckPreview notes on stderr what an ack will not change: the blobs the lifecycle rule deletes before it ends
// (not for a clear), and the blobs it leaves, and why.
func (o *ackOptions) sayPreview(p rules.AckPreview) {
	a := o.f
	if !o.clear {
		for _, e := range p.Expiring {
			fmt.Fprintf(a.io.err, "note: %s\n", present.AckExpiringNote(e.Name, e.DeletesIn))
		}
	}
	for _, r := range p.Left {
		fmt.Fprintf(a.io.err, "%s: %s\n", textfmt.Printable(r.Name), present.Reason(r.Reason, present.ForceFlag))
	}
}
