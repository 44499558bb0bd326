package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/azmonitor"
	"github.com/deadletter/deadletter/internal/heap"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// factory is what every command is built with (gh's cmdutil.Factory): the streams, the global flags every
// command shares, and the config file's context — resolved once before the command runs (prepare) and never
// changed while it runs. A command opens its estate through it (session) and keeps its own flags in its own
// options struct, in its own file, with its constructor (newCmdX) and its run function.
type factory struct {
	io stdio
	g  globalFlags
	// The config file and context (config.go): --config and --context as given, the file read, and the
	// context the command runs in ("" for none).
	configPath, contextFlag string
	config                  *session.ConfigFile
	context                 string
	// setAside says the context a container named above it set aside ("" when none was): SPEC §5.
	setAside string
	// setAsideShort is its second half, which context was set aside: what the header keeps when room is short.
	setAsideShort string
	// givenRules are the rule flags the operator gave (explicitRules): a twin's rules refuse them when they differ.
	givenRules []string
	// timeoutGiven says --timeout was given: each command's own default applies otherwise (timeout).
	timeoutGiven bool
}

// globalFlags are the flags every command takes, before or after the command word. Defaults, then the
// environment, then flags.
type globalFlags struct {
	dir, connString, accountURL, container string
	// connStringFile names a file holding the connection string (systemd's LoadCredential=, a mounted secret):
	// read when the container is opened, so the secret is never on a command line or in the environment.
	connStringFile                      string
	ttl, liveGrace, retention, expiring time.Duration
	maxReplays                          int
	maxAck                              time.Duration
	stackDepth                          int
	handlers, separator                 string
	readOnly                            bool
	// timeout bounds how long a command waits on the container (0: unbounded); each command sets its default.
	timeout time.Duration
	// The second witness (witness.go): the Event Grid topics whose subscriptions dead-letter here, the storage
	// system topic the replay subscription is on (Azure resource IDs), and how far back their metrics are read.
	eventGridTopics   []string
	replaySystemTopic string
	functionApp       string
	witnessWindow     time.Duration
	// auditContainer is the shared record's append-blob container (record.go): a name in the estate's account,
	// or a container's URL in another (signed in with Microsoft Entra ID).
	auditContainer string
}

// newFactory is the factory of one command line: its streams, and every global flag at its default.
func newFactory(io stdio) *factory {
	d := rules.DefaultConfig()
	return &factory{io: io, g: globalFlags{container: "deadletter", ttl: d.TTL, liveGrace: d.LiveGrace, retention: d.Retention,
		expiring: d.ExpiringWithin, maxReplays: d.MaxReplays, separator: d.Separator, maxAck: rules.DefaultMaxAck,
		witnessWindow: azmonitor.DefaultWindow}}
}

// envVar is one environment variable a global flag reads.
type envVar struct{ name, flag string }

// The environment the tool reads: its own DEADLETTER_* variables, plus the Function App's own connection-string
// variable, so the tool runs beside the Function App's settings.
var envVars = []envVar{
	{"AZURE_STORAGE_ACCOUNT_CONNECTION_STRING", "connection-string"},
	{"DEADLETTER_CONNECTION_STRING_FILE", "connection-string-file"},
	{"DEADLETTER_DIR", "dir"}, {"DEADLETTER_ACCOUNT_URL", "account-url"}, {"DEADLETTER_CONTAINER", "container"},
	{"DEADLETTER_TTL", "ttl"}, {"DEADLETTER_LIVE_GRACE", "live-grace"}, {"DEADLETTER_RETENTION", "retention"},
	{"DEADLETTER_EXPIRING_WITHIN", "expiring-within"}, {"DEADLETTER_MAX_REPLAYS", "max-replays"},
	{"DEADLETTER_HANDLERS", "handlers"}, {"DEADLETTER_ID_SEPARATOR", "id-separator"}, {"DEADLETTER_READ_ONLY", "read-only"},
	{"DEADLETTER_MAX_ACK", "max-ack"}, {"DEADLETTER_NODE_STACK_DEPTH", "node-stack-depth"},
	{"DEADLETTER_EVENT_GRID_TOPICS", "event-grid-topics"}, {"DEADLETTER_REPLAY_SYSTEM_TOPIC", "replay-system-topic"}, {"DEADLETTER_FUNCTION_APP", "function-app"},
	{"DEADLETTER_WITNESS_WINDOW", "witness-window"}, {"DEADLETTER_AUDIT_CONTAINER", "audit-container"},
}

