package main

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/store/azureblob"
	"github.com/spf13/cobra"
)

// contextCmd is kubectl's habit: list the contexts, pick the current one, show one.
func newCmdContext(a *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "context list|use NAME|show [NAME]",
		Short: "named containers from the config file: list them, pick the current one, show one",
		Long: `A config file (--config, DEADLETTER_CONFIG, or config.yaml in the user's config directory) names contexts — a
container each, with its own settings — and the current one. Every command that looks at an estate runs in the
current context unless --context names another; flags still beat a context's values, and a context beats the
environment. Secrets never live in the file: a context names the environment variable that holds its connection
string (connection-string-env), or signs in with Entra ID (account-url).

  current-context: prod
  contexts:
    - name: dev
      dir: /var/tmp/deadletter-dev
    - name: prod
      account-url: https://estateprod.blob.core.windows.net
      container: deadletter
      handlers: /etc/deadletter/handlers.json
      read-only: true

Keys of a context: ` + strings.Join(contextKeys, ", ") + `.`,
		Args: cobra.NoArgs,
	}
	var listOut, showOut *output
	list := &cobra.Command{
		Use:   "list",
		Short: "every context, the current one marked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cf, err := a.mustConfig(cmd)
			if err != nil {
				return err
			}
			if listOut.json() {
				if err := writeJSON(a.io.out, toContextListJSON(cf)); err != nil {
					return err
				}
			}
			for _, c := range cf.Contexts {
				if listOut.json() {
					break
				}
				mark := " "
				if c.Name == cf.Current {
					mark = "*"
				}
				if c.Err != nil {
					fmt.Fprintf(a.io.out, "%s %-16s (cannot be used: see below)\n", mark, textfmt.Printable(c.Name))
					continue
				}
				fmt.Fprintf(a.io.out, "%s %-16s %s\n", mark, textfmt.Printable(c.Name), textfmt.Printable(azureblob.Scrub(where(c))))
			}
			if errs := cf.problems(); len(errs) > 0 {
				for _, e := range errs[1:] {
					fmt.Fprintln(a.io.err, "deadletter: "+errorText(e))
				}
				return errs[0] // (each context that is wrong stops only the commands that run in it)
			}
			return nil
		},
	}
	use := &cobra.Command{
		Use:               "use NAME",
		Short:             "make NAME the current context (written to the config file)",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeContexts,
		RunE: func(cmd *cobra.Command, args []string) error {
			cf, err := a.mustConfig(cmd)
			if err != nil {
				return err
			}
			if err := cf.setCurrent(args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.io.out, "switched to context %q (%s)\n", args[0], textfmt.Printable(cf.Path))
			return nil
		},
	}
	show := &cobra.Command{
		Use:               "show [NAME]",
		Short:             "a context's container and settings (the current one by default)",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeContexts,
		RunE: func(cmd *cobra.Command, args []string) error {
			cf, err := a.mustConfig(cmd)
			if err != nil {
				return err
			}
			name := cf.Current
			if len(args) == 1 {
				name = args[0]
			}
			c := cf.find(name)
			if c == nil {
				return usagef("no context %q in %s (have: %s)", textfmt.Printable(name), textfmt.Printable(cf.Path), strings.Join(cf.printableNames(), ", "))
			}
			if c.Err != nil {
				return c.Err
			}
			if showOut.json() {
				return writeJSON(a.io.out, toContextJSON(cf, c))
			}
			fmt.Fprintf(a.io.out, "context %s (%s, line %d)\n", textfmt.Printable(c.Name), textfmt.Printable(cf.Path), c.Line)
			for _, k := range contextKeys {
				if v, ok := c.Values[k]; ok && k != "name" {
					fmt.Fprintf(a.io.out, "  %-22s %s\n", k, textfmt.Printable(azureblob.Scrub(v))) // a SAS in an account-url is never printed
				}
			}
			return nil
		},
	}
	listOut = declareOutput(list, outText, outJSON)
	showOut = declareOutput(show, outText, outJSON)
	cmd.AddCommand(list, use, show)
	return cmd
}

// where says a context's container in a few words.
func where(c namedContext) string {
	switch {
	case c.Values["dir"] != "":
		return "dir:" + c.Values["dir"]
	case c.Values["account-url"] != "":
		return c.Values["account-url"] + " / " + cmp.Or(c.Values["container"], "deadletter")
	}
	return "$" + c.Values["connection-string-env"] + " / " + cmp.Or(c.Values["container"], "deadletter")
}

// mustConfig is the config file, which the context commands need.
func (f *factory) mustConfig(cmd *cobra.Command) (*configFile, error) {
	cf, err := f.loadConfig(cmd.Flags())
	if err != nil {
		return nil, err
	}
	if cf == nil {
		return nil, usagef("no config file at %s: write one (deadletter context --help shows its shape) or pass --config", textfmt.Printable(defaultConfigPath()))
	}
	return cf, nil
}

// completeContexts completes a context's name from the config file.
func (f *factory) completeContexts(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	cf, err := f.loadConfig(cmd.Flags())
	if err != nil || cf == nil || len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, n := range cf.names() {
		if textfmt.Printable(n) == n {
			names = append(names, n) // a name with a control character or a bidi override is never offered
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// contextListJSON is context list -o json: every context, and which is current.
type contextListJSON struct {
	Current  text              `json:"current"`
	Contexts []contextLineJSON `json:"contexts"`
}

type contextLineJSON struct {
	Name    text    `json:"name"`
	Current bool    `json:"current"`
	Where   text    `json:"where,omitempty"`
	Error   optText `json:"error,omitempty"`
}

// contextJSON is context show -o json: a context's settings as the file gives them (a SAS scrubbed).
type contextJSON struct {
	Name    text            `json:"name"`
	Config  text            `json:"config"`
	Line    int             `json:"line"`
	Current bool            `json:"current"`
	Values  map[string]text `json:"values"`
}

func toContextListJSON(cf *configFile) contextListJSON {
	out := contextListJSON{Current: text(cf.Current), Contexts: []contextLineJSON{}}
	for _, c := range cf.Contexts {
		l := contextLineJSON{Name: text(c.Name), Current: c.Name == cf.Current}
		if c.Err != nil {
			l.Error = optText(errorText(c.Err))
		} else {
			l.Where = text(azureblob.Scrub(where(c)))
		}
		out.Contexts = append(out.Contexts, l)
	}
	return out
}

func toContextJSON(cf *configFile, c *namedContext) contextJSON {
	out := contextJSON{Name: text(c.Name), Config: text(cf.Path), Line: c.Line, Current: c.Name == cf.Current, Values: map[string]text{}}
	for k, v := range c.Values {
		if k != "name" {
			out.Values[k] = text(azureblob.Scrub(v))
		}
	}
	return out
}
