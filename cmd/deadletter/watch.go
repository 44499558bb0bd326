package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deadletter/deadletter/internal/hook"
	"github.com/deadletter/deadletter/internal/metrics"
	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/spf13/cobra"
)

type watchOptions struct {
	f *factory
	monitorFlags
	out      *printFlags
	interval time.Duration
	exec     string
	execEnv  []string
	// metricsAddr, when set, serves /metrics and /healthz there for Prometheus (internal/metrics).
	metricsAddr string
	allContexts bool
	// exporter is the series a pass publishes to, when the metrics server is already up (--all-contexts: one
	// server, one exporter per context).
	exporter *metrics.Exporter
	cmd      *cobra.Command // (every context's watch takes the command line's flags: forContext)
}

func newCmdWatch(f *factory, runF func(context.Context, *watchOptions) error) *cobra.Command {
	o := &watchOptions{f: f, interval: rules.DefaultInterval}
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "check every --interval and print what changed, one line per kind of finding",
		Example: `  deadletter watch --interval 1m --exec ./notify.sh
  deadletter watch --metrics-addr 127.0.0.1:9464`,
		Annotations: lookingAtAnEstate(),
		Long: `watch re-checks the container every --interval. Its first pass prints the state, one line per kind of finding;
later passes print, per kind, the blobs that appeared and the ones that went away — one line (and one --exec) for
"12 new stranded blobs", naming the first 20. An expiring blob the lifecycle rule deleted before anyone handled
it is a lost line, not a resolved one. A pass that cannot read the container prints an error line once, and a
line again when it can. --exec CMD runs sh -c CMD for every state, new and lost line, with the line as JSON on
its stdin.
--metrics-addr HOST:PORT serves the same picture to Prometheus: /metrics (deadletter_* series, refreshed every
pass) and /healthz (200 while the last pass read the whole container, 503 otherwise); deploy/prometheus/rules.yml
holds the alerting rules.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.cmd = cmd
			return runWith(runF, runWatch)(cmd.Context(), o)
		},
	}
	o.monitorFlags.register(cmd)
	fs := cmd.Flags()
	o.out = declareOutput(cmd, outText, outWide, outJSON, outJSONL).fitted()
	durationVar(fs, &o.interval, "interval", "how often to check")
	fs.StringVar(&o.exec, "exec", "", "run this shell command for every state, new and lost line, the line as JSON on stdin")
	fs.StringSliceVar(&o.execEnv, "exec-env", nil, "a variable of the environment --exec may see besides PATH, HOME, LANG and the like (repeatable; never a credential variable)")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus /metrics and /healthz on this address (e.g. :9464; port 0 picks one)")
	fs.BoolVar(&o.allContexts, "all-contexts", false, "watch every context of the config file, each on its own schedule: lines and series carry the context")
	return cmd
}

// watchAll watches every context of the config file at once, each in its own loop — a slow or failing one never
// delays the others' passes or the scrape — with one metrics server whose series carry a context label.
func (o *watchOptions) watchAll(ctx context.Context) error {
	a := o.f
	if a.config == nil || len(a.config.Contexts) == 0 {
		return usagef("--all-contexts needs a config file with contexts (deadletter context --help shows its shape)")
	}
	var hub *metrics.Hub
	if o.metricsAddr != "" {
		hub = metrics.NewHub()
		stop, err := o.listenMetrics(o.metricsAddr, hub.Handler())
		if err != nil {
			return err
		}
		defer stop()
	}
	out, errs := &lockedWriter{w: a.io.out}, &lockedWriter{w: a.io.err}
	var subs []*factory
	for i := range a.config.Contexts {
		sub, err := a.forContext(o.cmd, &a.config.Contexts[i], out, errs)
		if err != nil {
			return err
		}
		subs = append(subs, sub)
	}
	results := make(chan error, len(subs))
	for _, sub := range subs {
		one := *o
		one.f, one.allContexts, one.metricsAddr = sub, false, ""
		if hub != nil {
			s, err := sub.session(ctx, sub.timeout(lookTimeout))
			if err != nil {
				return fmt.Errorf("context %q: %w", sub.context, err)
			}
			one.exporter = hub.Add(s.Where(), sub.context)
		}
		go func() { results <- runWatch(ctx, &one) }()
	}
	var first error
	for range subs {
		if err := <-results; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func runWatch(ctx context.Context, o *watchOptions) error {
	a := o.f
	if o.interval <= 0 {
		return usagef("--interval must be positive")
	}
	if err := positiveInt("max-quarantine", o.maxQuarantine); err != nil {
		return err
	}
	if o.allContexts {
		return o.watchAll(ctx)
	}
	// Each pass is bounded by --timeout (30 s unless given), and so is each request of the client.
	timeout := a.timeout(lookTimeout)
	s, err := a.session(ctx, timeout)
	if err != nil {
		return err
	}
	l := s.Loader()
	o.apply(&l.Config)
	cfg := l.Config
	exp := o.exporter
	if exp == nil {
		var stop func()
		if exp, stop, err = o.serveMetrics(o.metricsAddr, s.Where()); err != nil {
			return err
		}
		defer stop()
	}
	hk := startHooks(ctx, o.exec, &lockedWriter{w: a.io.err}, s.Secrets(), o.execEnv) // its goroutine writes while the passes go on
	defer hk.stop()
	o.witness = s.Witness()
	var prev *rules.Report
	lastErr := ""
	for {
		start := time.Now()
		pass, cancel := passContext(ctx, timeout)
		measure := metrics.NewMeasurer(cfg)
		var also func([]rules.Item, time.Time)
		if exp != nil {
			also = measure.Add
		}
		r, whole, err := watchPass(pass, l, o, prev, also)
		cancel()
		now := time.Now().UTC()
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// Stopped in the middle of a pass: it did not see the container whole. Said, and exit 2 (could not
			// check), never 0 — a wrapper must not take an interrupted look for a healthy one. A pass that failed
			// on its own (the container gone) as the stop came is not interrupted: it is said as any failed pass,
			// and the watch ends as it does between passes.
			err = couldNotLook(ctx, err)
			o.emit(hk, rules.Change{Time: now, Kind: rules.KindError, Event: rules.ChangeNew, Detail: err.Error()})
			return exitCode{code: exitError, err: fmt.Errorf("stopped during a pass: %w", err)}
		}
		publish(exp, measure, r, err, start)
		lastErr = o.sayPassError(hk, now, err, lastErr)
		if whole {
			for _, c := range rules.Changes(prev, r, r.Now) {
				o.emit(hk, c)
			}
			prev = &r
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.interval):
		}
	}
}

// sayPassError says a pass's error once, when it is new (not every pass it lasts), and that it resolved when a
// pass reads again; it returns the error now in force ("" for none).
func (o *watchOptions) sayPassError(hk *hooks, now time.Time, err error, last string) string {
	switch {
	case err != nil && err.Error() != last:
		o.emit(hk, rules.Change{Time: now, Kind: rules.KindError, Event: rules.ChangeNew, Detail: err.Error()})
		return err.Error()
	case err == nil && last != "":
		o.emit(hk, rules.Change{Time: now, Kind: rules.KindError, Event: rules.ChangeResolved})
		return ""
	}
	return last
}

// watchPass looks at the container once and works out which expiring blobs are gone for good. whole reports
// whether the pass saw the whole container — it did when it listed everything but could not read some payloads
// (err says so): its changes are still said, beside the error, so one unreadable blob does not silence every
// other alert.
func watchPass(ctx context.Context, l *replay.Loader, o *watchOptions, prev *rules.Report, also func([]rules.Item, time.Time)) (r rules.Report, whole bool, err error) {
	r, err = look(ctx, l, o.checkOptions(), also, o.witness)
	var unread unreadPayloads
	if err != nil && !errors.As(err, &unread) {
		return r, false, err
	}
	// Expiring blobs that are gone: deleted by the lifecycle rule, or handled? Said apart, never as one.
	lost, lerr := replay.Lost(ctx, l.Container, l.Config, prev, r, r.Now)
	if lerr != nil {
		return r, false, couldNotLook(ctx, lerr)
	}
	r.Lost = lost
	return r, true, err
}

// publish hands a pass to the exporter, when one serves: its values; or, for a pass that could not read the whole
// container, its failure (the gauges keep the last good pass). A pass that listed everything but could not read
// some payloads shows what it saw — deadletter_unread_payloads counts the rest — and /healthz still answers 503.
func publish(exp *metrics.Exporter, measure *metrics.Measurer, r rules.Report, err error, start time.Time) {
	var unread unreadPayloads
	switch {
	case exp == nil:
	case err == nil:
		exp.Succeeded(measure.Values(r), time.Now(), time.Since(start))
	case errors.As(err, &unread):
		exp.Partial(measure.Values(r), err, time.Now(), time.Since(start))
	default:
		exp.Failed(err, time.Since(start))
	}
}

// passContext bounds one pass of watch by its timeout (none with --timeout 0).
func passContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, timeout, fmt.Errorf("the pass was not done within --timeout %s (raise it for a container this size)", durationFlag{&timeout}))
}

// serveMetrics starts the --metrics-addr server before the first pass, so a scraper and a readiness probe find it
// (answering 503 until that pass ends) and a taken address fails the command at once. stop shuts it down and
// waits for it; with no address it serves nothing and exp is nil.
func (o *watchOptions) serveMetrics(addr, container string) (exp *metrics.Exporter, stop func(), err error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	exp = metrics.New(container)
	stop, err = o.listenMetrics(addr, exp.Handler())
	return exp, stop, err
}

// listenMetrics serves the metrics handler on addr until stop.
func (o *watchOptions) listenMetrics(addr string, h http.Handler) (stop func(), err error) {
	a := o.f
	srv, err := metrics.Listen(addr, h, a.io.err)
	if err != nil {
		return nil, fmt.Errorf("cannot serve metrics on --metrics-addr %s: %w", addr, err)
	}
	fmt.Fprintf(a.io.err, "deadletter: serving /metrics and /healthz on http://%s\n", srv.Addr())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			fmt.Fprintf(a.io.err, "deadletter: stopping the metrics server: %s\n", textfmt.Printable(err.Error()))
		}
	}, nil
}

// printChange prints one change as a line; on a terminal, past a handful of names, the names go one per line
// beneath it (piped, the line stays whole for grep).
func (o *watchOptions) printChange(at string, c rules.Change) {
	a := o.f
	if a.context != "" {
		at = "[" + textfmt.Printable(a.context) + "] " + at // (watch --all-contexts: whose line it is)
	}
	_, term := a.io.out.(*fitWriter)
	if !term || len(c.Names) <= 3 || !present.ChangeNamesBlobs(c) {
		fmt.Fprintf(a.io.out, "%s %-8s %-13s %s\n", at, c.Event, c.Kind, present.ChangeMessage(c))
		return
	}
	head := c
	head.Names, head.More = nil, 0
	fmt.Fprintf(a.io.out, "%s %-8s %-13s %s:\n", at, c.Event, c.Kind, present.ChangeMessage(head))
	for _, n := range c.Names {
		fmt.Fprintln(a.io.out, "    "+textfmt.Printable(n))
	}
	if c.More > 0 {
		fmt.Fprintf(a.io.out, "    … and %d more\n", c.More)
	}
}

// emit prints one change and hands it to --exec when it is (still) a problem.
func (o *watchOptions) emit(hk *hooks, c rules.Change) {
	a := o.f
	c.Time = c.Time.UTC().Truncate(time.Second)
	j := output.ToChangeJSON(c)
	j.Context = output.Text(a.context)
	if o.out.anyJSON() { // a stream: one document a line either way
		output.WriteJSONLine(a.io.out, j)
	} else {
		o.printChange(j.Time, c)
	}
	if c.Event == rules.ChangeResolved {
		return // good news is printed, not paged (a lost blob is not good news: it goes to --exec)
	}
	line, _ := output.Marshal(j)
	hk.send(hookLine{line: line, what: fmt.Sprintf("%s %s", c.Event, c.Kind), env: hookEnv(c, j)})
}

// hookEnv describes a change to --exec in DEADLETTER_* variables, beside the JSON line on its stdin: what
// happened, to how many blobs, and their names one per line (escaped, as every untrusted text is).
func hookEnv(c rules.Change, j output.ChangeJSON) []string {
	names := make([]string, len(c.Names))
	for i, n := range c.Names {
		names[i] = textfmt.Printable(n)
	}
	return []string{"DEADLETTER_EVENT=" + string(c.Event), "DEADLETTER_KIND=" + string(c.Kind), "DEADLETTER_TIME=" + j.Time,
		"DEADLETTER_COUNT=" + strconv.Itoa(c.Count), "DEADLETTER_TOTAL=" + strconv.Itoa(c.Total),
		"DEADLETTER_NAMES=" + strings.Join(names, "\n"), "DEADLETTER_MORE=" + strconv.Itoa(c.More),
		"DEADLETTER_MESSAGE=" + present.ChangeMessage(c)}
}

// execTimeout bounds one --exec run: a notifier that hangs (a webhook with no timeout of its own) is killed,
// with everything it started, rather than holding the next ones back.
const execTimeout = 30 * time.Second

// hookQueue is how many --exec lines may wait for a slow notifier before new ones are dropped (and said so).
const hookQueue = 64

// hooks runs --exec for watch's lines one at a time, apart from the passes: a slow or hung notifier never delays
// a pass, so the metrics and /healthz stay current while it runs.
type hooks struct {
	cmd     string
	errw    io.Writer
	secrets []string
	pass    []string // --exec-env
	q       chan hookLine
	done    chan struct{}
	// left counts the groups whose leftovers are still within their grace (reaped in the background, so a hook
	// that starts a `curl &` does not hold the next line back).
	left sync.WaitGroup
}

// hookLine is one run of --exec: the change as a JSON line, what it is (for messages), and its variables.
type hookLine struct {
	line []byte
	what string
	env  []string
}

func startHooks(ctx context.Context, cmd string, errw io.Writer, secrets, pass []string) *hooks {
	h := &hooks{cmd: cmd, errw: errw, secrets: secrets, pass: pass, q: make(chan hookLine, hookQueue), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for l := range h.q {
			if ctx.Err() == nil {
				h.run(ctx, l)
			}
		}
	}()
	return h
}

// send queues a line for --exec (nothing when there is no --exec).
func (h *hooks) send(l hookLine) {
	if h.cmd == "" {
		return
	}
	select {
	case h.q <- l:
	default:
		fmt.Fprintf(h.errw, "deadletter: --exec is %d lines behind: the line for %s was not passed on\n", hookQueue, l.what)
	}
}

// stop lets the queued lines run (each still bounded by execTimeout; a signal cuts them short) and waits, for
// what they left in the background too.
func (h *hooks) stop() {
	close(h.q)
	<-h.done
	h.left.Wait()
}

// run runs the command once (internal/hook: its own process group or job, scrubbed environment), the line on
// stdin; whatever it started is killed once it exits, past execTimeout, or when watch stops.
func (h *hooks) run(ctx context.Context, l hookLine) {
	gone, err := hook.Run(ctx, h.cmd, hook.Options{Stdin: append(l.line, '\n'), Env: l.env, Secrets: h.secrets, Pass: h.pass, Output: h.errw,
		Timeout: execTimeout, Grace: hookGrace})
	h.left.Add(1)
	go func() { <-gone; h.left.Done() }()
	switch {
	case errors.Is(err, hook.ErrTimeout):
		fmt.Fprintf(h.errw, "deadletter: --exec for %s did not finish within %s and was stopped, with everything it started\n", l.what, textfmt.Duration(execTimeout))
	case err != nil && ctx.Err() == nil:
		fmt.Fprintf(h.errw, "deadletter: --exec for %s: %s\n", l.what, textfmt.Printable(err.Error()))
	}
}

// hookGrace is how long what a hook started in the background may run on after the hook itself exits.
const hookGrace = 2 * time.Second

// lockedWriter serializes writes from goroutines of their own.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
