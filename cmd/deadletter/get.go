package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/deadletter/deadletter/internal/opfile"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
)

type getOptions struct {
	f        *factory
	to, name string
}

func newCmdGet(f *factory, runF func(context.Context, *getOptions) error) *cobra.Command {
	o := &getOptions{f: f}
	cmd := &cobra.Command{
		Use:         "get NAME [--to FILE]",
		Short:       "write one blob's exact bytes to a file or a pipe",
		Annotations: lookingAtAnEstate(),
		Long: `get writes a blob's payload exactly as it is stored — every byte, hostile ones included — to standard output
or, with --to, to a new file readable by you only (an existing file is never written over). It refuses to write the
raw bytes to a terminal, as curl does: a payload can hold escape sequences that would take the terminal over
(show prints it escaped). Fix a payload and send it back with resubmit, or do both at once with edit.`,
		Example: `  deadletter get 3f2a9c1e --to payload.json
  deadletter get quarantine/WEBHOOKS/2026/3/14/9/3f2a9c1e-….json | jq .`,
		Args:              exactArgs(1, "get takes one blob name (or its URL, GUID or a unique fragment)"),
		ValidArgsFunction: f.completeNames(replay.AnyBlob),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return runWith(runF, runGet)(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.to, "to", "", "write to this new file (0600; never over an existing one) instead of standard output")
	return cmd
}

func runGet(ctx context.Context, o *getOptions) error {
	f := o.f
	if o.to == "-" { // the usual name of standard output, never a file called -
		o.to = ""
	}
	if o.to == "" {
		if out, ok := fileOf(f.io.out); ok && isatty.IsTerminal(out.Fd()) {
			return usagef("get writes the payload's raw bytes, and standard output is a terminal: pipe it, or name a file with --to (show prints it escaped)")
		}
	}
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
	b, err := s.Container().Read(ctx, name, store.MaxBlobBytes)
	if errors.Is(err, store.ErrTooLarge) {
		return fmt.Errorf("%s is over %d MiB, so not a dead letter Event Grid wrote: not read", textfmt.Printable(name), store.MaxBlobBytes>>20)
	}
	if err != nil {
		return couldNotLook(ctx, err)
	}
	if o.to == "" {
		_, err := f.io.out.Write(b.Body)
		return err
	}
	if err := opfile.WriteNew(o.to, b.Body); err != nil {
		return err
	}
	fmt.Fprintf(f.io.err, "%s: %s written to %s (etag %s)\n", textfmt.Printable(name), textfmt.Bytes(int64(len(b.Body))), textfmt.Printable(o.to), textfmt.Printable(b.ETag))
	return nil
}
