package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
)

type command struct {
	order int
	usage string
	help  string
	flags func(fs *flag.FlagSet, g *globals)
	run   func(ctx context.Context, g *globals, args []string, io stdio) (int, error)
}

var commands map[string]*command

func init() {
	commands = map[string]*command{
		"dashboard": {order: 0, usage: "[global flags] [--interval D]", help: "open the dashboard", run: runDashboard, flags: watchFlags},
		"demo":      {order: 8, usage: "demo", help: "seed a local container with an incident and open the dashboard on it", run: runDemo, flags: watchFlags},
		"ls": {order: 1, usage: "ls [--pane P] [--json]", help: "every blob: pane, age, expiry, events, reasons, attempts, verdicts", run: runLs,
			flags: func(fs *flag.FlagSet, g *globals) {
				fs.StringVar(&g.pane, "pane", "", "only this pane: stranded, quarantine, live, archived")
				fs.BoolVar(&g.json, "json", false, "JSON output")
			}},
		"show": {order: 2, usage: "show NAME [--json]", help: "one blob: every event, its verdicts, the preview or restore prediction", run: runShow,
			flags: func(fs *flag.FlagSet, g *globals) { fs.BoolVar(&g.json, "json", false, "JSON output") }},
		"seed": {order: 7, usage: "seed [--scenario S] [--count N]", help: "write a realistic incident into the container", run: runSeed,
			flags: func(fs *flag.FlagSet, g *globals) {
				fs.StringVar(&g.scenario, "scenario", "incident", "scenario: incident")
				fs.IntVar(&g.count, "count", 40, "bulk root blobs beside the fixed cases")
				fs.Int64Var(&g.seed, "seed", 1, "random seed (the same seed writes the same incident)")
				fs.StringVar(&g.registerOut, "register-out", "", "where to write the handler register the scenario implies (default: beside a --dir's blobs, else ./deadletter-handlers.json)")
			}},
		"drain": {order: 3, usage: "drain [NAME...] [--dry-run] [--yes] [--json]", help: "re-upload stranded blobs (all, or the named ones) so the replay sees them",
			run: runDrain, flags: actionFlags(false)},
		"restore": {order: 4, usage: "restore NAME... [--dry-run] [--force] [--yes] [--json]", help: "move quarantined blobs back to the root so capped events resume",
			run: runRestore, flags: actionFlags(true)},
		"check": {order: 5, usage: "check [--json] [--watch] [--exec CMD]", help: "exit 0 healthy, 1 findings, 2 could not check (for cron and CI)", run: runCheck, flags: checkFlags},
		"watch": {order: 6, usage: "watch [--json] [--interval D] [--exec CMD]", help: "check --watch: one line per change, for any notifier",
			run: func(ctx context.Context, g *globals, args []string, io stdio) (int, error) {
				g.watch = true
				return runCheck(ctx, g, args, io)
			}, flags: checkFlags},
		"help": {order: 99, run: func(_ context.Context, _ *globals, _ []string, io stdio) (int, error) {
			usage(io.out)
			return exitOK, nil
		}},
	}
}

func openLoader(g *globals) (*replay.Loader, replay.Config, error) {
	cfg, err := g.config()
	if err != nil {
		return nil, cfg, err
	}
	c, err := g.open()
	if err != nil {
		return nil, cfg, err
	}
	return replay.NewLoader(c, cfg), cfg, nil
}

