package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/spf13/cobra"
)

type seedOptions struct {
	f                     *factory
	scenario, registerOut string
	count                 int
	seed                  int64
	force                 bool
}

func newCmdSeed(f *factory, runF func(context.Context, *seedOptions) error) *cobra.Command {
	o := &seedOptions{f: f}
	cmd := &cobra.Command{
		Use:   "seed",
		Short: "write a realistic incident into the container (a directory, Azurite, or an empty container)",
		Example: `  deadletter seed --dir ./incident
  deadletter seed --connection-string "UseDevelopmentStorage=true"`,
		Long: `seed writes a realistic incident — every pane, every verdict, malformed and crashing payloads, handled copies,
blobs about to be lost — for rehearsals and demos. It writes only to a directory, to Azurite, or to an empty
container: a container that holds blobs in a real account needs --force, and the message names the account.
It never overwrites a blob (If-None-Match), so a second seed adds beside the first.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runWith(runF, runSeed)(cmd.Context(), o) },
	}
	fs := cmd.Flags()
	fs.StringVar(&o.scenario, "scenario", "incident", "scenario: incident")
	fs.IntVar(&o.count, "count", 40, "bulk root blobs beside the fixed cases")
	fs.Int64Var(&o.seed, "seed", 1, "random seed (the same seed writes the same incident)")
	fs.StringVar(&o.registerOut, "register-out", "", "where to write the handler register the scenario implies (default: for a --dir, kept by deadletter for that directory; else ./deadletter-handlers.json)")
	fs.BoolVar(&o.force, "force", false, "seed into a container of a real account that already holds blobs")
	return cmd
}

func runSeed(ctx context.Context, o *seedOptions) error {
	a := o.f
	if err := positiveInt("count", o.count); err != nil {
		return err
	}
	if a.g.readOnly {
		return errors.New("--read-only: seed writes blobs")
	}
	// Everything that can refuse runs before anything is created or written.
	out := o.registerOut
	if out == "" && a.g.dir == "" {
		out = "deadletter-handlers.json"
	}
	if out != "" {
		if err := registerFree(out, o.force); err != nil {
			return err
		}
	}
	c, err := openForSeed(a.g)
	if err != nil {
		return err
	}
	if err := seedGuard(ctx, c, o.force); err != nil {
		return err
	}
	if p, ok := c.(store.Provisioner); ok {
		if err := p.Create(ctx); err != nil {
			return err
		}
	}
	rep, err := scenario.Seed(ctx, c, scenario.SeedOptions{Scenario: o.scenario, Count: o.count, Seed: o.seed, Config: a.g.rules()})
	if err != nil {
		return err
	}
	if out, err = writeRegister(a.g.dir, out, rep.Register); err != nil {
		return err
	}
	w := a.io.out
	fmt.Fprintf(w, "seeded %d blobs into %s (%s)\n", rep.Blobs, textfmt.Printable(c.Describe()), paneCounts(rep.ByPane))
	if rep.Skipped > 0 {
		fmt.Fprintf(w, "%d blob name(s) were already taken and left as they were\n", rep.Skipped)
	}
	fmt.Fprintf(w, "handler register: %s\n", textfmt.Printable(out))
	if !rep.Backdated {
		fmt.Fprintf(w, "note: storage cannot backdate blobs: root blobs become stranded once they pass the TTL (%s); rehearse with --ttl 5s\n", textfmt.Duration(a.g.ttl))
	}
	return nil
}

// registerFree refuses to overwrite a file with the seed's register — it may be the estate's real one, which
// --handlers then reads — unless it already holds that register, or --force.
func registerFree(path string, force bool) error {
	old, err := readOperatorFile("--register-out", path)
	if errors.Is(err, fs.ErrNotExist) || force {
		return nil
	}
	if err != nil {
		return err
	}
	if reg, err := rules.ParseRegister(old); err == nil && maps.Equal(reg, scenario.IncidentRegister) {
		return nil
	}
	return usagef("%s exists and is not the scenario's register: choose another --register-out, or --force to overwrite it", textfmt.Printable(path))
}

// openForSeed opens the container, creating a directory container that does not exist yet.
func openForSeed(g globalFlags) (store.Container, error) {
	if g.dir != "" {
		return dirstore.Create(g.dir)
	}
	sp := g.spec("")
	return session.OpenContainer(&sp)
}

// seedGuard refuses to seed fake dead letters into an account's container that this seed does not create —
// the Function App's connection-string variable may point at production — unless forced. The account decides,
// not the host: the storage emulator's well-known account and key are always safe (a port-forward to a real
// account on 127.0.0.1 is not), and so is a container that does not exist yet (the seed creates it, empty). A
// directory is always safe.
func seedGuard(ctx context.Context, c store.Container, force bool) error {
	remote, ok := c.(interface {
		Emulator() bool
		Exists(context.Context) (bool, error)
	})
	if force || !ok || remote.Emulator() {
		return nil
	}
	exists, err := remote.Exists(ctx)
	switch {
	case err != nil:
		return err
	case exists:
		return usagef("seed would write fake dead letters into %s, an existing container in an account that is not the storage emulator — "+
			"is this the Function App's production account? Seed a new container (--container), or pass --force if you mean it", textfmt.Printable(c.Describe()))
	}
	return nil
}

// writeRegister leaves a scenario's register at path, or — for a directory and no path — where deadletter keeps
// the register of a directory it seeded (internal/made: outside the directory, where no blob can be), which
// every command given the directory then reads. It returns where it wrote.
func writeRegister(dir, path string, reg rules.Register) (string, error) {
	b, err := json.MarshalIndent(reg, "", "  ")
	if err != nil {
		return "", err
	}
	b = append(b, '\n')
	if path != "" {
		return path, writeOperatorFile("--register-out", path, b)
	}
	p, err := made.Find(dir)
	if made.IsNotMade(err) {
		p, err = made.Make(dir, made.Seed)
	}
	if err != nil {
		return "", err
	}
	return p.Register(), made.WriteFile(p.Register(), b)
}

// demoDir is the one directory the demo reuses per user.
func demoDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the demo (give --dir): %w", err)
	}
	return filepath.Join(base, "deadletter", "demo"), nil
}
