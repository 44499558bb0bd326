package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// via is the command that asked, as a record names it: its words and the names of the flags given — never their
// values (a flag may hold a connection string).
func via(cmd *cobra.Command) string {
	parts := []string{cmd.CommandPath()}
	cmd.Flags().Visit(func(f *pflag.Flag) { parts = append(parts, "--"+f.Name) })
	return strings.Join(parts, " ")
}

// warnAll says on stderr what an action's record could not keep.
func (a *app) warnAll(warnings []string) {
	for _, w := range warnings {
		fmt.Fprintln(a.io.err, "deadletter: warning: "+textfmt.Printable(w))
	}
}

// saySkipped says, on stderr, each line of the record that could not be read and was skipped (a newer build's, a
// cut or planted line): the rest of the record is read and shown.
func (a *app) saySkipped(skipped []*record.LineError) {
	for _, e := range skipped {
		fmt.Fprintf(a.io.err, "deadletter: warning: the record's %s — skipped\n", textfmt.Printable(e.Error()))
	}
}

// recordTwinScript records a change to a twin's script (twin script set) on the twin's session s: change runs
// between its intent (a local record that cannot be written stops it) and its outcome. now is the twin's clock;
// said is deadletter's words for it (no payload).
func (a *app) recordTwinScript(ctx context.Context, cmd *cobra.Command, s *session.Session, now time.Time, said string, change func() error) error {
	done, err := s.RecordScriptChange(ctx, via(cmd), func() time.Time { return now }, said, change)
	a.warnAll(done.Warnings)
	return err
}