// Commands are listed in the order root adds them (what an operator needs first), not sorted. It is cobra's one
// global: set once, not per run, since tests run the command line concurrently.
func init() { cobra.EnableCommandSorting = false }

// useContext reads the config file and applies the command's context to the flags the command line left: the
// flags it set. A container named above the context (SPEC §5) sets it aside, said on stderr and kept for the
// dashboard's header: its settings, register included, belong to another estate.
func (a *factory) useContext(fs *pflag.FlagSet) ([]string, error) {
	cf, err := a.loadConfig(fs)
	if err != nil {
		return nil, err
	}
	a.config = cf
	if f := fs.Lookup("all-contexts"); f != nil && f.Value.String() == "true" {
		return nil, nil // every context, each opened in its place (eachContext): none is applied here
	}
	name, src, err := a.contextName(fs, cf)
	if err != nil || name == "" {
		return nil, err
	}
	if over := containerNamedOver(fs, src); over != "" {
		which := "current-context"
		if src == fromEnv {
			which = "DEADLETTER_CONTEXT"
		}
		a.setAsideShort = fmt.Sprintf("%s %s set aside", which, textfmt.Printable(name))
		a.setAside = fmt.Sprintf("container from %s; %s", over, a.setAsideShort)
		fmt.Fprintln(a.io.err, "deadletter: "+a.setAside)
		return nil, nil
	}
	a.context = name
	return applyContext(fs, cf.Find(name))
}

// lookingAtAnEstate is the annotation of a command that looks at an estate, so runs in a context (SPEC §5): each
// such command sets it in its own literal; seed, demo and twin never take one.
func lookingAtAnEstate() map[string]string { return map[string]string{"context": "yes"} }

// unknownCommand refuses words the root does not know, suggesting the nearest command ("lss": did you mean ls?).
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	} else if cmd.HasParent() { // a group: its few words are the nearest there are
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		msg += "; it takes " + strings.Join(names, ", ")
	}
	return usagef("%s", msg)
}

// refuseUnknownSubcommands makes every group at any depth (twin, twin script, context) refuse a word it does not
// know as the root does — exit 2 with the nearest names — where cobra would print the group's help and exit 0: a
// typo in a script must not read as success. A group given no word still prints its help. help refuses a topic
// it does not know the same way.
func refuseUnknownSubcommands(root *cobra.Command) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.HasSubCommands() && !sub.Runnable() {
				sub.Args = unknownCommand
				sub.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
			}
			walk(sub)
		}
	}
	walk(root)
	root.InitDefaultHelpCmd()
	for _, h := range root.Commands() {
		if h.Name() != "help" || h.Run == nil {
			continue
		}
		show := h.Run
		h.Run = nil
		h.RunE = func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || cmd == nil {
				return usagef("no help topic %q: deadletter help lists the commands", strings.Join(args, " "))
			}
			if len(rest) > 0 && (cmd.HasSubCommands() || !cmd.HasParent()) {
				return unknownCommand(cmd, rest)
			}
			show(c, args)
			return nil
		}
	}
}

