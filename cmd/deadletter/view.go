package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/spf13/cobra"
)

// newCmdView is the saved views: named filters in the config file, for every context or for one, that --view
// names on every command taking --filter and the dashboard opens with v.
func newCmdView(a *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "view add NAME --filter QUERY|list|rm NAME",
		Short: "saved views: named filters in the config file, for --view and the dashboard's v",
		Long: `A view is a filter saved under a name in the config file (--config, DEADLETTER_CONFIG, or config.yaml in the
user's config directory), for every context or — with add --this-context — only the one in force:

  views:
    - name: stranded-webhooks
      filter: "sub:=WEBHOOKS is:root"
    - name: big-first
      filter: "is:root"
      sort: events desc
      context: prod

Every command that takes --filter takes --view NAME (its words ANDed with --filter's); the dashboard lists the
views with v and opens one with enter (its filter, and its sort where the pane has that column). add and rm
rewrite the file as context use does: every other byte as written.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCmdViewAdd(a, nil), newCmdViewList(a, nil), newCmdViewRm(a, nil))
	return cmd
}

type viewOptions struct {
	f           *factory
	cmd         *cobra.Command
	name        string
	filter      string
	sort        string
	thisContext bool
	out         *printFlags
}

func newCmdViewAdd(f *factory, runF func(context.Context, *viewOptions) error) *cobra.Command {
	o := &viewOptions{f: f}
	cmd := &cobra.Command{
		Use:   "add NAME --filter QUERY",
		Short: "save a filter under a name (for every context, or --this-context)",
		Example: `  deadletter view add stranded-webhooks --filter 'sub:=WEBHOOKS is:root'
  deadletter drain --view stranded-webhooks --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cmd, o.name = cmd, args[0]
			return runWith(runF, runViewAdd)(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.filter, "filter", "", "the view's filter: the dashboard's filter words (deadletter ls --help)")
	cmd.Flags().StringVar(&o.sort, "sort", "", "the dashboard's sort for the view: a column and, optionally, asc or desc ('events desc')")
	cmd.Flags().BoolVar(&o.thisContext, "this-context", false, "save it for the context in force only (--context, DEADLETTER_CONTEXT or the current one)")
	cmd.MarkFlagRequired("filter")
	cmd.RegisterFlagCompletionFunc("sort", cobra.FixedCompletions(sortColumns(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// sortColumns are the columns a view may sort by (the dashboard's sortable ones).
func sortColumns() []string { return present.SortColumns() }

func runViewAdd(_ context.Context, o *viewOptions) error {
	a := o.f
	path, cf, err := a.viewConfig(o.cmd)
	if err != nil {
		return err
	}
	vw := session.View{Name: o.name, Filter: o.filter, Sort: o.sort}
	if col, _, _ := strings.Cut(o.sort, " "); col != "" && !containsFold(sortColumns(), col) {
		return usagef("--sort %q: want one of %s, and optionally asc or desc", textfmt.Printable(o.sort), strings.Join(sortColumns(), ", "))
	}
	if o.thisContext {
		name, _, err := a.contextName(o.cmd.Flags(), cf)
		if err != nil {
			return err
		}
		if name == "" {
			return usagef("--this-context: no context is in force (--context, DEADLETTER_CONTEXT or the file's current-context)")
		}
		vw.Context = name
	}
	if err := session.AddView(path, vw); err != nil {
		return err
	}
	scope := "every context"
	if vw.Context != "" {
		scope = "context " + textfmt.Printable(vw.Context)
	}
	fmt.Fprintf(a.io.out, "saved view %s for %s (%s): deadletter ls --view %s\n", textfmt.Printable(vw.Name), scope, textfmt.Printable(path), textfmt.Printable(vw.Name))
	return nil
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

func newCmdViewList(f *factory, runF func(context.Context, *viewOptions) error) *cobra.Command {
	o := &viewOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "the views the context in force sees: its own, and those for every context",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.cmd = cmd
			return runWith(runF, runViewList)(cmd.Context(), o)
		},
	}
	o.out = declareOutput(cmd, outText, outJSON)
	return cmd
}

func runViewList(_ context.Context, o *viewOptions) error {
	a := o.f
	path, cf, err := a.viewConfig(o.cmd)
	if err != nil {
		return err
	}
	name := ""
	if cf != nil {
		if err := cf.ViewsErr(); err != nil {
			return err
		}
		if name, _, err = a.contextName(o.cmd.Flags(), cf); err != nil {
			return err
		}
	}
	views := cf.ViewsIn(name)
	doc := output.ViewListJSON{Config: output.Text(path), Context: output.Text(name), Views: []output.ViewLineJSON{}}
	for _, v := range views {
		doc.Views = append(doc.Views, output.ViewLineJSON{Name: output.Text(v.Name), Filter: output.Text(v.Filter), Sort: output.Text(v.Sort), Context: output.Text(v.Context)})
	}
	return o.out.print(a.io.out, doc, func() {
		if len(views) == 0 {
			fmt.Fprintf(a.io.err, "no saved views (deadletter view add NAME --filter QUERY saves one in %s)\n", textfmt.Printable(path))
			return
		}
		fmt.Fprintf(a.io.out, "%-24s %-14s %-12s %s\n", "NAME", "FOR", "SORT", "FILTER")
		for _, v := range views {
			scope := "every context"
			if v.Context != "" {
				scope = v.Context
			}
			fmt.Fprintf(a.io.out, "%-24s %-14s %-12s %s\n", textfmt.Printable(v.Name), textfmt.Printable(scope), textfmt.Printable(cmp.Or(v.Sort, "-")), textfmt.Printable(v.Filter))
		}
	})
}

func newCmdViewRm(f *factory, runF func(context.Context, *viewOptions) error) *cobra.Command {
	o := &viewOptions{f: f}
	return &cobra.Command{
		Use:               "rm NAME",
		Short:             "remove a saved view (the context's own first, else the one for every context)",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeViews,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cmd, o.name = cmd, args[0]
			return runWith(runF, runViewRm)(cmd.Context(), o)
		},
	}
}

func runViewRm(_ context.Context, o *viewOptions) error {
	a := o.f
	path, cf, err := a.viewConfig(o.cmd)
	if err != nil {
		return err
	}
	if cf == nil {
		return usagef("no config file at %s: there is no view to remove", textfmt.Printable(path))
	}
	name, _, err := a.contextName(o.cmd.Flags(), cf)
	if err != nil {
		return err
	}
	vw, err := session.RemoveView(path, name, o.name)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.io.out, "removed view %s (%s, was line %d)\n", textfmt.Printable(vw.Name), textfmt.Printable(path), vw.Line)
	return nil
}

// viewConfig is the config file's path (where add writes one when there is none) and the file as read (nil when
// there is none).
func (a *factory) viewConfig(cmd *cobra.Command) (string, *session.ConfigFile, error) {
	path := a.configPath
	if f := cmd.Flags().Lookup("config"); f == nil || !f.Changed {
		path = cmp.Or(os.Getenv("DEADLETTER_CONFIG"), session.DefaultConfigPath())
	}
	if path == "" {
		return "", nil, usagef("no config directory: pass --config FILE")
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return path, nil, nil
	}
	cf, err := readConfig(path)
	return path, cf, err
}

// viewQuery is the filter of the saved view name, as the context in force sees it (--view).
func (a *factory) viewQuery(name string) (string, error) {
	cf := a.config
	if cf == nil {
		return "", usagef("--view %s: there is no config file (deadletter view add saves a view in %s)", textfmt.Printable(name), textfmt.Printable(session.DefaultConfigPath()))
	}
	if err := cf.ViewsErr(); err != nil {
		return "", err
	}
	vw, ok := cf.FindView(a.context, name)
	if !ok {
		return "", usagef("--view %q: no such view (have: %s)", textfmt.Printable(name), strings.Join(cf.ViewNames(a.context), ", "))
	}
	if _, err := rules.ParseFilter(vw.Filter); err != nil {
		return "", usagef("--view %s: %v", textfmt.Printable(name), err)
	}
	return vw.Filter, nil
}

// completeViews completes a view's name from the config file, for the context in force.
func completeViews(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	a := newFactory(stdio{})
	fs := cmd.Flags()
	if f := fs.Lookup("config"); f != nil { // (the flags are parsed before a completion is asked)
		a.configPath = f.Value.String()
	}
	if f := fs.Lookup("context"); f != nil {
		a.contextFlag = f.Value.String()
	}
	cf, err := a.loadConfig(fs)
	if err != nil || cf == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	name, _, _ := a.contextName(fs, cf)
	var out []string
	for _, n := range cf.ViewNames(name) {
		if textfmt.Printable(n) == n {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
