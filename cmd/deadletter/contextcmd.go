package main

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/store/azureblob"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newCmdContext is kubectl's habit: list the contexts, pick the current one, show one.
func newCmdContext(a *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "context list|use NAME|show [NAME]|add NAME",
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

Keys of a context: ` + strings.Join(session.ContextKeys, ", ") + `.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCmdContextList(a, nil), newCmdContextUse(a, nil), newCmdContextShow(a, nil), newCmdContextAdd(a, nil))
	return cmd
}

// contextOptions are what the context commands take: the config file, a context's name, how to print.
type contextOptions struct {
	f    *factory
	cmd  *cobra.Command
	name string
	out  *printFlags
}

func newCmdContextList(f *factory, runF func(context.Context, *contextOptions) error) *cobra.Command {
	o := &contextOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "every context, the current one marked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.cmd = cmd
			return runWith(runF, runContextList)(cmd.Context(), o)
		},
	}
	o.out = declareOutput(cmd, outText, outJSON)
	return cmd
}

func runContextList(_ context.Context, o *contextOptions) error {
	a := o.f
	cf, err := a.mustConfig(o.cmd)
	if err != nil {
		return err
	}
	err = o.out.print(a.io.out, toContextListJSON(cf), func() {
		for _, c := range cf.Contexts {
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
	})
	if err != nil {
		return err
	}
	if errs := cf.Problems(); len(errs) > 0 {
		for _, e := range errs[1:] {
			fmt.Fprintln(a.io.err, "deadletter: "+errorText(e))
		}
		return errs[0] // (each context that is wrong stops only the commands that run in it)
	}
	return nil
}

func newCmdContextUse(f *factory, runF func(context.Context, *contextOptions) error) *cobra.Command {
	o := &contextOptions{f: f}
	return &cobra.Command{
		Use:               "use NAME",
		Short:             "make NAME the current context (written to the config file)",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: f.completeContexts,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cmd, o.name = cmd, args[0]
			return runWith(runF, runContextUse)(cmd.Context(), o)
		},
	}
}

func runContextUse(_ context.Context, o *contextOptions) error {
	cf, err := o.f.mustConfig(o.cmd)
	if err != nil {
		return err
	}
	if err := cf.SetCurrent(o.name); err != nil {
		return err
	}
	fmt.Fprintf(o.f.io.out, "switched to context %q (%s)\n", o.name, textfmt.Printable(cf.Path))
	return nil
}

func newCmdContextShow(f *factory, runF func(context.Context, *contextOptions) error) *cobra.Command {
	o := &contextOptions{f: f}
	cmd := &cobra.Command{
		Use:               "show [NAME]",
		Short:             "a context's container and settings (the current one by default)",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: f.completeContexts,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cmd = cmd
			if len(args) == 1 {
				o.name = args[0]
			}
			return runWith(runF, runContextShow)(cmd.Context(), o)
		},
	}
	o.out = declareOutput(cmd, outText, outJSON)
	return cmd
}

func runContextShow(_ context.Context, o *contextOptions) error {
	a := o.f
	cf, err := a.mustConfig(o.cmd)
	if err != nil {
		return err
	}
	name := cmp.Or(o.name, cf.Current)
	c := cf.Find(name)
	if c == nil {
		return usagef("no context %q in %s (have: %s)", textfmt.Printable(name), textfmt.Printable(cf.Path), strings.Join(cf.PrintableNames(), ", "))
	}
	if c.Err != nil {
		return c.Err
	}
	return o.out.print(a.io.out, toContextJSON(cf, c), func() {
		fmt.Fprintf(a.io.out, "context %s (%s, line %d)\n", textfmt.Printable(c.Name), textfmt.Printable(cf.Path), c.Line)
		for _, k := range session.ContextKeys {
			if v, ok := c.Values[k]; ok && k != "name" {
				fmt.Fprintf(a.io.out, "  %-22s %s\n", k, textfmt.Printable(azureblob.Scrub(v))) // a SAS in an account-url is never printed
			}
		}
	})
}

// where says a context's container in a few words.
func where(c session.NamedContext) string {
	switch {
	case c.Values["dir"] != "":
		return "dir:" + c.Values["dir"]
	case c.Values["account-url"] != "":
		return c.Values["account-url"] + " / " + cmp.Or(c.Values["container"], "deadletter")
	}
	return "$" + c.Values["connection-string-env"] + " / " + cmp.Or(c.Values["container"], "deadletter")
}

