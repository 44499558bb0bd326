package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/internal/twin"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// forSource is a factory for a twin's SOURCE: a context of the config file, a connection string or a
// directory — as --context, --connection-string and --dir would name it. The command line's other settings
// (--ttl, --handlers, --container…) apply over a context's, as they do for every command; its --dir is the twin's,
// never the source's. It returns what to call the source in the twin's record: no credential.
func (a *factory) forSource(cmd *cobra.Command, src string) (*factory, string, error) {
	cf, err := a.loadConfig(cmd.Flags())
	if err != nil {
		return nil, "", err
	}
	sub := newFactory(a.io)
	sub.config = cf
	fs := pflag.NewFlagSet("source", pflag.ContinueOnError)
	sub.globalFlags(fs)
	var setErr error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if g := fs.Lookup(f.Name); g != nil && setErr == nil && f.Name != "context" && !slices.Contains(backendFlags, f.Name) {
			setErr = fs.Set(f.Name, f.Value.String())
		}
	})
	if setErr != nil {
		return nil, "", setErr
	}
	var describe string
	switch c := findOrNil(cf, src); {
	case c != nil:
		if c.Err != nil {
			return nil, "", c.Err
		}
		if _, err := applyContext(fs, c); err != nil {
			return nil, "", err
		}
		sub.context, describe = c.Name, "context "+c.Name
	case looksLikeConnectionString(src):
		if secretInText.MatchString(src) && !strings.Contains(src, "devstoreaccount1") {
			fmt.Fprintln(a.io.err, "deadletter: warning: --from holds a secret, and any process on this machine can read a command line: name a context whose connection-string-env holds it instead")
		}
		if err := fs.Set("connection-string", src); err != nil {
			return nil, "", err
		}
	default:
		fi, err := os.Stat(src)
		if err != nil || !fi.IsDir() {
			return nil, "", usagef("--from %s: not a context of the config file, a connection string or a directory", textfmt.Printable(src))
		}
		abs, _ := filepath.Abs(src)
		if err := fs.Set("dir", abs); err != nil {
			return nil, "", err
		}
		describe = "directory " + abs
	}
	if err := sub.g.validate(); err != nil {
		return nil, "", err
	}
	return sub, describe, nil
}

// findOrNil is the context of that name, nil without a config file or such a context.
func findOrNil(cf *session.ConfigFile, name string) *session.NamedContext {
	if cf == nil {
		return nil
	}
	return cf.Find(name)
}

// looksLikeConnectionString: a storage connection string names its account, endpoint or the emulator.
func looksLikeConnectionString(s string) bool {
	l := strings.ToLower(s)
	for _, k := range []string{"usedevelopmentstorage=", "accountname=", "blobendpoint=", "sharedaccesssignature=", "defaultendpointsprotocol="} {
		if strings.Contains(l, k) {
			return true
		}
	}
	return false
}

// startFrom makes a twin of SOURCE in dir: lists it once, infers the script from its evidence, and copies it.
func startFrom(a *factory, cmd *cobra.Command, dir, src string, asJSON bool) error {
	sub, describe, err := a.forSource(cmd, src)
	if err != nil {
		return err
	}
	if sub.g.dir != "" && overlap(sub.g.dir, dir) { // nothing is written to the source
		return usagef("--from %s and the twin's --dir %s overlap: the twin would write into its source", textfmt.Printable(src), textfmt.Printable(dir))
	}
	ctx := cmd.Context()
	s, err := sub.session(ctx, sub.timeout(0))
	if err != nil {
		return err
	}
	l, cfg := s.Loader(), s.Config()
	if describe == "" {
		describe = l.Container.Describe()
	} else if sub.context != "" {
		describe += " (" + l.Container.Describe() + ")"
	}
	progress := newCopyProgress(a.io.err, 0)
	// The source is listed once, as it is copied: a million blobs are never held at once (twin.StartFrom).
	tw, err := twin.StartFrom(ctx, dir, twin.From{Source: l.Container, Describe: describe, Config: cfg,
		Witness:  func(now time.Time) rules.WitnessReport { return s.ReadWitness(ctx, now) },
		Progress: progress.add, Listed: progress.listed})
	progress.done()
	if err != nil {
		if wasInterrupted(ctx) {
			return exitCode{code: exitInterrupted, err: err}
		}
		return err
	}
	defer tw.Close()
	if asJSON {
		return output.Print(a.io.out, output.JSON, output.TwinStartJSON{Dir: tw.Place().Dir, Source: describe, Blobs: progress.n, Bytes: progress.bytes,
			Clock: output.RFC3339(tw.Now()), Script: scriptJSONOf(tw)}, nil)
	}
	fmt.Fprintf(a.io.out, "twin of %s started in %s: %d blob(s) (%s) copied; its clock stands at %s, the source's service time\n",
		textfmt.Printable(describe), textfmt.Printable(tw.Place().Dir), progress.n, textfmt.Bytes(progress.bytes), tw.Now().Format(time.RFC3339))
	fmt.Fprintln(a.io.out, "the script, inferred from the evidence (twin script set changes it):")
	writeScript(a.io.out, scriptJSONOf(tw))
	return nil
}

