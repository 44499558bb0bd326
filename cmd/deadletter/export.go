package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/spf13/cobra"
)

type exportOptions struct {
	to     string
	all    bool
	out    *output
	filter blobFilter // --filter QUERY and ls's narrowing flags
}

func (a *app) exportCmd() *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:         "export NAME... --to DIR | export --all [filters] --to DIR | export --filter QUERY --to DIR",
		Short:       "copy blobs, with their metadata and tags, into a directory that --dir opens as a container",
		Annotations: lookingAtAnEstate(),
		Long: `export copies blobs — their bytes, content type, metadata, index tags and Last-Modified — into DIR in the
directory backend's own format, so deadletter --dir DIR opens the export as a container (show, check, report, a
twin). It never writes over a file: a name DIR already holds is left and reported. It refuses names that differ
from another's only by case (one file on a case-insensitive disk) or that would fall under the directory's own
.deadletter folder, never follows a link, and writes files readable by you only (0600, folders 0700): these are
production payloads on a laptop. --all takes every blob, narrowed by ls's filters (--pane, --subscription,
--verdict, --older-than); --filter takes the blobs the dashboard's filter QUERY shows (sub:, reason:, hour:,
is:, verdict: and plain words, as / types them). The handler register is not part of a container: pass --handlers with --dir DIR.`,
		Example: `  deadletter export --all --pane quarantine --to ./incident-1130
  deadletter export --filter 'sub:webhooks is:malformed' --to ./webhooks-malformed
  deadletter --dir ./incident-1130 check`,
		ValidArgsFunction: a.completeNames(anyBlob),
		RunE:              func(cmd *cobra.Command, args []string) error { return a.runExport(cmd, args, &o) },
	}
	cmd.Flags().StringVar(&o.to, "to", "", "the directory to export into (created 0700 when missing)")
	cmd.Flags().BoolVar(&o.all, "all", false, "every blob the filters keep")
	o.out = declareOutput(cmd, outText, outJSON)
	o.filter.flags(cmd)
	cmd.MarkFlagDirname("to")
	return cmd
}

func (a *app) runExport(cmd *cobra.Command, args []string, o *exportOptions) error {
	narrowed := o.filter.pane != "" || o.filter.subscription != "" || o.filter.verdict != "" || o.filter.olderThan != 0
	switch {
	case o.to == "":
		return usagef("export needs --to DIR: the directory to write the blobs into")
	case (o.all || o.filter.query != "") && len(args) > 0:
		return usagef("export takes names, or --all / --filter: not both")
	case !o.all && o.filter.query == "" && len(args) == 0:
		return usagef("export needs blob names (or their GUIDs or fragments), --all, or --filter QUERY")
	case !o.all && o.filter.query == "" && narrowed:
		return usagef("--pane, --subscription, --verdict and --older-than narrow --all or --filter")
	}
	if err := o.filter.validate(); err != nil {
		return err
	}
	if a.g.dir != "" && overlap(a.g.dir, o.to) { // the export's files would land in the container as blobs
		return usagef("--to %s and the container %s overlap: the export would write into what it copies", textfmt.Printable(o.to), textfmt.Printable(a.g.dir))
	}
	ctx := cmd.Context()
	snap, l, cfg, err := a.g.listed(ctx)
	if err != nil {
		return err
	}
	var names []string
	var missing []rules.Result
	switch {
	case o.all || o.filter.query != "":
		if o.filter.needsPayload() {
			l.HydrateWhere(ctx, snap, o.filter.listed)
		}
		for i := range snap.Items {
			if it := snap.Items[i]; o.filter.listed(it) && o.filter.read(cfg, it, snap.Now) {
				names = append(names, it.Name)
			}
		}
	default:
		if names, missing, err = resolveNamed(a.io.err, snap, a.g.container, args, anyBlob); err != nil {
			return err
		}
	}
	blobs := make([]store.BlobInfo, 0, len(names))
	for _, n := range names {
		if i, ok := snap.Lookup(n); ok {
			blobs = append(blobs, snap.Items[i].Info)
		}
	}
	dst, err := dirstore.CreatePrivate(o.to)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(o.to)
	res, err := store.Copy(ctx, dst, l.Container, blobs, store.CopyOptions{FoldCase: true, Check: dirstore.PortableName})
	if err != nil {
		return fmt.Errorf("export to %s: %w", textfmt.Printable(abs), err)
	}
	written, bytes := 0, int64(0)
	for _, c := range res {
		if c.Err == nil {
			written++
			bytes += c.Size
		}
	}
	if o.out.json() {
		out := toExportJSON(a.describe(l.Container), abs, res, missing)
		out.Rehearsal = rehearsal(l.Container)
		if err := writeJSON(a.io.out, out); err != nil {
			return err
		}
	} else {
		for _, c := range res {
			if c.Err != nil {
				fmt.Fprintf(a.io.out, "not written  %s: %s\n", textfmt.Printable(c.Name), textfmt.Printable(exportError(c.Err)))
			}
		}
		for _, r := range missing {
			fmt.Fprintf(a.io.out, "not found    %s: %s\n", textfmt.Printable(r.Name), textfmt.Printable(r.Reason.Err))
		}
		fmt.Fprintf(a.io.out, "%d blob(s) (%s) of %s written to %s; open it with deadletter --dir %s\n", written, textfmt.Bytes(bytes),
			textfmt.Printable(a.describe(l.Container)), textfmt.Printable(abs), textfmt.Printable(abs))
	}
	switch {
	case wasInterrupted(ctx):
		return exitCode{code: exitInterrupted, err: errors.New("interrupted: the blobs not reached were not exported")}
	case written < len(res) || len(missing) > 0:
		return exitCode{code: exitNotDone}
	}
	return nil
}

// exportError says why a blob was not exported, in the words an operator acts on.
func exportError(err error) string {
	switch {
	case errors.Is(err, store.ErrAlreadyExists):
		return "the directory holds that name already: never written over"
	case errors.Is(err, store.ErrCaseCollision):
		return err.Error() + ": one file on a case-insensitive disk; export it into another directory"
	}
	return err.Error()
}