func (f *factory) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "deadletter",
		Short: "the Event Grid dead-letter container, for the operator on call",
		Example: `  deadletter --connection-string "$AZURE_STORAGE_ACCOUNT_CONNECTION_STRING"    # the dashboard
  deadletter --account-url https://estate.blob.core.windows.net --read-only   # signed in, looking only
  deadletter demo                                                            # a rehearsal estate`,
		Long: `deadletter shows what is stuck in an Event Grid dead-letter blob container and why, predicts what the
estate's replay function will do with every event, and runs the two remediations the estate allows — drain
stranded blobs, restore quarantined ones — without ever losing a blob. With no command it opens the dashboard.`,
		Version:           currentVersion().String(),
		SilenceErrors:     true,
		SilenceUsage:      true,
		Args:              unknownCommand,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return f.prepare(cmd) },
	}
	root.SetIn(f.io.in)
	root.SetOut(f.io.out)
	root.SetErr(f.io.err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	f.globalFlags(root.PersistentFlags())
	dash := newDashboardOptions(f, root)
	root.RunE = func(cmd *cobra.Command, _ []string) error { dash.cmd = cmd; return runDashboard(cmd.Context(), dash) }
	// The commands in the order an operator needs them first (root's help lists them so).
	root.AddCommand(newCmdLs(f, nil), newCmdShow(f, nil), newCmdGet(f, nil), newCmdDrain(f, nil), newCmdRestore(f, nil),
		newCmdEdit(f, nil), newCmdResubmit(f, nil), newCmdExport(f, nil), newCmdAck(f, nil), newCmdCheck(f, nil), newCmdWatch(f, nil),
		newCmdReport(f, nil), newCmdLog(f, nil), newCmdTrace(f, nil), newCmdAudit(f), newCmdSeed(f, nil), newCmdDemo(f, nil), newCmdTwin(f), newCmdContext(f), newCmdView(f),
		newCmdCompletion(f, root), newCmdVersion(f))
	root.Annotations = lookingAtAnEstate()
	for _, c := range root.Commands() {
		c.Flags().SortFlags = false
	}
	refuseUnknownSubcommands(root)
	root.PersistentFlags().SortFlags = false
	root.RegisterFlagCompletionFunc("context", f.completeContexts)
	f.setHelp(root)
	return root
}

func (f *factory) globalFlags(fs *pflag.FlagSet) {
	g := &f.g
	fs.StringVar(&g.dir, "dir", g.dir, "a local directory as the container: offline snapshots and the demo (env DEADLETTER_DIR)")
	fs.StringVar(&g.connString, "connection-string", g.connString, "storage connection string: account key, SAS, or UseDevelopmentStorage=true[;DevelopmentStorageProxyUri=http://127.0.0.1:PORT] for Azurite (env AZURE_STORAGE_ACCOUNT_CONNECTION_STRING)")
	fs.StringVar(&g.connStringFile, "connection-string-file", g.connStringFile, "a file holding the connection string, e.g. systemd's LoadCredential= (env DEADLETTER_CONNECTION_STRING_FILE)")
	fs.StringVar(&g.accountURL, "account-url", g.accountURL, "https://<account>.blob.core.windows.net, signed in with Microsoft Entra ID (DefaultAzureCredential)")
	fs.StringVar(&g.container, "container", g.container, "container name")
	durationVar(fs, &g.ttl, "ttl", "the replay trigger's delivery window: a root blob older than this is stranded")
	durationVar(fs, &g.liveGrace, "live-grace", "a live blob older than this means the replay is not consuming")
	durationVar(fs, &g.retention, "retention", "the lifecycle rule: blobs are deleted this long after their last modification")
	durationVar(fs, &g.expiring, "expiring-within", "stranded or quarantined blobs this close to lifecycle deletion are about to be lost")
	fs.IntVar(&g.maxReplays, "max-replays", g.maxReplays, "the replay attempt cap")
	fs.StringVar(&g.handlers, "handlers", g.handlers, "the handler register: a JSON object of eventType → idempotent (true/false)")
	fs.StringVar(&g.separator, "id-separator", g.separator, "separator between an event id and its replay attempt")
	fs.BoolVar(&g.readOnly, "read-only", g.readOnly, "refuse drain, restore and ack everywhere")
	fs.IntVar(&g.stackDepth, "node-stack-depth", 0, "the deepest value the estate's Node runtime serializes, measured in its handler (0: the band of known runtimes, 4,120 to 4,600; see docs/estate.md)")
	durationVar(fs, &g.maxAck, "max-ack", "the longest an acknowledgement may last (at most 7d, never past --retention); longer acks found in tags are ignored as suspicious")
	fs.StringVar(&f.configPath, "config", "", "the config file of named contexts (env DEADLETTER_CONFIG; default "+textfmt.Printable(session.DefaultConfigPath())+")")
	fs.StringVar(&f.contextFlag, "context", "", "run in this context of the config file (env DEADLETTER_CONTEXT; default its current-context)")
	fs.StringSliceVar(&g.eventGridTopics, "event-grid-topics", g.eventGridTopics, "Event Grid topics (Azure resource IDs, comma-separated) whose delivery metrics witness whether each handler is failing now; needs Entra ID and the Monitoring Reader role")
	fs.StringVar(&g.functionApp, "function-app", g.functionApp, "the estate's Function App (Azure resource ID): its starts are read from the activity log, since each runs the estate's app-start drain")
	fs.StringVar(&g.replaySystemTopic, "replay-system-topic", g.replaySystemTopic, "the storage account's Event Grid system topic (Azure resource ID) the replay subscription is on: its dropped triggers are blobs being stranded")
	durationVar(fs, &g.witnessWindow, "witness-window", "how far back Event Grid's delivery metrics are read (complete minutes)")
	fs.StringVar(&g.auditContainer, "audit-container", g.auditContainer, "the shared record every operator on call appends to: an append-blob container in the estate's account (or its https URL in another, with Entra ID); made by deadletter audit init")
	durationVar(fs, &g.timeout, "timeout", "give up on the command after this long (default 30s for ls, show, check and each watch pass; none for report, actions and the dashboard, which Ctrl-C stops; 0: none)")
}

