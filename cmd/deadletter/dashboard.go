package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/internal/twin"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/tui"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
)

type dashboardOptions struct {
	monitorFlags
	interval    time.Duration
	concurrency int
	allContexts bool
}

func (a *app) dashboardFlags(root *cobra.Command) *dashboardOptions {
	o := &dashboardOptions{interval: rules.DefaultInterval, concurrency: rules.DefaultConcurrency}
	o.register(root)
	root.Flags().BoolVar(&o.allContexts, "all-contexts", false, "open on a summary of every context of the config file (enter opens one; : comes back)")
	return o
}

// register adds the dashboard's flags (the root command's and demo's).
func (o *dashboardOptions) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	durationVar(fs, &o.interval, "interval", "how often the dashboard re-reads the container")
	fs.IntVar(&o.concurrency, "concurrency", o.concurrency, "blobs a drain or restore handles at once")
	o.monitorFlags.register(cmd)
}

// runDashboard opens the dashboard — with a config file of contexts, in the current one (its name in the header),
// : going to the summary of every context and enter from there opening another, all in this one process.
func (a *app) runDashboard(cmd *cobra.Command, o *dashboardOptions) error {
	cf := a.config
	if cf == nil || len(cf.Contexts) == 0 {
		if o.allContexts {
			return usagef("--all-contexts needs a config file with contexts (deadletter context --help shows its shape)")
		}
		return a.openDashboard(cmd, o)
	}
	if err := a.needTerminal(); err != nil {
		return err
	}
	current, toSummary := a, o.allContexts
	look := a.lookContext(cmd) // one for the whole session: each context's loader (and its cache) is kept
	for {
		if toSummary {
			chosen, err := tui.RunSummary(cmd.Context(), tui.SummaryOptions{Names: cf.names(), Look: look, Interval: o.interval})
			if err != nil || chosen == "" {
				return err
			}
			sub, err := a.forContext(cmd, cf.find(chosen), a.io.out, a.io.err)
			if err != nil {
				return err
			}
			current = sub
		}
		switched := false
		err := current.openDashboard(cmd, o, func(opt *tui.Options) {
			opt.Context = current.context
			opt.Switch = func() { switched = true }
		})
		if err != nil || !switched {
			return err
		}
		toSummary = true
	}
}

// lookContext checks one context for the summary screen, bounded by --timeout (30 s unless given). Each
// context keeps its loader from one look to the next, so its payloads are read again only when they change.
func (a *app) lookContext(cmd *cobra.Command) func(ctx context.Context, name string) tui.ContextSummary {
	var mu sync.Mutex
	type opened struct {
		sub *app
		l   *replay.Loader
		err error
	}
	loaders := map[string]opened{}
	open := func(name string) opened {
		mu.Lock()
		defer mu.Unlock()
		if o, ok := loaders[name]; ok {
			return o
		}
		var o opened
		if o.sub, o.err = a.forContext(cmd, a.config.find(name), io.Discard, io.Discard); o.err == nil {
			o.l, _, o.err = o.sub.g.loader()
		}
		loaders[name] = o
		return o
	}
	return func(ctx context.Context, name string) tui.ContextSummary {
		row := tui.ContextSummary{Name: name, At: time.Now()}
		o := open(name)
		if o.err != nil {
			row.Err = o.err.Error()
			return row
		}
		row.ReadOnly, row.Container = o.sub.g.readOnly, o.l.Container.Describe()
		timeout := o.sub.g.timeout
		if timeout <= 0 {
			timeout = lookTimeout
		}
		pass, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		r, err := look(pass, o.l, rules.CheckOptions{}, nil, nil)
		if err != nil {
			row.Err = couldNotLook(pass, err).Error()
			return row
		}
		row.Counts, row.Findings = r.Counts, len(r.Findings)
		if len(r.Findings) > 0 {
			row.Worst = fmt.Sprintf("%d %s", r.Findings[0].Count, r.Findings[0].Kind)
		}
		return row
	}
}

