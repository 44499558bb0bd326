package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
)

// globals are the flags every command takes. Defaults, then the environment, then flags.
type globals struct {
	dir, connString, accountURL, container string
	ttl, liveGrace, retention              time.Duration
	maxReplays                             int
	handlers, separator                    string
	readOnly                               bool

	// Command flags: they live here, per invocation, so commands running side by side (watch and a drain in
	// one test process) never share them.
	json, dryRun, yes, force, watch   bool
	pane, scenario, registerOut, exec string
	count, concurrency, maxQuarantine int
	seed                              int64
	interval, expiringWithin          time.Duration
}

func newGlobals() *globals {
	d := replay.DefaultConfig()
	return &globals{container: "deadletter", ttl: d.TTL, liveGrace: d.LiveGrace, retention: d.Retention,
		maxReplays: d.MaxReplays, separator: d.Separator,
		interval: 15 * time.Second, expiringWithin: replay.DefaultCheckOptions().ExpiringWithin, concurrency: 16}
}

// fromEnv reads the estate's own variable names, so the tool can run beside the Function App's settings.
func (g *globals) fromEnv() error {
	if v := os.Getenv("AZURE_STORAGE_ACCOUNT_CONNECTION_STRING"); v != "" {
		g.connString = v
	}
	if v := os.Getenv("EVENT_GRID_DELIVERY_TTL_MINUTES"); v != "" {
		m, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || m <= 0 || math.IsInf(m, 0) || m > 1e7 {
			return fmt.Errorf("EVENT_GRID_DELIVERY_TTL_MINUTES=%q: want a positive number of minutes", v)
		}
		g.ttl = time.Duration(m * float64(time.Minute))
	}
	if v := os.Getenv("MAX_DEAD_LETTER_REPLAY_ATTEMPTS"); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return fmt.Errorf("MAX_DEAD_LETTER_REPLAY_ATTEMPTS=%q: want a whole number ≥ 0", v)
		}
		g.maxReplays = n
	}
	return nil
}

// flagSet defines the global flags with their current values (environment already applied) as defaults.
func (g *globals) flagSet(cmd string) *flag.FlagSet {
	fs := flag.NewFlagSet("deadletter "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&g.dir, "dir", g.dir, "a local directory as the container (snapshots, the demo)")
	fs.StringVar(&g.connString, "connection-string", g.connString, "storage connection string (env AZURE_STORAGE_ACCOUNT_CONNECTION_STRING; UseDevelopmentStorage=true for Azurite)")
	fs.StringVar(&g.accountURL, "account-url", g.accountURL, "https://<account>.blob.core.windows.net, signed in with Microsoft Entra ID (DefaultAzureCredential)")
	fs.StringVar(&g.container, "container", g.container, "container name")
	fs.DurationVar(&g.ttl, "ttl", g.ttl, "the replay trigger's delivery TTL (env EVENT_GRID_DELIVERY_TTL_MINUTES, in minutes)")
	fs.DurationVar(&g.liveGrace, "live-grace", g.liveGrace, "a live blob older than this means the replay is not consuming")
	fs.DurationVar(&g.retention, "retention", g.retention, "the lifecycle rule: blobs are deleted this long after last modification")
	fs.IntVar(&g.maxReplays, "max-replays", g.maxReplays, "replay attempt cap (env MAX_DEAD_LETTER_REPLAY_ATTEMPTS)")
	fs.StringVar(&g.handlers, "handlers", g.handlers, "handler register: JSON object of eventType → idempotent (true/false)")
	fs.StringVar(&g.separator, "id-separator", g.separator, "separator between an event id and its replay attempt")
	fs.BoolVar(&g.readOnly, "read-only", g.readOnly, "refuse drain and restore everywhere")
	return fs
}

func (g *globals) validate() error {
	switch {
	case g.ttl <= 0:
		return errors.New("--ttl must be positive")
	case g.liveGrace < 0 || g.retention <= 0:
		return errors.New("--live-grace must be ≥ 0 and --retention positive")
	case g.maxReplays < 0:
		return errors.New("--max-replays must be ≥ 0")
	case g.separator == "" || replay.HasLineTerminator(g.separator):
		return errors.New("--id-separator must be non-empty and on one line")
	case g.container == "":
		return errors.New("--container must not be empty")
	}
	n := 0
	for _, s := range []string{g.dir, g.connString, g.accountURL} {
		if s != "" {
			n++
		}
	}
	if n > 1 && g.dir != "" {
		return errors.New("--dir cannot be combined with --connection-string or --account-url (unset AZURE_STORAGE_ACCOUNT_CONNECTION_STRING)")
	}
	return nil
}

// rules is the configuration without the handler register.
func (g *globals) rules() replay.Config {
	return replay.Config{TTL: g.ttl, LiveGrace: g.liveGrace, Retention: g.retention, MaxReplays: g.maxReplays, Separator: g.separator}
}

// registerPath is the register a directory snapshot carries beside its blobs (written by seed).
func registerPath(dir string) string { return filepath.Join(dir, ".deadletter", "handlers.json") }

// config builds the replay configuration, loading the handler register: --handlers, or the one a seeded
// directory carries.
func (g *globals) config() (replay.Config, error) {
	c := g.rules()
	path := g.handlers
	if path == "" && g.dir != "" {
		if _, err := os.Stat(registerPath(g.dir)); err == nil {
			path = registerPath(g.dir)
		}
	}
	if path != "" {
		reg, err := replay.LoadRegister(path)
		if err != nil {
			return c, err
		}
		c.Handlers = reg
	}
	return c, nil
}

// open connects to the container the flags name.
func (g *globals) open() (store.Container, error) {
	if g.dir != "" {
		return store.OpenDir(g.dir)
	}
	return g.openAzure()
}

// create is open for commands that may bring a directory container into being (seed).
func (g *globals) create() (store.Container, error) {
	if g.dir != "" {
		return store.CreateDir(g.dir)
	}
	return g.openAzure()
}

func (g *globals) openAzure() (store.Container, error) {
	return store.OpenAzure(store.AzureOptions{ConnectionString: g.connString, AccountURL: g.accountURL, Container: g.container})
}

var errHelp = flag.ErrHelp

// parseInterspersed lets flags follow positional arguments (show NAME --json); "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// splitCommand reads global flags up to the command word.
func splitCommand(g *globals, args []string) (string, []string, error) {
	fs := g.flagSet("")
	watchFlags(fs, g) // `deadletter --interval 5s` opens the dashboard with its own flags
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return "help", nil, nil
	}
	if err != nil {
		return "", nil, usageError{err}
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return "dashboard", nil, nil
	}
	if _, ok := commands[rest[0]]; !ok && strings.HasPrefix(rest[0], "-") {
		return "dashboard", rest, nil
	}
	return rest[0], rest[1:], nil
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "deadletter — the Event Grid dead-letter container, for the operator on call")
	fmt.Fprintln(w, "\nusage:")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if c.usage != "" {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool { return commands[names[i]].order < commands[names[j]].order })
	for _, n := range names {
		fmt.Fprintf(w, "  deadletter %-44s %s\n", commands[n].usage, commands[n].help)
	}
	fmt.Fprintln(w, "\nglobal flags (before or after the command):")
	fs := newGlobals().flagSet("")
	fs.SetOutput(w)
	fs.PrintDefaults()
}
