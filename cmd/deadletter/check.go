package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/deadletter/deadletter/replay"
)

func checkFlags(fs *flag.FlagSet, g *globals) {
	watchFlags(fs, g)
	fs.BoolVar(&g.json, "json", false, "JSON output (with --watch: one JSON object per line)")
	fs.BoolVar(&g.watch, "watch", false, "re-check every --interval and print one line per change")
	fs.StringVar(&g.exec, "exec", "", "with --watch: run this shell command per new finding, the finding as JSON on stdin")
}

// inspect lists the container and reads what the findings depend on: root and quarantine payloads (malformed).
func inspect(ctx context.Context, l *replay.Loader) (*replay.Snapshot, error) {
	snap, err := l.List(ctx)
	if err != nil {
		return nil, err
	}
	l.HydrateWhere(ctx, snap, func(it *replay.Item) bool { return it.Pane != replay.PaneArchived })
	var failed []string
	for _, it := range snap.Items {
		if it.ReadFailed {
			failed = append(failed, it.ReadErr)
		}
	}
	if len(failed) > 0 {
		return nil, fmt.Errorf("could not read %d payload(s), so the check is incomplete: %s", len(failed), failed[0])
	}
	return snap, nil
}

type checkJSON struct {
	Healthy  bool                `json:"healthy"`
	Counts   map[replay.Pane]int `json:"counts"`
	Findings []findingJSON       `json:"findings"`
}

type findingJSON struct {
	Kind    replay.FindingKind `json:"kind"`
	Count   int                `json:"count"`
	Oldest  string             `json:"oldest,omitempty"`
	Message string             `json:"message"`
}

func toCheckJSON(r replay.Report) checkJSON {
	out := checkJSON{Healthy: r.Healthy, Counts: r.Counts, Findings: []findingJSON{}}
	for _, f := range r.Findings {
		fj := findingJSON{Kind: f.Kind, Count: f.Count, Message: f.Message}
		if f.Oldest != nil {
			fj.Oldest = rfc3339(*f.Oldest)
		}
		out.Findings = append(out.Findings, fj)
	}
	return out
}

func runCheck(ctx context.Context, g *globals, args []string, io stdio) (int, error) {
	if len(args) > 0 {
		return exitError, usageError{fmt.Errorf("check takes no arguments (got %q)", args[0])}
	}
	if g.watch {
		return runWatch(ctx, g, io)
	}
	l, cfg, err := openLoader(g)
	if err != nil {
		return exitError, err
	}
	snap, err := inspect(ctx, l)
	if err != nil {
		if g.json {
			writeJSON(io, map[string]any{"healthy": false, "error": err.Error()})
		}
		return exitError, fmt.Errorf("could not check %s: %w", l.Container.Describe(), err)
	}
	r := cfg.Check(snap, g.checkOptions())
	code := exitOK
	if !r.Healthy {
		code = exitFindings
	}
	if g.json {
		return code, writeJSON(io, toCheckJSON(r))
	}
	if r.Healthy {
		fmt.Fprintf(io.out, "healthy: %s has nothing stranded, quarantined, expiring, stalled or malformed (%s)\n", replay.Printable(snap.Container), paneCounts(r.Counts))
		return code, nil
	}
	fmt.Fprintf(io.out, "%s: %d finding(s) (%s)\n", replay.Printable(snap.Container), len(r.Findings), paneCounts(r.Counts))
	for _, f := range r.Findings {
		fmt.Fprintf(io.out, "  %-13s %s\n", f.Kind, f.Message)
	}
	return code, nil
}

// runWatch re-checks on an interval and prints one line per change until interrupted.
func runWatch(ctx context.Context, g *globals, io stdio) (int, error) {
	l, cfg, err := openLoader(g)
	if err != nil {
		return exitError, err
	}
	if g.interval <= 0 {
		return exitError, usageError{errors.New("--interval must be positive")}
	}
	var prev *replay.Report
	var lastErr string
	emit := func(c replay.Change) {
		if g.json {
			b, _ := json.Marshal(c)
			fmt.Fprintln(io.out, string(b))
		} else {
			fmt.Fprintf(io.out, "%s %-8s %-13s %s\n", c.Time.UTC().Format(time.RFC3339), c.Event, c.Kind, c.Message)
		}
		if g.exec != "" && c.Event == "new" {
			b, _ := json.Marshal(c)
			cmd := exec.CommandContext(ctx, "sh", "-c", g.exec)
			cmd.Stdin = strings.NewReader(string(b) + "\n")
			cmd.Stdout, cmd.Stderr = io.err, io.err
			if err := cmd.Run(); err != nil {
				fmt.Fprintf(io.err, "deadletter: --exec for %s %s: %v\n", c.Kind, replay.Printable(c.Name), err)
			}
		}
	}
	for {
		snap, err := inspect(ctx, l)
		now := time.Now().UTC()
		switch {
		case ctx.Err() != nil:
			return exitOK, nil
		case err != nil:
			if err.Error() != lastErr {
				emit(replay.Change{Time: now, Kind: "error", Event: "new", Message: "could not check: " + err.Error()})
				lastErr = err.Error()
			}
		default:
			if lastErr != "" {
				emit(replay.Change{Time: now, Kind: "error", Event: "resolved", Message: "the container can be read again"})
				lastErr = ""
			}
			r := cfg.Check(snap, g.checkOptions())
			for _, c := range replay.Changes(prev, r, snap.Now) {
				emit(c)
			}
			prev = &r
		}
		select {
		case <-ctx.Done():
			return exitOK, nil
		case <-time.After(g.interval):
		}
	}
}
