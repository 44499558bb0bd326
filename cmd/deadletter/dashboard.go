package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/tui"
)

// watchFlags are the thresholds the dashboard and check share. Like the global flags they default to their
// current values, so they may stand before the command word too.
func watchFlags(fs *flag.FlagSet, g *globals) {
	fs.DurationVar(&g.interval, "interval", g.interval, "how often to re-read the container")
	fs.DurationVar(&g.expiringWithin, "expiring-within", g.expiringWithin, "stranded or quarantined blobs this close to lifecycle deletion are about to be lost")
	fs.IntVar(&g.maxQuarantine, "max-quarantine", g.maxQuarantine, "more quarantined blobs than this is a finding")
	fs.IntVar(&g.concurrency, "concurrency", g.concurrency, "blobs a drain handles at once")
}

func (g *globals) checkOptions() replay.CheckOptions {
	return replay.CheckOptions{ExpiringWithin: g.expiringWithin, MaxQuarantine: g.maxQuarantine}
}

func runDashboard(ctx context.Context, g *globals, args []string, io stdio) (int, error) {
	if len(args) > 0 {
		return exitError, usageError{fmt.Errorf("unknown command %q", args[0])}
	}
	l, _, err := openLoader(g)
	if err != nil {
		return exitError, err
	}
	return exitOK, tui.Run(tui.Options{Loader: l, Check: g.checkOptions(), ReadOnly: g.readOnly, Interval: g.interval, Concurrency: g.concurrency})
}

func runDemo(ctx context.Context, g *globals, args []string, io stdio) (int, error) {
	dir := g.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "deadletter-demo-")
		if err != nil {
			return exitError, err
		}
		dir = d
	}
	d, err := store.CreateDir(dir)
	if err != nil {
		return exitError, err
	}
	g.dir, g.connString, g.accountURL = dir, "", ""
	if _, err := replay.Seed(ctx, d, replay.SeedOptions{Scenario: "incident", Count: 40, Seed: time.Now().UnixNano(), Config: g.rules()}); err != nil {
		return exitError, err
	}
	if err := writeRegister(registerPath(dir), replay.IncidentRegister); err != nil {
		return exitError, err
	}
	code, err := runDashboard(ctx, g, nil, io)
	fmt.Fprintf(io.out, "the demo container is kept at %s\n  look again: deadletter --dir %s\n", dir, dir)
	return code, err
}