// copyProgress counts a twin's copy and, on a terminal, shows it as a bar on one line.
type copyProgress struct {
	mu       sync.Mutex
	w        io.Writer
	total    int
	complete bool // the total is the listing's end, not its count so far
	n        int
	bytes    int64
	terminal bool
	last     time.Time
	// leftOut counts the blobs the twin is made without (twin.LeftOut); firstOut names the first few and why.
	leftOut  int
	firstOut []string
}

func newCopyProgress(w io.Writer, total int) *copyProgress {
	f, ok := w.(*os.File)
	return &copyProgress{w: w, total: total, terminal: ok && isatty.IsTerminal(f.Fd())}
}

// listed is the listing's count so far: the bar's total once complete.
func (p *copyProgress) listed(n int, complete bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.complete = n, complete
}

func (p *copyProgress) add(c store.Copied) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.Err == nil {
		p.n++
		p.bytes += c.Size
	}
	if c.Err != nil && twin.LeftOut(c.Err) {
		p.leftOut++
		if len(p.firstOut) < 3 {
			p.firstOut = append(p.firstOut, textfmt.Printable(c.Name)+" ("+textfmt.Printable(c.Err.Error())+")")
		}
	}
	if p.terminal && (time.Since(p.last) > 100*time.Millisecond || p.n == p.total) {
		p.last = time.Now()
		const width = 30
		filled := width
		if p.total > 0 {
			filled = width * p.n / p.total
		}
		total := strconv.Itoa(p.total)
		if !p.complete {
			total += "+" // still listing
		}
		fmt.Fprintf(p.w, "\rcopying [%s%s] %d/%s blob(s), %s", strings.Repeat("█", filled), strings.Repeat("░", width-filled), p.n, total, textfmt.Bytes(p.bytes))
	}
}

func (p *copyProgress) done() {
	if p.terminal {
		fmt.Fprintln(p.w)
	}
	if p.leftOut > 0 {
		fmt.Fprintf(p.w, "deadletter: warning: %d blob(s) of the source are not in the twin — a link or FIFO the source will not read, or a name the twin's directory cannot hold — and the rehearsal runs without them: %s\n",
			p.leftOut, strings.Join(p.firstOut, "; "))
	}
}

// scriptJSONOf is the twin's script as status, script show and start print it: every window, in time order; a
// window without end is "until further notice" (to empty).
func scriptJSONOf(tw *twin.Twin) []output.WindowJSON {
	st, sc := tw.State(), tw.Script()
	out := []output.WindowJSON{}
	for _, w := range sc.Windows {
		to := ""
		if w.To != twin.UntilFurtherNotice {
			to = output.RFC3339(st.Start.Add(w.To))
		}
		out = append(out, output.WindowJSON{Who: w.Sub, From: output.RFC3339(st.Start.Add(w.From)), To: to, Outcome: w.Outcome, Status: w.Status, Why: w.Why,
			Now: !tw.Now().Before(st.Start.Add(w.From)) && (w.To == twin.UntilFurtherNotice || tw.Now().Before(st.Start.Add(w.To)))})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].From < out[j].From })
	return out
}

func writeScript(w io.Writer, script []output.WindowJSON) {
	if len(script) == 0 {
		fmt.Fprintln(w, "  every handler and the replay up")
	}
	for _, s := range script {
		mark := " "
		if s.Now {
			mark = "▶"
		}
		to := s.To
		if to == "" {
			to = "until further notice"
		}
		status := ""
		if s.Status != 0 {
			status = " " + strconv.Itoa(s.Status)
		}
		fmt.Fprintf(w, "  %s %s → %s  %-18s down: %s%s (%s)\n", mark, s.From, to, textfmt.Printable(s.Who), s.Outcome, status, textfmt.Printable(s.Why))
	}
}

