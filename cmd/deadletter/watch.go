package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/spf13/cobra"
)

type watchOptions struct {
	monitorFlags
	json     bool
	interval time.Duration
	exec     string
}

func (a *app) watchCmd() *cobra.Command {
	o := watchOptions{interval: 15 * time.Second}
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "check every --interval and print what changed, one line per kind of finding",
		Long: `watch re-checks the container every --interval. Its first pass prints the state, one line per kind of finding;
later passes print, per kind, the blobs that appeared and the ones that went away — one line (and one --exec) for
"12 new stranded blobs", naming the first 20. A pass that cannot read the container prints an error line once,
and a line again when it can. --exec CMD runs sh -c CMD for every state and new line, with the line as JSON on
its stdin.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runWatch(cmd, &o) },
	}
	o.monitorFlags.register(cmd)
	fs := cmd.Flags()
	fs.BoolVar(&o.json, "json", false, "one JSON object per line")
	durationVar(fs, &o.interval, "interval", "how often to check")
	fs.StringVar(&o.exec, "exec", "", "run this shell command for every state and new line, the line as JSON on stdin")
	return cmd
}

func (a *app) runWatch(cmd *cobra.Command, o *watchOptions) error {
	if o.interval <= 0 {
		return usagef("--interval must be positive")
	}
	if err := positiveInt("max-quarantine", o.maxQuarantine); err != nil {
		return err
	}
	l, cfg, err := a.g.loader()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if f := cmd.Flags().Lookup("timeout"); !f.Changed && a.g.timeout == 0 {
		a.g.timeout = 30 * time.Second
	}
	var prev *replay.Report
	lastErr := ""
	for {
		pass, cancel := context.WithTimeout(ctx, a.g.timeout)
		snap, err := look(pass, l)
		cancel()
		now := time.Now().UTC()
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			if err.Error() != lastErr {
				a.emit(ctx, o, replay.Change{Time: now, Kind: replay.KindError, Event: replay.ChangeNew, Detail: err.Error()})
				lastErr = err.Error()
			}
		default:
			if lastErr != "" {
				a.emit(ctx, o, replay.Change{Time: now, Kind: replay.KindError, Event: replay.ChangeResolved})
				lastErr = ""
			}
			r := cfg.Check(snap, o.checkOptions())
			for _, c := range replay.Changes(prev, r, snap.Now) {
				a.emit(ctx, o, c)
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

// emit prints one change and runs --exec for what is (still) a problem.
func (a *app) emit(ctx context.Context, o *watchOptions, c replay.Change) {
	c.Time = c.Time.UTC().Truncate(time.Second)
	j := toChangeJSON(c)
	if o.json {
		writeJSONLine(a.io.out, j)
	} else {
		fmt.Fprintf(a.io.out, "%s %-8s %-13s %s\n", j.Time, c.Event, c.Kind, present.ChangeMessage(c))
	}
	if o.exec == "" || c.Event == replay.ChangeResolved {
		return
	}
	line, _ := marshal(j)
	run := exec.CommandContext(ctx, "sh", "-c", o.exec)
	run.Stdin = strings.NewReader(string(line) + "\n")
	run.Stdout, run.Stderr = a.io.err, a.io.err
	if err := run.Run(); err != nil {
		fmt.Fprintf(a.io.err, "deadletter: --exec for %s %s: %s\n", c.Event, c.Kind, textfmt.Printable(err.Error()))
	}
}