func runLs(ctx context.Context, g *globals, args []string, io stdio) (int, error) {
	if len(args) > 0 {
		return exitError, usageError{fmt.Errorf("ls takes no arguments (got %q)", args[0])}
	}
	if g.pane != "" && !validPane(g.pane) {
		return exitError, usageError{fmt.Errorf("--pane %q: want stranded, quarantine, live or archived", g.pane)}
	}
	l, cfg, err := openLoader(g)
	if err != nil {
		return exitError, err
	}
	snap, err := l.List(ctx)
	if err != nil {
		return exitError, err
	}
	sub := snap
	if g.pane != "" {
		sub = &replay.Snapshot{Container: snap.Container, Now: snap.Now, Items: snap.InPane(replay.Pane(g.pane))}
	}
	l.HydrateWhere(ctx, sub, nil)
	if g.json {
		out := lsJSON{Container: snap.Container, Now: rfc3339(snap.Now), Blobs: make([]blobJSON, len(sub.Items))}
		for i := range sub.Items {
			out.Blobs[i] = toBlobJSON(&sub.Items[i])
		}
		return exitOK, writeJSON(io, out)
	}
	tw := tabwriter.NewWriter(io.out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "PANE\tNAME\tAGE\tDELETED IN\tEVENTS\tREASON\tMAX ATTEMPT\tVERDICTS\n")
	for _, it := range sub.Items {
		ev, reason, attempt, verdicts := "?", "", "", ""
		if s := it.Summary; s != nil {
			ev, reason, attempt, verdicts = fmt.Sprint(s.Events), replay.Printable(s.Reasons.Top()), fmt.Sprint(s.MaxReplayAttempt), verdictCounts(s)
			if s.Malformed {
				verdicts = "MALFORMED"
			}
		} else if it.ReadErr != "" {
			verdicts = "UNREADABLE"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", it.Pane, replay.Printable(it.Name), replay.HumanDuration(it.Age),
			replay.HumanDuration(it.ExpiresAt.Sub(snap.Now)), ev, reason, attempt, verdicts)
	}
	tw.Flush()
	if cfg.Handlers == nil {
		fmt.Fprintln(io.err, "note: no handler register (--handlers): routing and idempotency verdicts are unknown")
	}
	return exitOK, nil
}

func validPane(p string) bool {
	for _, x := range replay.Panes {
		if string(x) == p {
			return true
		}
	}
	return false
}

func verdictCounts(s *replay.Summary) string {
	var parts []string
	for _, v := range replay.AllVerdicts {
		if n := s.Verdicts.Of(v); n > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", v, n))
		}
	}
	return strings.Join(parts, " ")
}

func runShow(ctx context.Context, g *globals, args []string, io stdio) (int, error) {
	if len(args) != 1 {
		return exitError, usageError{errors.New("show takes exactly one blob name")}
	}
	l, cfg, err := openLoader(g)
	if err != nil {
		return exitError, err
	}
	d, err := l.Inspect(ctx, args[0])
	if err != nil {
		return exitError, err
	}
	if g.json {
		return exitOK, writeJSON(io, toShowJSON(d))
	}
	writeShow(io, d, cfg)
	return exitOK, nil
}

func runSeed(ctx context.Context, g *globals, args []string, io stdio) (int, error) {
	if len(args) > 0 {
		return exitError, usageError{fmt.Errorf("seed takes no arguments (got %q)", args[0])}
	}
	if g.readOnly {
		return exitError, errors.New("--read-only: seed writes blobs")
	}
	cfg := g.rules() // seeding writes the register; it does not read one
	c, err := g.create()
	if err != nil {
		return exitError, err
	}
	if az, ok := c.(*store.Azure); ok {
		if err := az.Create(ctx); err != nil {
			return exitError, err
		}
	}
	rep, err := replay.Seed(ctx, c, replay.SeedOptions{Scenario: g.scenario, Count: g.count, Seed: g.seed, Config: cfg})
	if err != nil {
		return exitError, err
	}
	out := g.registerOut
	if out == "" {
		out = "deadletter-handlers.json"
		if g.dir != "" {
			out = registerPath(g.dir)
		}
	}
	if err := writeRegister(out, rep.Register); err != nil {
		return exitError, err
	}
	fmt.Fprintf(io.out, "seeded %d blobs into %s (%s)\n", rep.Blobs, c.Describe(), paneCounts(rep.ByPane))
	fmt.Fprintf(io.out, "handler register: %s\n", out)
	if !rep.Backdated {
		fmt.Fprintf(io.out, "note: storage cannot backdate blobs: root blobs become stranded once they pass the TTL (%s); rehearse with --ttl 5s\n", g.ttl)
	}
	return exitOK, nil
}

func writeRegister(path string, reg replay.Register) error {
	b, _ := json.MarshalIndent(reg, "", "  ")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func paneCounts(m map[replay.Pane]int) string {
	var parts []string
	for _, p := range replay.Panes {
		parts = append(parts, fmt.Sprintf("%d %s", m[p], p))
	}
	return strings.Join(parts, ", ")
}