// twinScriptCmd edits and shows the twin's script: who is down, from when, until when, with what status.
func newCmdTwinScript(a *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "script set|show",
		Short: "the twin's script: which handlers are down, when, with what status — shown and changed",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newCmdTwinScriptSet(a, nil), newCmdTwinScriptShow(a))
	return cmd
}

func newCmdTwinScriptShow(a *factory) *cobra.Command {
	var pr *printFlags
	cmd := &cobra.Command{
		Use:     "show --dir D [-o json]",
		Short:   "the twin's script, ▶ marking what is down now",
		Example: `  deadletter twin script show --dir ./rehearsal`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asJSON := pr.json()
			dir, err := twinDir(a.g)
			if err != nil {
				return err
			}
			tw, err := twin.Peek(dir)
			if err != nil {
				return err
			}
			script := scriptJSONOf(tw)
			if asJSON {
				return pr.print(a.io.out, output.TwinScriptJSON{Clock: output.RFC3339(tw.Now()), Script: script, Starts: startsJSONOf(tw)}, nil)
			}
			fmt.Fprintf(a.io.out, "twin clock at %s\n", tw.Now().Format(time.RFC3339))
			writeScript(a.io.out, script)
			writeStarts(a.io.out, startsJSONOf(tw))
			return nil
		},
	}
	pr = declareOutput(cmd, outText, outJSON)
	return cmd
}

// parseScriptSet reads script set's down|up and checks --status against it.
func parseScriptSet(cmd *cobra.Command, word string, status int) (bool, error) {
	var down bool
	switch strings.ToLower(word) {
	case "down":
		down = true
	case "up":
	default:
		return false, usagef("%s: want down or up", textfmt.Printable(word))
	}
	if cmd.Flags().Changed("status") && !down {
		return false, usagef("--status says how a handler fails: it goes with down")
	}
	// Event Grid takes 200–204 as delivered: a handler answering one is up, and it never dead-letters an event
	// for it. Any other final status fails the delivery (400, 403 and 413 dead-letter at once, the rest retry).
	switch {
	case status >= 200 && status <= 204:
		return false, usagef("--status %d: Event Grid takes 200–204 as delivered, never as a failure: give a status it retries (503, 500, 429, 404 …), one it dead-letters at once (400, 403, 413), or 0 for a timeout", status)
	case status != 0 && (status < 205 || status > 599):
		return false, usagef("--status %d: want the HTTP status of a failed delivery (205–599), or 0 for a timeout", status)
	}
	return down, nil
}

// scriptChange is script set's change, its times read against the twin's clock: from --at (default now) until
// --until (default further notice). What has run cannot be rewritten: a change that ends at or before the clock is
// refused, and one that starts before it starts at the clock (moved says so).
func scriptChange(tw *twin.Twin, who string, down bool, at, until string, status int) (c twin.Change, from, to time.Time, moved bool, err error) {
	c, from, to, err = scriptChangeAt(tw, who, down, at, until, status)
	if err != nil {
		return c, from, to, false, err
	}
	now, start := tw.Now(), tw.State().Start
	if !to.After(now) {
		return c, from, to, false, usagef("the change ends at %s, and the twin's clock stands at %s: what the twin has run cannot be rewritten (give an --until after the clock)",
			to.Format(time.RFC3339), now.Format(time.RFC3339))
	}
	if from.Before(now) {
		from, moved = now, true
		c.From = now.Sub(start)
	}
	return c, from, to, moved, nil
}

