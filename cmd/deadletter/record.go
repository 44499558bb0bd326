package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// via is the command that asked, as a record names it: its words and the flags given — the values only of the
// flags that say what the action selected and how (keptValues: a filter's words are no secret), never the others'
// (a flag may hold a connection string, a path, an account).
func via(cmd *cobra.Command) string {
	parts := []string{cmd.CommandPath()}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if !slices.Contains(keptValues, f.Name) || f.Value.Type() == "bool" {
			parts = append(parts, "--"+f.Name)
			return
		}
		v := f.Value.String()
		if v == "" || strings.ContainsAny(v, " \t'\"\\$`") {
			v = strconv.Quote(v)
		}
		parts = append(parts, "--"+f.Name+" "+v)
	})
	return strings.Join(parts, " ")
}

// keptValues are the flags whose values a record keeps: what an action took and how it went about it.
var keptValues = []string{"filter", "view", "pane", "subscription", "verdict", "older-than", "rate", "canary-wait", "for", "concurrency"}

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
