package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every command and every flag is documented: the README names every command, and the README or
// docs/commands.md every flag — so a flag added without its documentation fails here, not in an operator's hands.
func TestEveryFlagIsDocumented(t *testing.T) {
	t.Parallel()
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	readme := read("README.md")
	docs := readme + read("docs/commands.md") + read("docs/contexts.md") + read("docs/twin.md") + read("docs/alerting.md")
	root := newFactory(stdio{}).root()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || strings.HasPrefix(c.Name(), "__") {
			return
		}
		if c != root && c.Parent() == root && !strings.Contains(readme, "`"+c.Name()) {
			t.Errorf("the README's command table lacks %s", c.Name())
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" && f.Name != "version" && !strings.Contains(docs, "--"+f.Name) && !strings.Contains(docs, "`-"+f.Shorthand+"`") {
				t.Errorf("%s --%s is documented nowhere (README.md, docs/commands.md)", c.CommandPath(), f.Name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
