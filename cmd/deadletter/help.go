package main

import (
	"bytes"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// examples are each command's Examples section: what an operator types first.
var examples = map[string]string{
	"deadletter": `  deadletter --connection-string "$AZURE_STORAGE_ACCOUNT_CONNECTION_STRING"    # the dashboard
  deadletter --account-url https://estate.blob.core.windows.net --read-only   # signed in, looking only
  deadletter demo                                                            # a rehearsal estate`,
	"ls": `  deadletter ls --pane stranded
  deadletter ls --subscription webhooks --older-than 2d -o wide
  deadletter ls --jsonl | jq -r 'select(.expiring) | .name'`,
	"show": `  deadletter show 6cfb4200                 # a unique fragment of the name
  deadletter show WEBHOOKS/2026/11/30/19/6cfb4200-69c9-ee25-2bdd-2bcae3e70162.json --json`,
	"drain": `  deadletter drain --dry-run              # what it would do, and whether each handler still fails
  deadletter drain 6cfb4200 --yes
  deadletter drain --json --yes | jq '.readiness'`,
	"restore": `  deadletter restore quarantine/WEBHOOKS/2026/11/30/20/30e3f153-57de-4c19-983f-484619a0e9e2.json
  deadletter restore --all --subscription friend-requests --dry-run
  deadletter restore 30e3f153 --force --yes`,
	"ack": `  deadletter ack 6cfb4200 --for 4h --note "INC-1234: webhook vendor down"
  deadletter ack --clear 6cfb4200`,
	"check": `  deadletter check || page-oncall          # exit 1 on findings, 2 when it could not look
  deadletter check --json | jq '.findings[].kind'`,
	"watch": `  deadletter watch --interval 1m --exec ./notify.sh
  deadletter watch --metrics-addr 127.0.0.1:9464`,
	"report": `  deadletter report --since 24h > postmortem.md
  deadletter report --format json | jq '.readiness'`,
	"seed": `  deadletter seed --dir ./incident
  deadletter seed --connection-string "UseDevelopmentStorage=true"`,
	"demo": `  deadletter demo`,
}

// setHelp gives every command its examples and a help that fits the terminal: on one, each line longer than its
// width wraps at a word, continued under where its text starts (a flag's description under the description
// column); piped, help prints as it is.
func (a *app) setHelp(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if ex, ok := examples[c.Name()]; ok && c.Example == "" {
			c.Example = ex
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	plain := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		defer hideGlobalsNotRead(c)()
		width, ok := terminalWidth(a.io.out)
		if !ok {
			plain(c, args)
			return
		}
		var buf bytes.Buffer
		c.SetOut(&buf)
		plain(c, args)
		c.SetOut(a.io.out)
		a.io.out.Write([]byte(wrapHelp(buf.String(), width)))
	})
}

// globalsRead are the global flags the commands that take no estate read (and their subcommands): their help lists
// only these, not --account-url, --ttl, --read-only and the rest they would ignore.
var globalsRead = map[string][]string{"twin": {"dir", "config"}}

// hideGlobalsNotRead hides, for one help text, the global flags c does not read; the returned func shows them again.
func hideGlobalsNotRead(c *cobra.Command) func() {
	var read []string
	for p := c; p != nil; p = p.Parent() {
		if r, ok := globalsRead[p.Name()]; ok && p.HasParent() && !p.Parent().HasParent() {
			read = r
		}
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