// openDashboard opens the dashboard, its options set by with (the demo's rehearsal clock).
func (a *app) openDashboard(cmd *cobra.Command, o *dashboardOptions, with ...func(*tui.Options)) error {
	if o.interval <= 0 {
		return usagef("--interval must be positive")
	}
	if err := positiveInt("concurrency", o.concurrency); err != nil {
		return err
	}
	if err := a.needTerminal(); err != nil {
		return err
	}
	s, err := a.session(cmd.Context())
	if err != nil {
		return err
	}
	o.apply(&s.Loader().Config)
	opt := tui.Options{Session: s, Check: rules.CheckOptions{MaxQuarantine: o.maxQuarantine},
		Interval: o.interval, Concurrency: o.concurrency, By: defaultAckBy()}
	if s, short := a.setAside, a.setAsideShort; s != "" {
		opt.Banner = func(room int) string { // the header says whose container this is, and whose it is not
			if textfmt.Width(s) <= room {
				return s
			}
			return short // which context is set aside matters more than which variable named the container
		}
	}
	if s.Rehearsal() {
		opt.Banner = func(int) string { return "REHEARSAL (the twin's clock)" } // a twin opened with --dir (the demo says more)
		opt.StillTwin = fmt.Sprintf("the twin's clock stands still here: deadletter twin advance --dir %s --by 1h runs it (t and p are the demo's)", textfmt.Printable(a.g.dir))
	}
	for _, f := range with {
		f(&opt)
	}
	return tui.Run(cmd.Context(), opt)
}

// needTerminal refuses to open the dashboard where it cannot draw.
func (a *app) needTerminal() error {
	if f, ok := a.io.out.(*os.File); !ok || !isatty.IsTerminal(f.Fd()) {
		return errors.New("the dashboard draws on a terminal, and standard output is not one: run it in a terminal (or tmux), or use ls, check, report or watch --json in a script")
	}
	return nil
}

// demoOptions are the demo's flags: the dashboard's, and the twin's scenario and speed.
type demoOptions struct {
	dashboardOptions
	scenario string
	speed    float64
	fresh    bool
}

