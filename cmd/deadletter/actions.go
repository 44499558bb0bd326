package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
	"github.com/mattn/go-isatty"
)

// actionFlags are the flags drain and restore share.
func actionFlags(restore bool) func(fs *flag.FlagSet, g *globals) {
	return func(fs *flag.FlagSet, g *globals) {
		fs.BoolVar(&g.dryRun, "dry-run", false, "say what would happen, change nothing")
		fs.BoolVar(&g.yes, "yes", false, "do not ask for confirmation (required when not on a terminal)")
		fs.BoolVar(&g.json, "json", false, "JSON output")
		fs.IntVar(&g.concurrency, "concurrency", g.concurrency, "blobs handled at once")
		if restore {
			fs.BoolVar(&g.force, "force", false, "restore even where nothing would resume")
		}
	}
}

type resultsJSON struct {
	DryRun  bool            `json:"dryRun"`
	Results []replay.Result `json:"results"`
}

// isTerminal reports whether the command talks to a person who can answer a question.
func isTerminal(io stdio) bool {
	f, ok := io.in.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// confirm asks on a terminal; elsewhere it requires --yes.
func confirm(g *globals, io stdio, question string) (bool, error) {
	if g.yes || g.dryRun {
		return true, nil
	}
	if !isTerminal(io) {
		return false, errors.New("not on a terminal: pass --yes to confirm (or --dry-run to look first)")
	}
	fmt.Fprintf(io.err, "%s [y/N] ", question)
	line, _ := bufio.NewReader(io.in).ReadString('\n')
	return strings.EqualFold(strings.TrimSpace(line), "y") || strings.EqualFold(strings.TrimSpace(line), "yes"), nil
}

// progress prints one updating line on stderr per finished blob.
func progress(io stdio, verb string, total int) func(replay.Result) {
	var done atomic.Int64
	f, ok := io.err.(*os.File)
	live := ok && isatty.IsTerminal(f.Fd())
	return func(r replay.Result) {
		n := done.Add(1)
		if live {
			fmt.Fprintf(io.err, "\r%s %d/%d", verb, n, total)
		}
		if int(n) == total && live {
			fmt.Fprintln(io.err)
		}
	}
}

func runDrain(ctx context.Context, g *globals, names []string, io stdio) (int, error) {
	if g.readOnly {
		return exitError, replay.ErrReadOnly
	}
	l, cfg, err := openLoader(g)
	if err != nil {
		return exitError, err
	}
	var targets []store.BlobInfo
	if len(names) == 0 {
		snap, err := l.List(ctx)
		if err != nil {
			return exitError, err
		}
		targets = replay.DrainTargets(snap)
		if len(targets) > 0 && (!g.json || !g.yes) {
			l.HydrateWhere(ctx, snap, replay.InPaneFilter(replay.PaneStranded))
			describeDrain(io, snap.InPane(replay.PaneStranded), cfg)
		}
	} else {
		for _, n := range names {
			targets = append(targets, store.BlobInfo{Name: n})
		}
	}
	if len(targets) == 0 {
		if g.json {
			return exitOK, writeJSON(io, resultsJSON{DryRun: g.dryRun, Results: []replay.Result{}})
		}
		fmt.Fprintln(io.out, "nothing is stranded: no blob to drain")
		return exitOK, nil
	}
	ok, err := confirm(g, io, fmt.Sprintf("Drain %d blob(s)? Each is re-uploaded as it is, so the replay function handles it again.", len(targets)))
	if err != nil || !ok {
		if err == nil {
			err = errors.New("not confirmed: nothing was changed")
		}
		return exitError, err
	}
	res, err := replay.Drain(ctx, l.Container, cfg, targets, replay.ActionOptions{DryRun: g.dryRun, Concurrency: g.concurrency, Progress: progress(io, "drained", len(targets))})
	if err != nil {
		return exitError, err
	}
	return reportResults(g, io, res)
}

// describeDrain says what a drain of the stranded blobs will set in motion.
func describeDrain(io stdio, stranded []replay.Item, cfg replay.Config) {
	fmt.Fprintf(io.err, "%d stranded blob(s): older than the TTL %s, so no trigger can still reach them.\n", len(stranded), cfg.TTL)
	for _, l := range replay.ForecastDrain(stranded).Lines(cfg) {
		fmt.Fprintln(io.err, l)
	}
}

func runRestore(ctx context.Context, g *globals, names []string, io stdio) (int, error) {
	if len(names) == 0 {
		return exitError, usageError{errors.New("restore needs at least one quarantine blob name")}
	}
	if g.readOnly {
		return exitError, replay.ErrReadOnly
	}
	l, cfg, err := openLoader(g)
	if err != nil {
		return exitError, err
	}
	if !g.json || !g.yes {
		for _, n := range names {
			d, err := l.Inspect(ctx, n)
			if err != nil {
				fmt.Fprintf(io.err, "%s: %v\n", replay.Printable(n), err)
				continue
			}
			fmt.Fprintf(io.err, "%s\n", replay.Printable(n))
			for _, line := range replay.Explain(d, cfg) {
				fmt.Fprintf(io.err, "  %s\n", line)
			}
		}
	}
	ok, err := confirm(g, io, fmt.Sprintf("Restore %d blob(s)?", len(names)))
	if err != nil || !ok {
		if err == nil {
			err = errors.New("not confirmed: nothing was changed")
		}
		return exitError, err
	}
	res, err := replay.Restore(ctx, l.Container, cfg, names, replay.ActionOptions{DryRun: g.dryRun, Force: g.force, Progress: progress(io, "restored", len(names))})
	if err != nil {
		return exitError, err
	}
	return reportResults(g, io, res)
}

func reportResults(g *globals, io stdio, res []replay.Result) (int, error) {
	tally := replay.TallyOf(res)
	code := exitOK
	if tally[replay.OutcomeFailed] > 0 {
		code = exitFindings
	}
	if g.json {
		return code, writeJSON(io, resultsJSON{DryRun: g.dryRun, Results: res})
	}
	for _, r := range res {
		line := fmt.Sprintf("%-10s %s", r.Outcome, replay.Printable(r.Name))
		if r.Target != "" {
			line += " → " + replay.Printable(r.Target)
		}
		if r.Resume > 0 && r.Outcome == replay.OutcomeRestored {
			line += fmt.Sprintf(" (%d event(s) resume)", r.Resume)
		}
		if r.Error != "" {
			line += ": " + replay.Printable(r.Error)
		}
		fmt.Fprintln(io.out, line)
	}
	prefix := ""
	if g.dryRun {
		prefix = "dry run, nothing changed: "
	}
	fmt.Fprintf(io.out, "%s%s\n", prefix, tally)
	return code, nil
}