// drawsFrames reports whether cmd keeps a screen or a loop going (the dashboard, the demo, watch), where a
// collection must not hold a frame up; every other command answers once and exits, and collects tighter.
func drawsFrames(cmd *cobra.Command) bool {
	return !cmd.HasParent() || cmd.Name() == "demo" || cmd.Name() == "watch"
}

// prepare applies the environment to every flag not given on the command line, then validates.
func (a *factory) prepare(cmd *cobra.Command) error {
	a.fitOutput(cmd)
	if !drawsFrames(cmd) {
		heap.OneShot()
	}
	fs := cmd.Flags()
	if t := fs.Lookup("timeout"); t != nil {
		a.timeoutGiven = t.Changed
	}
	// A container named on the command line beats one named in the environment, whichever backend each names:
	// --dir with AZURE_STORAGE_ACCOUNT_CONNECTION_STRING exported opens the directory.
	backendGiven := false
	for _, name := range backendFlags {
		if f := fs.Lookup(name); f != nil && f.Changed {
			backendGiven = true
		}
	}
	var fromContext []string
	if cmd.Annotations["context"] == "yes" {
		var err error
		if fromContext, err = a.useContext(fs); err != nil {
			return err
		}
		for _, name := range backendFlags {
			backendGiven = backendGiven || slices.Contains(fromContext, name)
		}
	}
	a.warnSecretFlags(fs)
	fromEnv, err := applyEnv(fs, fromContext, backendGiven)
	if err != nil {
		return err
	}
	err = a.g.validate()
	if err == nil {
		a.givenRules = explicitRules(fs, fromEnv)
		return a.useTwinRules(cmd, a.givenRules)
	}
	var set []string
	for _, e := range envVars {
		if slices.Contains(fromEnv, e.name) && strings.Contains(err.Error()+" ", "--"+e.flag+" ") {
			set = append(set, e.name)
		}
	}
	if len(set) > 0 {
		return usagef("%v (from the environment: %s)", err, strings.Join(set, ", "))
	}
	return err
}

// applyEnv sets from the environment every flag neither the command line nor the context set (nor, when a
// container was named above the environment, a backend flag), and returns the variables it used.
func applyEnv(fs *pflag.FlagSet, fromContext []string, backendGiven bool) ([]string, error) {
	var fromEnv []string
	for _, e := range envVars {
		v, ok := os.LookupEnv(e.name)
		f := fs.Lookup(e.flag)
		if !ok || v == "" || f == nil || f.Changed || slices.Contains(fromContext, e.flag) || backendGiven && slices.Contains(backendFlags, e.flag) {
			continue
		}
		if err := f.Value.Set(v); err != nil {
			if f.Value.Type() == "bool" {
				return nil, usagef("environment variable %s is %q: want true or false (1 or 0)", e.name, v)
			}
			return nil, usagef("environment variable %s: %v", e.name, err)
		}
		fromEnv = append(fromEnv, e.name)
	}
	return fromEnv, nil
}