func (a *app) demoCmd() *cobra.Command {
	o := &demoOptions{dashboardOptions: dashboardOptions{interval: 2 * time.Second, concurrency: rules.DefaultConcurrency}, scenario: "incident", speed: 60}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "rehearse an incident: a simulated estate with its clock running, and the dashboard on it",
		Long: `demo starts a rehearsal twin of an incident (see deadletter twin) in one demo directory per user (under the
user's cache directory, or --dir) and opens the dashboard on it with the twin's clock running — a minute a second
by default. The estate keeps going while you act: drain the stranded blobs and watch the replay consume them,
or dead-letter them again where a handler still fails. p pauses the clock. Quit and run demo again: it resumes
the rehearsal where you left it (its clock, drains, acks and script) and says so; --fresh starts over. The
directory is printed, so the twin can be looked at again (--dir) or run on (deadletter twin advance).`,
		Example: `  deadletter demo
  deadletter demo --fresh                         # start the rehearsal over
  deadletter demo --speed 600                     # ten minutes a second
  deadletter demo --fresh --scenario replay-stopped # the replay stops just after it opens`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runDemo(cmd, o) },
	}
	o.register(cmd)
	cmd.Flags().StringVar(&o.scenario, "scenario", o.scenario, "the twin's script: "+strings.Join(twin.Scenarios, " or "))
	cmd.Flags().Float64Var(&o.speed, "speed", o.speed, "how fast the twin's clock runs: twin seconds per second")
	cmd.Flags().BoolVar(&o.fresh, "fresh", false, "start the rehearsal over (without it, demo resumes the one it left)")
	cmd.RegisterFlagCompletionFunc("scenario", cobra.FixedCompletions(twin.Scenarios, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (a *app) runDemo(cmd *cobra.Command, o *demoOptions) error {
	if _, err := twin.ScriptOf(o.scenario); err != nil {
		return usagef("--scenario: %s", err)
	}
	if !(o.speed > 0 && o.speed <= dirstore.MaxSpeed) {
		return usagef("--speed must be positive and at most %d (twin seconds per second)", dirstore.MaxSpeed)
	}
	// Only a --dir typed for the demo: DEADLETTER_DIR names the operator's own container, and the demo must
	// never seed fake dead letters into it.
	dir := ""
	if f := cmd.Flag("dir"); f != nil && f.Changed {
		dir = a.g.dir
	}
	if dir == "" {
		d, err := demoDir()
		if err != nil {
			return err
		}
		dir = d
	}
	// The demo's own directory from an earlier run is cleared; anything else must not exist yet or be empty.
	// Both that and the terminal are checked before anything is cleared or written.
	old, err := checkDemoDir(dir)
	if err != nil {
		return err
	}
	if err := a.needTerminal(); err != nil {
		return err
	}
	tw, err := a.openDemo(cmd, o, dir, old)
	if err != nil {
		return err
	}
	defer tw.Close()
	a.g.dir, a.g.connString, a.g.accountURL = dir, "", ""
	run := twin.NewRunner(tw, o.speed)
	ctx, stop := context.WithCancel(cmd.Context())
	done := make(chan error, 1)
	go func() { done <- run.Run(ctx) }()
	err = a.openDashboard(cmd, &o.dashboardOptions, func(opt *tui.Options) {
		opt.Banner = func(room int) string {
			now, paused := run.Now()
			state := fmt.Sprintf("×%g", run.Speed())
			if paused {
				state = "PAUSED"
			}
			return demoBanner(fmt.Sprintf("REHEARSAL %s %s", now.Format("01-02 15:04"), state), run.FailingNow(), room)
		}
		opt.Rehearsal = rehearsalControls{run: run}
		opt.Pause = func() string {
			if run.Toggle() {
				return "the rehearsal's clock is paused (p runs it again)"
			}
			return "the rehearsal's clock runs again"
		}
	})
	stop()
	if rerr := <-done; err == nil && rerr != nil && !errors.Is(rerr, context.Canceled) {
		err = rerr
	}
	fmt.Fprintf(a.io.out, "the rehearsal is kept at %s (its clock stopped where you left it)\n  resume it:  deadletter demo%s (--fresh starts over)\n  look again: deadletter --dir %s\n  run it on:  deadletter twin advance --dir %s --by 1h\n",
		textfmt.Printable(dir), demoDirFlag(cmd, dir), textfmt.Printable(dir), textfmt.Printable(dir))
	return err
}

// demoBanner is the demo's header banner in at most room columns: the rehearsal and its clock (head), then what
// the script has down now (failing, as the runner says it: "a 500 for 2h, b 404") — whole, or its first handlers
// and "+N more", or only how many — so the container's name and the service time keep their place (t shows it all).
func demoBanner(head, failing string, room int) string {
	if failing == "" {
		return head
	}
	who := strings.Split(failing, ", ")
	for n := len(who); n > 0; n-- {
		s := head + " · failing: " + strings.Join(who[:n], ", ")
		if n < len(who) {
			s += fmt.Sprintf(" +%d more", len(who)-n)
		}
		if textfmt.Width(s) <= room {
			return s
		}
	}
	if s := fmt.Sprintf("%s · %d failing", head, len(who)); textfmt.Width(s) <= room {
		return s
	}
	return head
}

// demoDirFlag is the --dir a demo was given, to say how to come back to it ("" for the default directory).
func demoDirFlag(cmd *cobra.Command, dir string) string {
	if f := cmd.Flag("dir"); f != nil && f.Changed {
		return " --dir " + textfmt.Printable(dir)
	}
	return ""
}

// openDemo resumes the demo's twin the directory holds (old: the record of an earlier demo), or — with --fresh,
// or when there is none — clears it and starts the scenario over. A twin another version made is upgraded as it
// is opened, or refused with what to do.
func (a *app) openDemo(cmd *cobra.Command, o *demoOptions, dir string, old *made.Place) (*twin.Twin, error) {
	if old != nil && !o.fresh {
		tw, err := twin.Open(cmd.Context(), dir, "demo")
		switch {
		case errors.Is(err, made.ErrBusy):
			return nil, err
		case err != nil:
			return nil, fmt.Errorf("%w\n(the rehearsal kept there cannot be resumed: deadletter demo --fresh%s starts over)", err, demoDirFlag(cmd, dir))
		}
		if f := cmd.Flag("scenario"); f != nil && f.Changed && tw.Script().Name != o.scenario {
			tw.Close()
			return nil, usagef("the rehearsal kept in %s is the %s scenario: demo --fresh --scenario %s starts %s over", textfmt.Printable(dir), tw.Script().Name, o.scenario, o.scenario)
		}
		if err := a.adoptTwinRules(twin.RulesOf(tw.Config()), a.givenRules, dir); err != nil {
			tw.Close()
			return nil, err
		}
		if r := tw.Repaired(); r != "" {
			fmt.Fprintln(a.io.err, "note: "+r)
		}
		fmt.Fprintf(a.io.err, "resuming the rehearsal in %s where you left it: its clock at %s, your drains, acks and script kept (deadletter demo --fresh starts over)\n",
			textfmt.Printable(dir), tw.Now().Format("2006-01-02 15:04:05Z"))
		return tw, nil
	}
	if err := resetDemo(dir, old); err != nil {
		return nil, err
	}
	fmt.Fprintf(a.io.err, "starting the rehearsal twin in %s…\n", textfmt.Printable(dir))
	// The estate's rules the command line gives are the demo twin's, as twin start's: it runs by them.
	cfg, r := twin.Config(), a.g.rules()
	cfg.TTL, cfg.Retention, cfg.MaxReplays, cfg.Separator = r.TTL, r.Retention, r.MaxReplays, r.Separator
	return twin.StartConfig(cmd.Context(), dir, made.Demo, o.scenario, 1, time.Now(), cfg)
}

// resetDemo empties the directory of an earlier demo — only one deadletter recorded as its demo (old), and only
// while no other demo runs it. A new or empty directory is taken as it is.
func resetDemo(dir string, old *made.Place) error {
	if old != nil {
		held, err := old.Lock("demo")
		if err != nil {
			return err
		}
		err = os.RemoveAll(dir)
		held.Unlock()
		if err != nil {
			return err
		}
		old.Forget()
	}
	return os.MkdirAll(dir, 0o777)
}

// checkDemoDir refuses a directory the demo may not clear: a file, or one that holds anything and is not a demo
// deadletter recorded making (outside the directory: a file inside it proves nothing). It returns the earlier
// demo's record, when the directory is one.
func checkDemoDir(dir string) (*made.Place, error) {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist), err == nil && len(ents) == 0:
		return nil, nil
	case err != nil:
		if fi, serr := os.Stat(dir); serr == nil && !fi.IsDir() {
			return nil, usagef("--dir %s is a file, not a directory: give the demo an empty or new directory", textfmt.Printable(dir))
		}
		return nil, err
	}
	p, err := made.Find(dir)
	if err == nil && p.Kind == made.Demo {
		return p, nil
	}
	why := "deadletter keeps no record of making a demo there"
	switch {
	case err != nil && !made.IsNotMade(err):
		return nil, err
	case err != nil:
		why = err.Error()
	default:
		why = "deadletter made it with " + string(p.Kind) + ", not demo"
	}
	var names []string
	for _, e := range ents[:min(3, len(ents))] {
		names = append(names, textfmt.Printable(e.Name()))
	}
	if len(ents) > 3 {
		names = append(names, fmt.Sprintf("and %d more", len(ents)-3))
	}
	return nil, usagef("%s holds %s and is not a demo deadletter made (%s; a file inside a directory proves nothing): "+
		"the demo clears its directory and writes fake dead letters, so give it an empty or new --dir (an old demo's directory: remove it yourself)",
		textfmt.Printable(dir), strings.Join(names, ", "), why)
}
