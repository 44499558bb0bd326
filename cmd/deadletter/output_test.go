package main

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// The commands the output model promises -o json on (issue 38), found in the tree as the operator types them.
func TestEveryCommandDeclaresItsOutputs(t *testing.T) {
	t.Parallel()
	root := newFactory(stdio{}).root()
	for _, path := range []string{"ls", "show", "check", "drain", "restore", "ack", "report", "watch", "twin status", "twin advance",
		"context list", "context show", "export", "edit", "resubmit", "version"} {
		c, _, err := root.Find(strings.Fields(path))
		if err != nil || c.Name() != strings.Fields(path)[len(strings.Fields(path))-1] {
			t.Fatalf("no command %q: %v", path, err)
		}
		o := outputOf(c)
		if o == nil || !slices.Contains(o.formats, outJSON) {
			t.Errorf("%s does not declare -o json", path)
			continue
		}
		if f := c.Flags().Lookup("json"); f == nil || f.NoOptDefVal != "true" {
			t.Errorf("%s lost --json, the alias scripts use", path)
		}
	}
	// Nothing declares -o without the model: a second spelling of -o would bypass its checks.
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.LocalFlags().Lookup("output"); f != nil && outputOf(c) == nil {
			t.Errorf("%s has its own -o", c.CommandPath())
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

func TestOutputRefusesWhatTheCommandDoesNotPrint(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ls", "-o", "md"}, `invalid argument "md" for "-o, --output" flag: this command prints text, wide, name, json or jsonl`},
		{[]string{"report", "-o", "wide"}, "this command prints md or json"},
		{[]string{"report", "--format", "html"}, `"html" for "--format" flag: this command prints md or json`},
		{[]string{"check", "-o", "name"}, "this command prints text, wide or json"},
		{[]string{"ls", "--json", "--jsonl"}, "--jsonl asks for jsonl where --json asked for json: give one"},
		{[]string{"ls", "-o", "wide", "--json"}, "--json asks for json where -o asked for wide"},
	} {
		out, errs, code := runCmd(t, append(c.args, "--dir", dir)...)
		if code != exitError || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("deadletter %v: exit %d, %q; want exit 2 saying %q", c.args, code, errs, c.want)
		}
	}
	// The same format twice, by -o and its alias, is no disagreement; --json=false asks for nothing.
	for _, args := range [][]string{{"check", "--json", "-o", "json"}, {"report", "--format", "json", "--json"}, {"ls", "--json=false", "-o", "name"}} {
		if _, errs, code := runCmd(t, append(args, "--dir", dir)...); code == exitError {
			t.Errorf("deadletter %v: %s", args, errs)
		}
	}
}

// Only the commands that keep a screen or a loop going (the dashboard, the demo, watch) keep the collector the
// dashboard's frames need; every other command answers once and collects tighter (heap.OneShot).
func TestOnlyScreensKeepTheLooserCollector(t *testing.T) {
	t.Parallel()
	root := newFactory(stdio{}).root()
	var walk func(c *cobra.Command)
	frames := map[string]bool{}
	walk = func(c *cobra.Command) {
		if drawsFrames(c) {
			frames[c.CommandPath()] = true
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	want := map[string]bool{"deadletter": true, "deadletter demo": true, "deadletter watch": true}
	if !maps.Equal(frames, want) {
		t.Errorf("commands that draw frames: %v, want %v", frames, want)
	}
}
