package main

import (
	"bytes"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// setHelp gives every command a help that fits the terminal: on one, each line longer than its
// width wraps at a word, continued under where its text starts (a flag's description under the description
// column); piped, help prints as it is.
func (f *factory) setHelp(root *cobra.Command) {
	plain := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		defer hideGlobalsNotRead(c)()
		width, ok := terminalWidth(f.io.out)
		if !ok {
			plain(c, args)
			return
		}
		var buf bytes.Buffer
		c.SetOut(&buf)
		plain(c, args)
		c.SetOut(f.io.out)
		f.io.out.Write([]byte(wrapHelp(buf.String(), width)))
	})
}

// globalsRead are the global flags the commands that take no estate (or only its bytes) read (and their subcommands): their help lists
// only these, not --account-url, --ttl, --read-only and the rest they would ignore.
var globalsRead = map[string][]string{"twin": {"dir", "config"},
	"version": {}, "completion": {}, "context": {"config"},
	// get reads one blob's bytes: where the container is, and nothing of the estate's rules.
	"get": {"dir", "connection-string", "connection-string-file", "account-url", "container", "config", "context", "timeout"},
	// twin start runs the twin by the estate's rules, and --from reads its SOURCE as a command that looks at an
	// estate does (its register, container and the witness's topics included).
	"twin start": {"dir", "config", "container", "handlers", "ttl", "live-grace", "retention", "expiring-within", "max-replays",
		"id-separator", "node-stack-depth", "event-grid-topics", "replay-system-topic", "function-app", "witness-window", "timeout"}}

// hideGlobalsNotRead hides, for one help text, the global flags c does not read; the returned func shows them again.
func hideGlobalsNotRead(c *cobra.Command) func() {
	var read []string
	for p := c; p != nil; p = p.Parent() {
		if r, ok := globalsRead[p.Name()]; ok && p.HasParent() && !p.Parent().HasParent() && read == nil {
			read = r
		}
	}
	if r, ok := globalsRead[strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")]; ok {
		read = r // the command's own list, over its group's
	}
	if read == nil {
		return func() {}
	}
	var hidden []*pflag.Flag
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && !slices.Contains(read, f.Name) && f.Name != "help" {
			f.Hidden = true
			hidden = append(hidden, f)
		}
	})
	return func() {
		for _, f := range hidden {
			f.Hidden = false
		}
	}
}