// mustConfig is the config file, which the context commands need.
func (f *factory) mustConfig(cmd *cobra.Command) (*session.ConfigFile, error) {
	cf, err := f.loadConfig(cmd.Flags())
	if err != nil {
		return nil, err
	}
	if cf == nil {
		return nil, usagef("no config file at %s: write one (deadletter context --help shows its shape) or pass --config", textfmt.Printable(session.DefaultConfigPath()))
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
	for _, n := range cf.Names() {
		if textfmt.Printable(n) == n {
			names = append(names, n) // a name with a control character or a bidi override is never offered
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

func toContextListJSON(cf *session.ConfigFile) output.ContextListJSON {
	out := output.ContextListJSON{Current: output.Text(cf.Current), Contexts: []output.ContextLineJSON{}}
	for _, c := range cf.Contexts {
		l := output.ContextLineJSON{Name: output.Text(c.Name), Current: c.Name == cf.Current}
		if c.Err != nil {
			l.Error = output.OptText(errorText(c.Err))
		} else {
			l.Where = output.Text(azureblob.Scrub(where(c)))
		}
		out.Contexts = append(out.Contexts, l)
	}
	return out
}

func toContextJSON(cf *session.ConfigFile, c *session.NamedContext) output.ContextJSON {
	out := output.ContextJSON{Name: output.Text(c.Name), Config: output.Text(cf.Path), Line: c.Line, Current: c.Name == cf.Current, Values: map[string]output.Text{}}
	for k, v := range c.Values {
		if k != "name" {
			out.Values[k] = output.Text(azureblob.Scrub(v))
		}
	}
	return out
}

// contextAddOptions are context add's: the name, the variable naming the connection string, whether to use it.
type contextAddOptions struct {
	f       *factory
	cmd     *cobra.Command
	name    string
	connEnv string
	use     bool
}

func newCmdContextAdd(f *factory, runF func(context.Context, *contextAddOptions) error) *cobra.Command {
	o := &contextAddOptions{f: f}
	cmd := &cobra.Command{
		Use:   "add NAME (--dir D | --account-url URL | --connection-string-env VAR | --connection-string-file F) [settings]",
		Short: "add a context to the config file from the flags given (checked as the file is read)",
		Long: `context add writes a context into the config file — made, private (0600), when there is none — from the flags
on the command line: one container (--dir, --account-url with --container, --connection-string-env naming the
variable that holds a connection string, or --connection-string-file), and any of the settings a context keeps
(--handlers, --read-only, --ttl, --retention, --event-grid-topics, …). It is checked as the file is read — each
value as its flag takes it, one container reached one way — before anything is written, and the rest of the file
is kept byte for byte, as context use keeps it. A connection string itself is never written: name its variable.
--use makes it the current context.`,
		Example: `  deadletter context add prod --account-url https://estateprod.blob.core.windows.net --container deadletter --handlers /etc/deadletter/handlers.json --read-only --use
  deadletter context add dev --dir /var/tmp/deadletter-dev`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cmd, o.name = cmd, args[0]
			return runWith(runF, runContextAdd)(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.connEnv, "connection-string-env", "", "the environment variable that holds the context's connection string (the secret never goes in the file)")
	cmd.Flags().BoolVar(&o.use, "use", false, "make it the current context too")
	return cmd
}

func runContextAdd(_ context.Context, o *contextAddOptions) error {
	a := o.f
	fs := o.cmd.Flags()
	if fs.Changed("connection-string") {
		return usagef("context add never writes a connection string: export it and name the variable with --connection-string-env")
	}
	values := contextValues(fs, o.connEnv)
	if strings.TrimSpace(o.name) == "" || textfmt.Printable(o.name) != o.name {
		return usagef("a context's name must be printable and not empty")
	}
	path, _, err := a.viewConfig(o.cmd)
	if err != nil {
		return err
	}
	if err := session.AddContext(path, o.name, values, checkContextValue); err != nil {
		return err
	}
	fmt.Fprintf(a.io.out, "added context %s to %s\n", textfmt.Printable(o.name), textfmt.Printable(path))
	if !o.use {
		return nil
	}
	cf, err := readConfig(path)
	if err != nil {
		return err
	}
	if err := cf.SetCurrent(o.name); err != nil {
		return err
	}
	fmt.Fprintf(a.io.out, "switched to context %q (%s)\n", o.name, textfmt.Printable(path))
	return nil
}

// contextValues are a new context's values: each context key whose flag was typed (a list joined, a relative path
// made absolute from where it was typed), and the variable naming its connection string.
func contextValues(fs *pflag.FlagSet, connEnv string) [][2]string {
	var values [][2]string
	for _, k := range session.ContextKeys {
		switch {
		case k == "connection-string-env" && connEnv != "":
			values = append(values, [2]string{k, connEnv})
		case k != "name" && fs.Lookup(k) != nil && fs.Changed(k):
			v := fs.Lookup(k).Value.String()
			if sv, ok := fs.Lookup(k).Value.(pflag.SliceValue); ok {
				v = strings.Join(sv.GetSlice(), ",") // (a context's list is its values joined, as its flag takes them)
			}
			if (k == "dir" || k == "handlers" || k == "connection-string-file") && !filepath.IsAbs(v) {
				if abs, err := filepath.Abs(v); err == nil {
					v = abs // relative to where it was typed (the file would read it relative to its own folder)
				}
			}
			values = append(values, [2]string{k, v})
		}
	}
	return values
}
