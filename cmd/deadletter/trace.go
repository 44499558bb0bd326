package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/spf13/cobra"
)

type traceOptions struct {
	f     *factory
	out   *printFlags
	asked string
	event bool
}

func newCmdTrace(f *factory, runF func(context.Context, *traceOptions) error) *cobra.Command {
	o := &traceOptions{f: f}
	cmd := &cobra.Command{
		Use:   "trace ID|NAME",
		Short: "an event's journey: every pass, by its id, to where it stands now",
		Example: `  deadletter trace 74c6b959-1b5e-4f6c-9a43-3f0c2d0b9c11     # an event id, with or without its |n
  deadletter trace 6cfb4200                                  # a blob: the journey of each of its events
  deadletter trace --event a/b -o json`,
		Annotations: lookingAtAnEstate(),
		Long: `trace follows events by their original id (the id without the replay's |n count) through every blob that
holds them — root dead letters, archived/ and quarantine/ copies, restored and repaired copies — and the record of
every action that touched those blobs: one line a pass (dead-lettered when, where, at which attempt, and what
became of it), then where the event stands now, in the estate's states (docs/estate.md): dead-lettered,
discarded, delivering, presumed delivered, quarantined, expired.

ID|NAME is read as a blob when it picks one out (its name, URL, GUID or a fragment, as show takes it; a blob the
record names that is gone is said so), else as an event id (--event: always). Exit 1 when no blob holds it.`,
		Args: exactArgs(1, "trace takes one event id or blob name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.asked = args[0]
			return runWith(runF, runTrace)(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.event, "event", false, "read the argument as an event id, never as a blob's name")
	o.out = declareOutput(cmd, outText, outJSON)
	return cmd
}

func runTrace(ctx context.Context, o *traceOptions) error {
	f := o.f
	ctx, cancel := f.withTimeout(ctx, lookTimeout)
	defer cancel()
	s, err := f.session(ctx, f.timeout(lookTimeout))
	if err != nil {
		return err
	}
	snap, err := s.List(ctx)
	if err != nil {
		return couldNotLook(ctx, err)
	}
	h, err := s.History(ctx)
	if err != nil {
		return err
	}
	f.saySkipped(h.Skipped)
	t, err := s.Loader().Trace(ctx, snap, o.asked, f.g.container, o.event, record.Touches(h.Records))
	if err != nil {
		return couldNotLook(ctx, err)
	}
	doc := output.ToTraceJSON(t)
	doc.Rehearsal = s.Rehearsal()
	if err := o.out.print(f.io.out, doc, func() { f.sayRehearsal(s); writeTrace(f.io.out, t, s.Config(), snap.Now) }); err != nil {
		return err
	}
	switch {
	case t.Gone || len(t.Journeys) > 0:
		return nil
	case t.Blob != "" && t.Malformed != "":
		return exitCode{code: exitFindings, err: fmt.Errorf("%s holds no event id to follow: its payload is malformed (%s)", textfmt.Printable(t.Blob), textfmt.Printable(t.Malformed))}
	case t.Blob != "":
		return exitCode{code: exitFindings, err: fmt.Errorf("%s holds no event to follow", textfmt.Printable(t.Blob))}
	}
	return exitCode{code: exitFindings, err: fmt.Errorf("no blob in %s holds an event with the id %q, and no blob is named so",
		textfmt.Printable(s.Where()), textfmt.Printable(o.asked))}
}

// writeTrace prints journeys for a person: where each event stands, then its passes, oldest first.
func writeTrace(w io.Writer, t *replay.Traced, cfg rules.Config, now time.Time) {
	if t.Blob != "" {
		if t.Gone {
			fmt.Fprintf(w, "%s is gone: only the record remembers it (its events cannot be followed by id any more)\n", textfmt.Printable(t.Blob))
			for _, x := range t.Touches {
				fmt.Fprintf(w, "  %s %s by %s: %s\n", x.Action, textfmt.Time(x.At), textfmt.Printable(x.By), textfmt.Printable(x.Outcome))
			}
			return
		}
		fmt.Fprintf(w, "%s: %d event(s)\n", textfmt.Printable(t.Blob), len(t.Journeys))
		if t.Malformed != "" {
			fmt.Fprintf(w, "its payload is malformed (%s): the events below are a best-effort reading\n", textfmt.Printable(t.Malformed))
		}
		if t.Fragment {
			fmt.Fprintf(w, "(%q picked out this blob by its name; to follow an event with exactly that id: trace --event)\n", textfmt.Printable(t.Asked))
		}
		fmt.Fprintln(w)
	}
	for i, j := range t.Journeys {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if len(j.Passes) == 0 {
			continue
		}
		fmt.Fprintln(w, present.JourneyHeadline(j, cfg, now))
		for n, p := range j.Passes {
			fmt.Fprintf(w, "  %s\n", present.PassLine(n+1, p, cfg.Separator))
		}
	}
	fmt.Fprintf(w, "\n(%d payload(s) read)\n", t.Read)
}
