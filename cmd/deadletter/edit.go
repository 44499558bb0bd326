package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/deadletter/deadletter/internal/opfile"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
	"github.com/spf13/cobra"
)

type editOptions struct {
	repairFlags
	name string
}

func newCmdEdit(f *factory, runF func(context.Context, *editOptions) error) *cobra.Command {
	o := &editOptions{repairFlags: repairFlags{f: f, action: record.ActEdit}}
	cmd := &cobra.Command{
		Use:         "edit NAME",
		Short:       "fix a payload in your editor and send it back through the replay",
		Annotations: lookingAtAnEstate(),
		Long: `edit opens a blob's payload in $VISUAL or $EDITOR (a temporary file only you can read, removed after). When
the editor exits it shows what the replay will do with the edited payload — replayable, quarantined and why,
malformed and where, a crash — beside what it would have done before, and asks. On yes it writes the edit as a new
dead letter at the container root, in the original's subscription and hour folder (If-None-Match *, so a
BlobCreated reaches the replay), named <original>.repaired-<its Last-Modified>.json (a retry finds it and never
writes twice), and only after that landed deletes the original — a quarantine copy or a root blob, only if
unchanged (If-Match); an archived record is never touched. An edit that changes nothing, or would still be
quarantined or crash, is refused (exit 3) unless --force, as is a live root blob, whose own trigger may still
arrive. An original changed since it was opened is neither written over nor deleted: the edit is kept in a file,
and the report says where.`,
		Example: `  deadletter edit 3f2a9c1e
  EDITOR="code --wait" deadletter edit quarantine/WEBHOOKS/2026/3/14/9/3f2a9c1e-….json`,
		Args:              exactArgs(1, "edit takes one blob name (or its URL, GUID or a unique fragment)"),
		ValidArgsFunction: f.completeNames(replay.AnyBlob),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name, o.via = args[0], via(cmd)
			return runWith(runF, runEdit)(cmd.Context(), o)
		},
	}
	o.register(cmd)
	return cmd
}

func runEdit(ctx context.Context, o *editOptions) error {
	a, arg := o.f, o.name
	if a.g.readOnly && !o.dryRun {
		return replay.ErrReadOnly
	}
	if !o.yes && !o.dryRun && !a.isTerminal() { // said before the editor opens, not after the edit is made
		return usagef("not on a terminal: pass --yes to write the edit when the editor exits (or --dry-run to look first)")
	}
	s, err := a.session(ctx, a.timeout(0))
	if err != nil {
		return err
	}
	l, cfg := s.Loader(), s.Config()
	name, err := replay.ResolveRepairable(ctx, a.io.err, l, arg, a.g.container)
	if err != nil {
		return couldNotLook(ctx, err)
	}
	b, err := l.Container.Read(ctx, name, store.MaxBlobBytes)
	if err != nil {
		return couldNotLook(ctx, err)
	}
	now, err := serviceNow(ctx, l.Container, b.ServiceTime)
	if err != nil {
		return couldNotLook(ctx, err)
	}
	edited, err := editBytes(a.io, name, b.Body)
	if err != nil {
		return err
	}
	rp, err := replay.PlanRepair(ctx, l.Container, cfg, cfg.OriginalOf(b.BlobInfo, b.Body, now), edited)
	if err != nil {
		return couldNotLook(ctx, err)
	}
	return o.repair(ctx, s, &rp, keepEdit(name, edited))
}

// editBytes hands body to the operator's editor in a temporary file only they can read, and returns what they
// saved; the file is removed after. An editor that fails (or is killed) ends the edit with nothing written.
func editBytes(io stdio, name string, body []byte) ([]byte, error) {
	tmp, err := opfile.Temp("deadletter-edit-*.json", body)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	ed, editor := opfile.Editor(tmp)
	ed.Stdin = io.in
	ed.Stdout, ed.Stderr = io.err, io.err // (standard output may be --json for a script)
	if f, ok := fileOf(io.err); ok {
		ed.Stdout, ed.Stderr = f, f
	}
	fmt.Fprintf(io.err, "editing %s in %s\n", textfmt.Printable(name), textfmt.Printable(editor))
	if err := ed.Run(); err != nil {
		return nil, fmt.Errorf("the editor (%s) did not finish: %w; nothing was written", textfmt.Printable(editor), err)
	}
	edited, err := opfile.ReadRegularNoFollow(tmp, store.MaxBlobBytes)
	var nr *opfile.NotRegularError
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("the editor removed the file it was given: nothing was written")
	case errors.As(err, &nr):
		return nil, fmt.Errorf("the editor left %s in place of the file it was given (not followed): nothing was written", opfile.FileKind(nr.Mode))
	case errors.Is(err, opfile.ErrTooLarge):
		return nil, errors.New("the edited payload is over 64 MiB: not a dead letter Event Grid would write; nothing was written")
	}
	return edited, err
}
