package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/tui"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
)

type dashboardOptions struct {
	monitorFlags
	interval    time.Duration
	concurrency int
}

func (a *app) dashboardFlags(root *cobra.Command) *dashboardOptions {
	o := &dashboardOptions{interval: replay.DefaultInterval, concurrency: replay.DefaultConcurrency}
	o.register(root)
	return o
}

// register adds the dashboard's flags (the root command's and demo's).
func (o *dashboardOptions) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	durationVar(fs, &o.interval, "interval", "how often the dashboard re-reads the container")
	fs.IntVar(&o.concurrency, "concurrency", o.concurrency, "blobs a drain or restore handles at once")
	o.monitorFlags.register(cmd)
}

func (a *app) runDashboard(cmd *cobra.Command, o *dashboardOptions) error {
	if o.interval <= 0 {
		return usagef("--interval must be positive")
	}
	if err := positiveInt("concurrency", o.concurrency); err != nil {
		return err
	}
	if err := a.needTerminal(); err != nil {
		return err
	}
	l, _, err := a.g.loader()
	if err != nil {
		return err
	}
	o.apply(&l.Config)
	return tui.Run(cmd.Context(), tui.Options{Loader: l, Check: replay.CheckOptions{MaxQuarantine: o.maxQuarantine}, ReadOnly: a.g.readOnly,
		Interval: o.interval, Concurrency: o.concurrency})
}

// needTerminal refuses to open the dashboard where it cannot draw.
func (a *app) needTerminal() error {
	if f, ok := a.io.out.(*os.File); !ok || !isatty.IsTerminal(f.Fd()) {
		return errors.New("the dashboard draws on a terminal, and standard output is not one: run it in a terminal (or tmux), or use ls, check, report or watch --json in a script")
	}
	return nil
}

func (a *app) demoCmd() *cobra.Command {
	o := &dashboardOptions{interval: replay.DefaultInterval, concurrency: replay.DefaultConcurrency}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "seed a local container with an incident and open the dashboard on it",
		Long: `demo writes a fresh realistic incident into one demo directory per user (under the user's cache directory,
or --dir) and opens the dashboard on it. It prints the directory, so you can look again with --dir.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Only a --dir typed for the demo: DEADLETTER_DIR names the operator's own container, and the demo must
			// never seed fake dead letters into it.
			dir := ""
			if f := cmd.Flag("dir"); f != nil && f.Changed {
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
			// Both that and the terminal are checked before anything is cleared or seeded.
			if err := checkDemoDir(dir); err != nil {
				return err
			}
			if err := a.needTerminal(); err != nil {
				return err
			}
			if err := resetDemo(dir); err != nil {
				return err
			}
			c, err := dirstore.Create(dir)
			if err != nil {
				return err
			}
			a.g.dir, a.g.connString, a.g.accountURL = dir, "", ""
			if _, err := scenario.Seed(cmd.Context(), c, scenario.SeedOptions{Scenario: "incident", Count: 40, Seed: 1, Config: a.g.rules()}); err != nil {
				return err
			}
			if err := writeRegister(dir, dirstore.RegisterPath(dir), scenario.IncidentRegister); err != nil {
				return err
			}
			fmt.Fprintf(a.io.err, "demo container: %s\n", textfmt.Printable(dir))
			err = a.runDashboard(cmd, o)
			fmt.Fprintf(a.io.out, "the demo container is kept at %s\n  look again: deadletter --dir %s\n", textfmt.Printable(dir), textfmt.Printable(dir))
			return err
		},
	}
	o.register(cmd)
	return cmd
}

// demoMarker marks a directory as the demo's own, so that a new demo may clear it and nothing else. It lives
// in the directory container's state folder, where no blob can be.
const demoMarker = "demo"

// resetDemo empties the demo directory of an earlier run (only if it is one) and marks it. An empty directory is
// taken as it is; any other is refused.
func resetDemo(dir string) error {
	ents, err := os.ReadDir(dir)
	if err == nil && len(ents) > 0 {
		if err := os.RemoveAll(dir); err != nil { // (checkDemoDir found the marker)
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	return dirstore.WriteState(dir, demoMarker, []byte("deadletter demo: cleared by the next `deadletter demo`\n"))
}

// checkDemoDir refuses a directory the demo may not clear: a file, or one that holds anything and is not an
// earlier demo's.
func checkDemoDir(dir string) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist), err == nil && len(ents) == 0:
		return nil
	case err != nil:
		if fi, serr := os.Stat(dir); serr == nil && !fi.IsDir() {
			return usagef("--dir %s is a file, not a directory: give the demo an empty or new directory", textfmt.Printable(dir))
		}
		return err
	}
	if _, err := dirstore.ReadState(dir, demoMarker); err != nil {
		return usagef("%s holds blobs and is not a demo directory: the demo writes fake dead letters, so give it an empty or new --dir", textfmt.Printable(dir))
	}
	return nil
}