func scriptChangeAt(tw *twin.Twin, who string, down bool, at, until string, status int) (twin.Change, time.Time, time.Time, error) {
	now, start := tw.Now(), tw.State().Start
	from, err := parseTwinTime("at", at, now)
	if err != nil {
		return twin.Change{}, from, from, err
	}
	to := start.Add(twin.UntilFurtherNotice)
	if until != "" {
		if to, err = parseTwinTime("until", until, now); err != nil {
			return twin.Change{}, from, to, err
		}
	}
	if from.Before(start) {
		return twin.Change{}, from, to, usagef("--at %s is before the twin's start (%s)", from.Format(time.RFC3339), start.Format(time.RFC3339))
	}
	if until == "" && !to.After(from) { // further notice is a bound of its own, the script's far end
		return twin.Change{}, from, to, usagef("--at %s is past the far end of the twin's script (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	switch {
	case !to.After(from) && !to.After(now): // (with no --at, from is the clock: say it, not an --at never given)
		return twin.Change{}, from, to, usagef("the change ends at %s, and the twin's clock stands at %s: what the twin has run cannot be rewritten (give an --until after the clock)",
			to.Format(time.RFC3339), now.Format(time.RFC3339))
	case !to.After(from):
		return twin.Change{}, from, to, usagef("--until %s must come after --at %s", to.Format(time.RFC3339), from.Format(time.RFC3339))
	}
	c := twin.Change{Who: who, Down: down, From: from.Sub(start), To: to.Sub(start), Status: status}
	if until == "" {
		c.To = twin.UntilFurtherNotice
	}
	return c, from, to, nil
}

// parseTwinTime reads a time of the script: RFC 3339, "now", or +DURATION from the twin's clock.
func parseTwinTime(flag, s string, now time.Time) (time.Time, error) {
	switch {
	case s == "" || s == "now":
		return now, nil
	case strings.HasPrefix(s, "+"):
		d, err := textfmt.ParseDuration(s[1:])
		if err != nil || d < 0 {
			return time.Time{}, usagef("--%s %s: want a time (2026-05-01T12:00:00Z), now, or +DURATION from the twin's clock (+30m)", flag, s)
		}
		return now.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usagef("--%s %s: want a time (2026-05-01T12:00:00Z), now, or +DURATION from the twin's clock (+30m)", flag, s)
	}
	return t, nil
}

// twinScriptSetOptions are twin script set's: which subscription, down or up, over which stretch.
type twinScriptSetOptions struct {
	f         *factory
	cmd       *cobra.Command
	who, word string
	at, until string
	status    int
	workers   int
	out       *printFlags
}

func newCmdTwinScriptSet(f *factory, runF func(context.Context, *twinScriptSetOptions) error) *cobra.Command {
	o := &twinScriptSetOptions{f: f}
	cmd := &cobra.Command{
		Use:   "set SUB down|up --dir D [--at T] [--until T] [--status N] | set app stop|start|restart|scale-out --dir D [--at T] [--until T] [--workers N]",
		Short: "bring a handler (or the replay) down with a status, or up, from a time until a time; stop, start, restart or scale out the Function App",
		Long: `set changes the twin's script. SUB is a subscription of the twin (in any case) or replay. down makes every
delivery to it fail with --status (503 unless given; 0 is a timeout; 400, 403 and 413 dead-letter at once;
200–204 are deliveries, refused) from --at until --until; up makes it answer again over that stretch. T is a time
(RFC 3339), now, or +DURATION from the twin's clock; --at defaults to now and --until to further notice. The past
is not rewritten: a change ending before the clock is refused, one starting before it starts at the clock.

SUB app is the Function App itself: stop stops every handler and the replay (with --status) from --at until
--until, and starts it again then; start ends a stop at --at; restart restarts a running app; scale-out adds
--workers workers to it. Every start — and every worker of a scale-out — runs the estate's app-start drain: it
re-uploads the root blobs at least a TTL old (docs/estate.md). The twin's activity log (what commands on its
directory read as the app's last start) holds starts and restarts; a scale-out is no operation, and is not there.`,
		Example: `  deadletter twin script set webhooks up --at +30m --dir ./rehearsal
  deadletter twin script set friend-requests down --status 500 --until +2h --dir ./rehearsal
  deadletter twin script set replay down --at +10m --until +1h --dir ./rehearsal
  deadletter twin script set app stop --until +2h --dir ./rehearsal
  deadletter twin script set app scale-out --workers 3 --at +30m --dir ./rehearsal`,
		Args: exactArgs(2, "usage: deadletter twin script set SUB down|up --dir D [--at T] [--until T] [--status N], or app stop|start|restart|scale-out"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cmd, o.who, o.word = cmd, args[0], args[1]
			return runWith(runF, runTwinScriptSet)(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.at, "at", "", "from when: a time, now, or +DURATION from the twin's clock (default now)")
	cmd.Flags().StringVar(&o.until, "until", "", "until when: a time, or +DURATION from the twin's clock (default: until further notice)")
	cmd.Flags().IntVar(&o.status, "status", 503, "the HTTP status a down handler answers (0: it times out)")
	cmd.Flags().IntVar(&o.workers, "workers", 1, "app start, restart and scale-out: how many workers start at once (each runs the estate's drain)")
	o.out = declareOutput(cmd, outText, outJSON)
	return cmd
}

func runTwinScriptSet(ctx context.Context, o *twinScriptSetOptions) error {
	a := o.f
	dir, err := twinDir(a.g)
	if err != nil {
		return err
	}
	if strings.EqualFold(o.who, "app") {
		return runTwinAppSet(ctx, o, dir)
	}
	if o.cmd.Flags().Changed("workers") {
		return usagef("--workers says how many workers a start of the Function App runs: it goes with app start or scale-out")
	}
	down, err := parseScriptSet(o.cmd, o.word, o.status)
	if err != nil {
		return err
	}
	tw, c, from, to, err := openScriptChange(ctx, o, dir, o.who, down)
	if err != nil {
		return err
	}
	defer tw.Close()
	change := fmt.Sprintf("%s %s from %s", c.Who, o.word, from.Format(time.RFC3339))
	if o.until != "" {
		change += " until " + to.Format(time.RFC3339)
	}
	if down {
		change += fmt.Sprintf(" (status %d)", c.Status)
	}
	// a change the script refuses is a usage error and records nothing
	trial := tw.Script()
	trial.Windows = slices.Clone(trial.Windows)
	if _, err := trial.Apply(c); err != nil {
		return usagef("%s", err)
	}
	err = recordScriptChange(a, o.cmd, dir, tw.Now(), change, func() (err error) {
		c, err = tw.ChangeScript(c)
		return err
	})
	var nr session.NoRecordError
	switch {
	case errors.As(err, &nr):
		return err
	case err != nil:
		return usagef("%s", err)
	}
	return o.out.print(a.io.out, output.TwinScriptJSON{Clock: output.RFC3339(tw.Now()), Changed: c.Who, Script: scriptJSONOf(tw), Starts: startsJSONOf(tw)}, func() {
		end := "until further notice"
		if o.until != "" {
			end = "until " + to.Format(time.RFC3339)
		}
		fmt.Fprintf(a.io.out, "%s %s from %s %s\n", textfmt.Printable(c.Who), scriptWord(down, c.Status), from.Format(time.RFC3339), end)
		writeScript(a.io.out, scriptJSONOf(tw))
	})
}

// scriptWord says a change: up, or down with how it fails ("down (Busy 503)").
func scriptWord(down bool, status int) string {
	if !down {
		return "up"
	}
	word := fmt.Sprintf("down (%s", twin.OutcomeOf(status))
	if status != 0 {
		word += " " + strconv.Itoa(status)
	}
	return word + ")"
}

func newCmdTwinDiff(a *factory) *cobra.Command {
	var pr *printFlags
	var all, events bool
	cmd := &cobra.Command{
		Use:   "diff --dir D [--all] [--events] [-o json]",
		Short: "what became of each blob the twin opened on: replayed, back in quarantine, stranded again, lost — and which actions led there",
		Long: `diff compares the rehearsal with the snapshot the twin opened on: for each blob it held then, where it is now
(the rule every screen uses: replay.WhereIs) — replayed (archived, its events republished), back in quarantine,
stranded again, restored, lost to the lifecycle rule — and the drains and restores that led there, by the run ids
they stamped. Text shows the blobs whose fate changed (--all: every blob); JSON every blob.`,
		Example: `  deadletter drain --dir ./rehearsal --yes && deadletter twin advance --dir ./rehearsal --by 3h
  deadletter twin diff --dir ./rehearsal`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asJSON := pr.json()
			dir, err := twinDir(a.g)
			if err != nil {
				return err
			}
			d, err := twinDiff(cmd.Context(), a.g, dir, events)
			if err != nil {
				return err
			}
			if asJSON {
				return pr.print(a.io.out, d, nil)
			}
			fmt.Fprintf(a.io.out, "the twin opened at %s; its clock is at %s\n", d.Opened, d.Clock)
			for _, b := range d.Blobs {
				if !all && !b.Changed { // exactly the blobs JSON marks changed: a blob stranded then and now is not
					continue
				}
				acts := "no action"
				if len(b.Actions) > 0 {
					var s []string
					for _, x := range b.Actions {
						s = append(s, string(x))
					}
					acts = strings.Join(s, "; ")
				}
				fmt.Fprintf(a.io.out, "%-11s %s\n            %s — %s\n", b.Kind, textfmt.Printable(string(b.Name)), textfmt.Printable(string(b.Fate)), textfmt.Printable(acts))
				for i, l := range b.EventsSince {
					if i == logEventsShown {
						fmt.Fprintf(a.io.out, "            … and %d more event(s) (-o json has every one)\n", len(b.EventsSince)-i)
						break
					}
					fmt.Fprintf(a.io.out, "            %s\n", l)
				}
			}
			var kinds []string
			for k, n := range d.Counts {
				kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
			}
			sort.Strings(kinds)
			fmt.Fprintf(a.io.out, "%d blob(s): %s\n", len(d.Blobs), strings.Join(kinds, ", "))
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "text: every blob, also those where they were and unchanged")
	cmd.Flags().BoolVar(&events, "events", false, "follow the events of each blob that moved, by their ids: every pass since, to where each stands now")
	pr = declareOutput(cmd, outText, outJSON)
	return cmd
}

// twinDiff works out the fate of every blob of the twin's snapshot, on the container as every command sees it.
func twinDiff(ctx context.Context, g globalFlags, dir string, events bool) (output.DiffJSON, error) {
	tw, err := twin.Peek(dir)
	if err != nil {
		return output.DiffJSON{}, err
	}
	sp := g.spec("")
	c, err := session.OpenContainer(&sp)
	if err != nil {
		return output.DiffJSON{}, err
	}
	cfg := tw.Config()
	l := replay.NewLoader(c, cfg)
	snap, err := l.List(ctx)
	if err != nil {
		return output.DiffJSON{}, couldNotLook(ctx, err)
	}
	st := tw.State()
	opened := st.Start.Add(tw.Script().Opens)
	d := output.DiffJSON{Clock: output.RFC3339(snap.Now), Opened: output.RFC3339(opened), Blobs: []output.DiffBlobJSON{}, Counts: map[string]int{}}
	var holds []record.Holder
	err = tw.Snapshot(func(sb twin.SnapshotBlob) error {
		bi := store.BlobInfo{Name: sb.Name, ETag: sb.ETag, Size: sb.Size, LastModified: sb.LastModified}
		w, err := replay.WhereIs(ctx, replay.Listed(snap), bi, opened)
		if err != nil {
			return err
		}
		b := output.DiffBlobJSON{Name: output.Text(sb.Name), Actions: []output.Text{}}
		if w.Kind != replay.WhereDeleted && w.Kind != replay.WhereHere {
			b.Where, b.At = output.Text(w.Name), output.RFC3339(w.At)
		}
		pane := rules.PaneLive
		if i, ok := snap.Lookup(sb.Name); ok {
			pane = snap.Items[i].Pane
			b.Changed = !dirstore.SameETag(snap.Items[i].ETag, sb.ETag)
		}
		b.Fate = output.Text(present.Fate(w, pane))
		switch w.Kind {
		case replay.WhereHere:
			b.Kind = "here"
			if pane == rules.PaneStranded {
				b.Kind = "stranded"
			}
		case replay.WhereArchived:
			b.Kind, b.Changed = "replayed", true
		case replay.WhereQuarantined:
			b.Kind, b.Changed = "quarantined", true
		case replay.WhereRestored:
			b.Kind, b.Changed = "restored", true
		default:
			b.Kind, b.Changed = "gone", true
			if !snap.Now.Before(cfg.ExpiresAt(sb.LastModified)) {
				b.Kind, b.Fate = "lost", "lost to the lifecycle rule: deleted "+output.Text(textfmt.Duration(cfg.Retention))+" after its Last-Modified, its events with it"
			}
		}
		b.Actions = actsOn(tw, sb.Name, w.Name)
		d.Counts[b.Kind]++
		d.Blobs = append(d.Blobs, b)
		if events && b.Where != "" {
			holds = append(holds, record.Holder{Key: record.Key{Blob: sb.Name}, Name: w.Name})
		}
		return nil
	})
	if err != nil || !events {
		return d, err
	}
	return d, diffEvents(ctx, l, snap, holds, d.Blobs)
}

// diffEvents follows the events of the blobs that moved (held where they are now): each blob's journeys, by id.
func diffEvents(ctx context.Context, l *replay.Loader, snap *rules.Snapshot, holds []record.Holder, blobs []output.DiffBlobJSON) error {
	ev, err := record.ReadEvents(ctx, l, holds)
	if err != nil {
		return err
	}
	js, _, err := l.PlanTrace(snap, ev.Originals).Run(ctx, nil)
	if err != nil {
		return err
	}
	byBlob := ev.Journeys(js)
	for i := range blobs {
		b := &blobs[i]
		for _, j := range byBlob[record.Key{Blob: string(b.Name)}] {
			b.Events = append(b.Events, output.JourneysJSON([]rules.Journey{j})...)
			b.EventsSince = append(b.EventsSince, "event "+textfmt.Printable(j.Original)+": "+present.JourneySince(j, string(b.Name), l.Config.Separator))
		}
	}
	return nil
}

// actsOn are the operator's actions the twin took in on a blob, where it is now, or the root blob that copy was
// made of — each once.
func actsOn(tw *twin.Twin, name, now string) []output.Text {
	out := []output.Text{}
	seen := map[string]bool{}
	for _, n := range []string{name, now, rootOf(now)} {
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		for _, act := range tw.Acts(n) {
			out = append(out, output.Text(act.String()))
		}
	}
	return out
}

// rootOf is the root blob a replay's copy was made of ("" for a root blob).
func rootOf(name string) string {
	for _, p := range []string{rules.ArchivedPrefix, rules.QuarantinePrefix} {
		if r, ok := strings.CutPrefix(name, p); ok {
			return r
		}
	}
	return ""
}

func newCmdTwinRm(a *factory) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "rm --dir D",
		Short: "remove a twin: its directory and everything deadletter kept for it (only a directory it made as a twin)",
		Long: `rm removes a twin deadletter made (twin start, or the demo's): its directory — production payloads, for a twin
started --from a container — and its record, clock and state. Any other directory is refused and left as it is,
whatever it holds; so is a twin another process is running. On a terminal it asks first (--yes does not); a
script's twin rm does not ask.`,
		Example: `  deadletter twin rm --dir ./rehearsal
  deadletter twin rm --dir ./rehearsal --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := twinDir(a.g)
			if err != nil {
				return err
			}
			if p, err := twin.Find(dir); err == nil && !yes && a.isTerminal() {
				if err := a.confirm(actionFlags{}, "", twinRmQuestion(p, dir)); err != nil {
					return err
				}
			}
			if err := twin.Remove(dir); err != nil {
				if made.IsNotMade(err) {
					return exitCode{code: exitError, err: fmt.Errorf("%w: twin rm removes only a twin deadletter made; nothing removed", err)}
				}
				if errors.Is(err, made.ErrBusy) {
					return exitCode{code: exitError, err: fmt.Errorf("%w: nothing removed", err)}
				}
				return err
			}
			fmt.Fprintf(a.io.out, "twin in %s removed\n", textfmt.Printable(dir))
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "remove it without asking on a terminal")
	return cmd
}

// twinRmQuestion asks to remove the twin at p: a copy of a container says so (production payloads), a scenario's
// names it.
func twinRmQuestion(p *made.Place, dir string) string {
	what := "its blobs"
	switch source, scenario, err := twin.SourceAt(p); {
	case err == nil && source != "":
		what = "its copy of " + textfmt.Printable(source) + " (production payloads)"
	case err == nil && scenario != "":
		what = "its blobs (the " + textfmt.Printable(scenario) + " rehearsal)"
	}
	return fmt.Sprintf("Remove the twin in %s — %s, its record, clock and state?", textfmt.Printable(dir), what)
}

// recordScriptChange records a change of the twin's script in the record, as every action is: change runs after
// its intent is written (a local record that cannot be written stops it: session.NoRecordError), its outcome
// after.
func recordScriptChange(a *factory, cmd *cobra.Command, dir string, now time.Time, said string, change func() error) error {
	sp := a.g.spec("")
	sp.Dir, sp.AccountURL, sp.ConnectionString, sp.ConnectionStringFile, sp.ReadOnly = dir, "", "", "", false
	s, err := session.Open(sp)
	if err != nil {
		return err
	}
	done, err := s.RecordScriptChange(cmd.Context(), via(cmd), func() time.Time { return now }, said, change)
	a.warnAll(done.Warnings)
	return err
}

// runTwinAppSet is twin script set app WORD: the Function App stopped (until --until), started, restarted or
// scaled out, from --at.
func runTwinAppSet(ctx context.Context, o *twinScriptSetOptions, dir string) error {
	a := o.f
	kind := strings.ToLower(o.word)
	switch kind {
	case twin.AppStop, twin.AppStartNow, twin.AppRestart, twin.AppScaleOut:
	default:
		return usagef("app %s: want stop, start, restart or scale-out", textfmt.Printable(o.word))
	}
	if kind != twin.AppStop && (o.cmd.Flags().Changed("until") || o.cmd.Flags().Changed("status")) {
		return usagef("--until and --status say how long and how the Function App is stopped: they go with app stop")
	}
	if o.workers < 1 || o.workers > 100 {
		return usagef("--workers %d: want 1 to 100", o.workers)
	}
	if (kind == twin.AppStop || kind == twin.AppRestart) && o.cmd.Flags().Changed("workers") {
		return usagef("--workers says how many workers a start or a scale-out starts: it goes with app start or scale-out")
	}
	if _, err := parseScriptSet(o.cmd, "down", o.status); err != nil {
		return err
	}
	tw, c, from, to, err := openScriptChange(ctx, o, dir, twin.ReplayFunction, true)
	if err != nil {
		return err
	}
	defer tw.Close()
	ac := twin.AppChange{Kind: kind, From: c.From, To: c.To, Status: o.status, Workers: o.workers}
	trial := tw.Script()
	trial.Windows, trial.Starts = slices.Clone(trial.Windows), slices.Clone(trial.Starts)
	if err := trial.ApplyApp(ac); err != nil {
		return usagef("app %s at %s: %s", kind, from.Format(time.RFC3339), err)
	}
	said := fmt.Sprintf("app %s at %s", kind, from.Format(time.RFC3339))
	if kind == twin.AppStop && o.until != "" {
		said += " until " + to.Format(time.RFC3339)
	}
	if o.workers > 1 {
		said += fmt.Sprintf(" (%d workers)", o.workers)
	}
	err = recordScriptChange(a, o.cmd, dir, tw.Now(), said, func() error { return tw.ChangeApp(ac) })
	var nr session.NoRecordError
	switch {
	case errors.As(err, &nr):
		return err
	case err != nil:
		return usagef("%s", err)
	}
	return o.out.print(a.io.out, output.TwinScriptJSON{Clock: output.RFC3339(tw.Now()), Changed: "app", Script: scriptJSONOf(tw), Starts: startsJSONOf(tw)}, func() {
		fmt.Fprintln(a.io.out, said)
		writeScript(a.io.out, scriptJSONOf(tw))
		writeStarts(a.io.out, startsJSONOf(tw))
	})
}

// startsJSONOf are the Function App's starts in the twin's script, each with what it did once it ran.
func startsJSONOf(tw *twin.Twin) []output.AppStartRunJSON {
	st, sc := tw.State(), tw.Script()
	out := []output.AppStartRunJSON{}
	ran := st.Starts
	for i, s := range sc.Starts {
		j := output.AppStartRunJSON{At: output.RFC3339(st.Start.Add(s.At)), Kind: s.Kind, Workers: s.Workers, Why: s.Why, ListingFails: s.ListingFails}
		if i < st.NextStart {
			j.Ran = true
			// (the records are the newest maxStarts runs, in order: the k-th from the end is the k-th start from NextStart back)
			if k := len(ran) - (st.NextStart - i); k >= 0 && k < len(ran) {
				r := ran[k]
				j.Reuploaded, j.Raced, j.Handled = &r.Reuploaded, &r.Raced, &r.Handled
			}
		}
		out = append(out, j)
	}
	return out
}

func writeStarts(w io.Writer, starts []output.AppStartRunJSON) {
	if len(starts) == 0 {
		return
	}
	fmt.Fprintln(w, "the Function App's starts (each runs the estate's drain):")
	for _, s := range starts {
		did := "to come"
		switch {
		case s.Ran && s.ListingFails:
			did = "ran: its listing failed, nothing re-uploaded"
		case s.Ran && s.Reuploaded != nil:
			did = fmt.Sprintf("ran: re-uploaded %d blob(s)", *s.Reuploaded)
			if *s.Handled > 0 {
				did += fmt.Sprintf(", %d of them handled already (republished a second time)", *s.Handled)
			}
			if *s.Raced > 0 {
				did += fmt.Sprintf(", %d lost to another worker", *s.Raced)
			}
		case s.Ran:
			did = "ran"
		}
		workers := ""
		if s.Workers > 1 {
			workers = fmt.Sprintf(" ×%d", s.Workers)
		}
		fmt.Fprintf(w, "  %s  %-9s%s  %s (%s)\n", s.At, s.Kind, workers, did, textfmt.Printable(s.Why))
	}
}

// openScriptChange opens the twin under its lock and reads script set's times against its clock (scriptChange),
// saying when --at was moved to the clock. The caller closes the twin.
func openScriptChange(ctx context.Context, o *twinScriptSetOptions, dir, who string, down bool) (*twin.Twin, twin.Change, time.Time, time.Time, error) {
	tw, err := twin.Open(ctx, dir, "twin script set")
	if err != nil {
		return nil, twin.Change{}, time.Time{}, time.Time{}, err
	}
	c, from, to, moved, err := scriptChange(tw, who, down, o.at, o.until, o.status)
	if err != nil {
		tw.Close()
		return nil, c, from, to, err
	}
	if moved {
		fmt.Fprintf(o.f.io.err, "note: --at %s is before the twin's clock: the change starts at the clock, %s (what the twin has run cannot be rewritten)\n",
			textfmt.Printable(o.at), from.Format(time.RFC3339))
	}
	return tw, c, from, to, nil
}