// secretInText matches an account key, a SAS or its signature in a connection string or URL.
var secretInText = regexp.MustCompile(`(?i)(AccountKey=|SharedAccessSignature=|[?&]sig=)`)

// warnSecretFlags warns when a secret was typed as a flag: every process on the machine can read a command line
// (ps, /proc/PID/cmdline), a hook included. The variable to use instead is named. The storage emulator's
// well-known key is no secret.
func (a *factory) warnSecretFlags(fs *pflag.FlagSet) {
	for _, w := range []struct{ flag, instead string }{
		{"connection-string", "export AZURE_STORAGE_ACCOUNT_CONNECTION_STRING instead"},
		{"account-url", "sign in with Entra ID, or give a SAS connection string in AZURE_STORAGE_ACCOUNT_CONNECTION_STRING"},
	} {
		f := fs.Lookup(w.flag)
		if f == nil || !f.Changed || !secretInText.MatchString(f.Value.String()) || strings.Contains(f.Value.String(), "devstoreaccount1") {
			continue
		}
		fmt.Fprintf(a.io.err, "deadletter: warning: --%s holds a secret, and any process on this machine can read a command line (ps, /proc/PID/cmdline): %s\n", w.flag, w.instead)
	}
}

// backendFlags name the container's backend: one of them, from the command line or else the environment.
var backendFlags = []string{"dir", "connection-string", "connection-string-file", "account-url"}

