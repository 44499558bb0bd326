package main

import (
	"fmt"
	"strings"

	"github.com/deadletter/deadletter/internal/record"
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
func (f *factory) warnAll(warnings []string) {
	for _, w := range warnings {
		fmt.Fprintln(f.io.err, "deadletter: warning: "+textfmt.Printable(w))
	}
}

// saySkipped says, on stderr, each line of the record that could not be read and was skipped (a newer build's, a
// cut or planted line): the rest of the record is read and shown.
func (f *factory) saySkipped(skipped []*record.LineError) {
	for _, e := range skipped {
		fmt.Fprintf(f.io.err, "deadletter: warning: the record's %s — skipped\n", textfmt.Printable(e.Error()))
	}
}
