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

	"github.com/charmbracelet/colorprofile"
	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/session"
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
	f *factory
	monitorFlags
	interval    time.Duration
	concurrency int
	allContexts bool
	cmd         *cobra.Command // (each context's dashboard takes the command line's flags: forContext)
}

// newDashboardOptions gives the root command the dashboard's flags: with no command, deadletter opens it.
func newDashboardOptions(f *factory, root *cobra.Command) *dashboardOptions {
	o := &dashboardOptions{f: f, interval: rules.DefaultInterval, concurrency: rules.DefaultConcurrency}
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
func runDashboard(ctx context.Context, o *dashboardOptions) error {
	a := o.f
	cf := a.config
	if cf == nil || len(cf.Contexts) == 0 {
		if o.allContexts {
			return usagef("--all-contexts needs a config file with contexts (deadletter context --help shows its shape)")
		}
		return o.open(ctx, a.g.spec(a.context))
	}
	if err := a.needTerminal(); err != nil {
		return err
	}
	current, toSummary := a, o.allContexts
	look := o.lookContext() // one for the whole session: each context's loader (and its cache) is kept
	for {
		if toSummary {
			chosen, err := tui.RunSummary(ctx, tui.SummaryOptions{Names: cf.Names(), Look: look, Interval: o.interval, Theme: terminalTheme()})
			if err != nil || chosen == "" {
				return err
			}
			sub, err := a.forContext(o.cmd, cf.Find(chosen), a.io.out, a.io.err)
			if err != nil {
				return err
			}
			current = sub
		}
		switched := false
		in := *o
		in.f = current
		err := in.open(ctx, current.g.spec(current.context), func(opt *tui.Options) {
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
func (o *dashboardOptions) lookContext() func(ctx context.Context, name string) tui.ContextSummary {
	a := o.f
	var mu sync.Mutex
	type opened struct {
		sub *factory
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
		var op opened
		if op.sub, op.err = a.forContext(o.cmd, a.config.Find(name), io.Discard, io.Discard); op.err == nil {
			var s *session.Session
			if s, op.err = op.sub.session(context.Background(), op.sub.timeout(0)); op.err == nil {
				op.l = s.Loader()
			}
		}
		loaders[name] = op
		return op
	}
	return func(ctx context.Context, name string) tui.ContextSummary {
		row := tui.ContextSummary{Name: name, At: time.Now()}
		o := open(name)
		if o.err != nil {
			row.Err = o.err.Error()
			return row
		}
		row.ReadOnly, row.Container = o.sub.g.readOnly, o.l.Container.Describe()
		pass, cancel := context.WithTimeout(ctx, o.sub.timeout(lookTimeout))
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

// open opens the dashboard on the estate spec names, its options set by with (the demo's rehearsal clock).
func (o *dashboardOptions) open(ctx context.Context, spec session.Spec, with ...func(*tui.Options)) error {
	a := o.f
	if o.interval <= 0 {
		return usagef("--interval must be positive")
	}
	if err := positiveInt("concurrency", o.concurrency); err != nil {
		return err
	}
	if err := a.needTerminal(); err != nil {
		return err
	}
	spec.Timeout = a.timeout(0)
	if w, ok := ctx.Value(witnessKey{}).(rules.Witness); ok {
		spec.Witness = w
	}
	s, err := session.Open(spec)
	if err != nil {
		return err
	}
	o.apply(&s.Loader().Config)
	opt := tui.Options{Session: s, Check: rules.CheckOptions{MaxQuarantine: o.maxQuarantine},
		Interval: o.interval, Concurrency: o.concurrency, By: defaultAckBy(), Views: a.config.ViewsIn(a.context), Theme: terminalTheme()}
	if set, short := a.setAside, a.setAsideShort; set != "" {
		opt.Banner = func(room int) string { // the header says whose container this is, and whose it is not
			if textfmt.Width(set) <= room {
				return set
			}
			return short // which context is set aside matters more than which variable named the container
		}
	}
	if s.Rehearsal() {
		opt.Banner = func(int) string { return "REHEARSAL (the twin's clock)" } // a twin opened with --dir (the demo says more)
		opt.StillTwin = fmt.Sprintf("the twin's clock stands still here: deadletter twin advance --dir %s --by 1h runs it (t and p are the demo's)", textfmt.Printable(spec.Dir))
	}
	for _, f := range with {
		f(&opt)
	}
	return tui.Run(ctx, opt)
}

// needTerminal refuses to open the dashboard where it cannot draw.
func (a *factory) needTerminal() error {
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
	dirGiven bool // --dir was typed for the demo (DEADLETTER_DIR names the operator's own container: never the demo's)
}

func newCmdDemo(f *factory, runF func(context.Context, *demoOptions) error) *cobra.Command {
	o := &demoOptions{dashboardOptions: dashboardOptions{f: f, interval: 2 * time.Second, concurrency: rules.DefaultConcurrency}, scenario: "incident", speed: 60}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "rehearse an incident: a simulated estate with its clock running, and the dashboard on it",
		Long: `demo starts a rehearsal twin of an incident (see deadletter twin) in one demo directory per user (under the
user's cache directory, or --dir) and opens the dashboard on it with the twin's clock paused, so the first screen
holds still while you read it: p runs the clock — a minute a second by default — and pauses it again; --speed N
runs it at once at N twin seconds a second. The estate keeps going while you act: drain the stranded blobs and
watch the replay consume them, or dead-letter them again where a handler still fails. Quit and run demo again: it resumes
the rehearsal where you left it (its clock, drains, acks and script) and says so; --fresh starts over. The
directory is printed, so the twin can be looked at again (--dir) or run on (deadletter twin advance).`,
		Example: `  deadletter demo
  deadletter demo --fresh                         # start the rehearsal over
  deadletter demo --speed 600                     # ten minutes a second
  deadletter demo --fresh --scenario replay-stopped # the replay stops just after it opens`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.cmd, o.dirGiven = cmd, cmd.Flag("dir") != nil && cmd.Flag("dir").Changed
			return runWith(runF, runDemo)(cmd.Context(), o)
		},
	}
	o.register(cmd)
	cmd.Flags().StringVar(&o.scenario, "scenario", o.scenario, "the twin's script: "+strings.Join(twin.Scenarios, " or "))
	cmd.Flags().Float64Var(&o.speed, "speed", o.speed, "how fast the twin's clock runs: twin seconds per second")
	cmd.Flags().BoolVar(&o.fresh, "fresh", false, "start the rehearsal over (without it, demo resumes the one it left)")
	cmd.RegisterFlagCompletionFunc("scenario", cobra.FixedCompletions(twin.Scenarios, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// speedGiven says --speed was typed: the clock then runs from the start.
func (o *demoOptions) speedGiven() bool { return o.cmd != nil && o.cmd.Flags().Changed("speed") }

func runDemo(ctx context.Context, o *demoOptions) error {
	a := o.f
	if _, err := twin.ScriptOf(o.scenario); err != nil {
		return usagef("--scenario: %s", err)
	}
	if !(o.speed > 0 && o.speed <= dirstore.MaxSpeed) {
		return usagef("--speed must be positive and at most %d (twin seconds per second)", dirstore.MaxSpeed)
	}
	// Only a --dir typed for the demo: DEADLETTER_DIR names the operator's own container, and the demo must
	// never seed fake dead letters into it.
	dir := ""
	if o.dirGiven {
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
	tw, err := o.openTwin(ctx, dir, old)
	if err != nil {
		return err
	}
	defer tw.Close()
	spec := a.g.spec("") // the demo's own twin: no context, and whatever container the flags named is not it
	spec.Dir, spec.ConnectionString, spec.ConnectionStringFile, spec.AccountURL = dir, "", "", ""
	run := twin.NewRunner(tw, o.speed)
	if !o.speedGiven() {
		run.StartPaused() // a newcomer reads the first screen before the estate moves; --speed runs it at once
	}
	ctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run.Run(ctx) }()
	err = o.open(ctx, spec, func(opt *tui.Options) {
		opt.Banner = func(room int) string {
			now, paused := run.Now()
			head := fmt.Sprintf("REHEARSAL %s ×%g", now.Format("01-02 15:04"), run.Speed())
			if !paused {
				return demoBanner(head, run.FailingNow(), room)
			}
			// Paused: how to run it, where there is room beside what the script has down; else the key line says it.
			head, failing := fmt.Sprintf("REHEARSAL %s PAUSED", now.Format("01-02 15:04")), run.FailingNow()
			long := head + " (p runs the clock)"
			if b := demoBanner(long, failing, room); textfmt.Width(b) <= room && (failing == "" || b != long) {
				return b
			}
			return demoBanner(head, failing, room)
		}
		opt.Rehearsal = rehearsalControls{run: run}
		opt.Paused = func() bool { _, paused := run.Now(); return paused }
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
		textfmt.Printable(dir), o.dirFlag(dir), textfmt.Printable(dir), textfmt.Printable(dir))
	return err
}

// demoBanner is the demo's header banner in at most room columns: the rehearsal and its clock (head), then what
// the script has down now (failing, as the runner says it: "a 500 for 2h, b 404") — whole, or its first handlers
// and "+N more", or only how many — so the container's name and the service time keep their place (t shows it all).
// It names its witness, the script ("script: … down"): the alert line's EG HANDLER FAILING is Event Grid's word,
// which may count otherwise (issue 51).
func demoBanner(head, failing string, room int) string {
	if failing == "" {
		return head
	}
	who := strings.Split(failing, ", ")
	for n := len(who); n > 0; n-- {
		s := head + " · script down: " + strings.Join(who[:n], ", ")
		if n < len(who) {
			s += fmt.Sprintf(" +%d more", len(who)-n)
		}
		if textfmt.Width(s) <= room {
			return s
		}
	}
	for _, f := range []string{"%s · script: %d down", "%s · %d down"} {
		if s := fmt.Sprintf(f, head, len(who)); textfmt.Width(s) <= room {
			return s
		}
	}
	return head
}

// dirFlag is the --dir a demo was given, to say how to come back to it ("" for the default directory).
func (o *demoOptions) dirFlag(dir string) string {
	if o.dirGiven {
		return " --dir " + textfmt.Printable(dir)
	}
	return ""
}

// openDemo resumes the demo's twin the directory holds (old: the record of an earlier demo), or — with --fresh,
// or when there is none — clears it and starts the scenario over. A twin another version made is upgraded as it
// is opened, or refused with what to do.
func (o *demoOptions) openTwin(ctx context.Context, dir string, old *made.Place) (*twin.Twin, error) {
	a := o.f
	if old != nil && !o.fresh {
		tw, err := twin.Open(ctx, dir, "demo")
		switch {
		case errors.Is(err, made.ErrBusy):
			return nil, err
		case err != nil:
			return nil, fmt.Errorf("%w\n(the rehearsal kept there cannot be resumed: deadletter demo --fresh%s starts over)", err, o.dirFlag(dir))
		}
		if f := o.cmd.Flag("scenario"); f != nil && f.Changed && tw.Script().Name != o.scenario {
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
	return twin.StartConfig(ctx, dir, made.Demo, o.scenario, 1, time.Now(), cfg)
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

// terminalTheme is the dashboard's theme as far as the command line can tell: the terminal's colour profile
// (NO_COLOR and a pipe draw plain text). Bubble Tea tells the background once the program runs.
func terminalTheme() tui.Theme {
	return tui.Theme{Profile: colorprofile.Detect(os.Stdout, os.Environ())}
}