var containerName = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9]|-(?:[a-z0-9]))*$`)

func (g *globalFlags) validate() error {
	switch {
	case g.ttl <= 0:
		return usagef("--ttl must be positive")
	case g.liveGrace < 0 || g.retention <= 0 || g.expiring < 0:
		return usagef("--live-grace and --expiring-within must be ≥ 0 and --retention positive")
	case g.maxReplays < 0:
		return usagef("--max-replays must be ≥ 0")
	case g.stackDepth != 0 && g.stackDepth < rules.MinStackDepth:
		return usagef("--node-stack-depth must be 0 (the known runtimes) or at least %d", rules.MinStackDepth)
	case g.maxAck <= 0 || g.maxAck > rules.DefaultMaxAck:
		return usagef("--max-ack must be positive and at most %s", textfmt.Duration(rules.DefaultMaxAck))
	case g.timeout < 0:
		return usagef("--timeout must be ≥ 0")
	case g.separator == "" || rules.HasLineTerminator(g.separator):
		return usagef("--id-separator must be non-empty and on one line")
	case len(g.container) < 3 || len(g.container) > 63 || !containerName.MatchString(g.container):
		return usagef("--container %q is not a container name: 3–63 lowercase letters, digits and single hyphens, starting and ending with a letter or digit", g.container)
	}
	var named []string
	for _, n := range []struct {
		flag string
		set  bool
	}{{"--dir", g.dir != ""}, {"--connection-string", g.connString != ""}, {"--connection-string-file", g.connStringFile != ""}, {"--account-url", g.accountURL != ""}} {
		if n.set {
			named = append(named, n.flag+" ")
		}
	}
	if len(named) > 1 {
		return usagef("%sname two containers: give one", strings.Join(named, "and "))
	}
	return g.validateWitness()
}

// validateWitness checks the witness's resource IDs as given by flag or environment, as the config file's keys
// are checked when it is read: a typo is a usage error, whatever the estate, never a witness quietly not read.
func (g *globalFlags) validateWitness() error {
	if g.functionApp != "" {
		if _, err := azmonitor.CheckFunctionAppID(g.functionApp); err != nil {
			return usagef("--function-app: %s", textfmt.Printable(err.Error()))
		}
	}
	for _, id := range append(slices.Clone(g.eventGridTopics), g.replaySystemTopic) {
		if id == "" {
			continue
		}
		if _, err := azmonitor.CheckTopicID(id); err != nil {
			return usagef("--event-grid-topics / --replay-system-topic: %s", textfmt.Printable(err.Error()))
		}
	}
	return nil
}

// rules is the configuration without the handler register.
func (g *globalFlags) rules() rules.Config {
	return rules.Config{TTL: g.ttl, LiveGrace: g.liveGrace, Retention: g.retention, ExpiringWithin: g.expiring,
		MaxReplays: g.maxReplays, Separator: g.separator, MaxAck: g.maxAck, StackDepth: g.stackDepth}
}

// spec is the estate the flags name, resolved, for the session to open.
func (g *globalFlags) spec(context string) session.Spec {
	return session.Spec{Dir: g.dir, ConnectionString: g.connString, ConnectionStringFile: g.connStringFile, AccountURL: g.accountURL,
		Container: g.container, Rules: g.rules(), Handlers: g.handlers, ReadOnly: g.readOnly, Timeout: g.timeout,
		EventGridTopics: g.eventGridTopics, ReplaySystemTopic: g.replaySystemTopic, WitnessWindow: g.witnessWindow, FunctionApp: g.functionApp,
		AuditContainer: g.auditContainer, Context: context}
}

// session opens the estate the flags name, in the command's context, its requests bounded by timeout (the
// command's: see timeout), with the witness a test or the twin's simulation gave the command's context
// (withWitness), if any.
func (f *factory) session(ctx context.Context, timeout time.Duration) (*session.Session, error) {
	sp := f.g.spec(f.context)
	sp.Timeout = timeout
	if w, ok := ctx.Value(witnessKey{}).(rules.Witness); ok {
		sp.Witness = w
	}
	return session.Open(sp)
}

// timeout is how long the command may wait on the container: --timeout when given, else def (the command's own
// default). It changes no flag: the command passes it on (session, bounded).
func (f *factory) timeout(def time.Duration) time.Duration {
	if f.timeoutGiven {
		return f.g.timeout
	}
	return def
}

// bounded bounds ctx by a command's timeout d (none when d ≤ 0), its cause saying what to do.
func bounded(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d, fmt.Errorf("not done within --timeout %s (a slow or unreachable container, or one too large for the time: raise --timeout)", durationFlag{&d}))
}

// withTimeout bounds ctx by --timeout, or def when it was not given (bounded).
func (f *factory) withTimeout(ctx context.Context, def time.Duration) (context.Context, context.CancelFunc) {
	return bounded(ctx, f.timeout(def))
}

// runWith is a command's run function — or, where a test gives one, the test's in its place (gh's
// NewCmdX(f, runF)): the test sees the options the flags filled, and nothing runs.
func runWith[O any](runF, run func(context.Context, *O) error) func(context.Context, *O) error {
	if runF != nil {
		return runF
	}
	return run
}

// couldNotLook explains an error that ended a read: the deadline, a signal, or the error itself — once: an error
// it already explained (a pass inside a pass) is said as it is, never "interrupted before …: interrupted before …".
func couldNotLook(ctx context.Context, err error) error {
	var done explained
	if errors.As(err, &done) {
		return err
	}
	switch {
	case wasInterrupted(ctx):
		return explained{fmt.Errorf("interrupted before the container was read whole: %w", err)}
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		if c := context.Cause(ctx); c != nil && !errors.Is(c, context.DeadlineExceeded) {
			return explained{fmt.Errorf("%v: %w", c, err)}
		}
	}
	return err
}

// explained is an error couldNotLook has explained.
type explained struct{ error }

func (e explained) Unwrap() error { return e.error }

// durationFlag is a duration flag that takes days (3d, 1d12h) as well as Go durations, and prints its value the
// way the rest of the tool prints durations, so what it prints parses back.
type durationFlag struct{ d *time.Duration }

func durationVar(fs *pflag.FlagSet, d *time.Duration, name, usage string) {
	fs.Var(durationFlag{d}, name, usage)
}

func (f durationFlag) String() string {
	switch {
	case f.d == nil || *f.d == 0:
		return "0" // pflag prints no default for "0", and it parses back
	case *f.d < time.Second:
		return f.d.String() // 500ms, not 0s
	}
	return textfmt.Duration(*f.d)
}

func (f durationFlag) Set(s string) error {
	d, err := textfmt.ParseDuration(s)
	if err != nil {
		return err
	}
	*f.d = d
	return nil
}

func (f durationFlag) Type() string { return "duration" }

// positiveInt reads a count flag, refusing negatives.
func positiveInt(name string, v int) error {
	if v < 0 {
		return usagef("--%s must be ≥ 0 (got %s)", name, strconv.Itoa(v))
	}
	return nil
}
