package main

import (
	"slices"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/internal/twin"
)

// twinRuleFlags are the flags that set the estate's rules a twin runs by (twin.Rules).
var twinRuleFlags = []string{"ttl", "retention", "max-replays", "id-separator"}

// explicitRules are the rule flags the operator gave — on the command line, in the context or in the
// environment — rather than left at their defaults.
func explicitRules(fs *pflag.FlagSet, fromEnv []string) []string {
	var given []string
	for _, name := range twinRuleFlags {
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		env := false
		for _, e := range envVars {
			env = env || e.flag == name && slices.Contains(fromEnv, e.name)
		}
		if f.Changed || env {
			given = append(given, name)
		}
	}
	return given
}

// useTwinRules makes a command on a twin's directory judge by the rules the twin runs by (docs/twin.md): its
// time-to-live, lifecycle rule, replay cap and id separator, whatever the defaults say. A rule flag the operator
// gave that contradicts the twin's is a usage error naming the twin's value — the twin cannot run by two rules,
// and judging by another would show ages, panes and expiry the twin will not follow. twin start, twin rm and the
// demo (which starts its own twin, or resumes it: see openDemo) take no twin's rules here.
func (f *factory) useTwinRules(cmd *cobra.Command, given []string) error {
	switch cmd.CommandPath() {
	case "deadletter twin start", "deadletter twin rm", "deadletter demo":
		return nil
	}
	if f.g.dir == "" {
		return nil
	}
	p, err := twin.Find(f.g.dir)
	if made.IsNotMade(err) {
		return nil
	}
	if err != nil {
		return err
	}
	r, err := twin.RulesAt(p)
	if err != nil {
		return err
	}
	return f.adoptTwinRules(r, given, f.g.dir)
}

// adoptTwinRules sets the twin's rules r on the flags, refusing a rule flag given (named in given) that differs.
func (f *factory) adoptTwinRules(r twin.Rules, given []string, dir string) error {
	for _, c := range []struct {
		flag       string
		same       bool
		flags, its string
	}{
		{"ttl", f.g.ttl == r.TTL, textfmt.Duration(f.g.ttl), textfmt.Duration(r.TTL)},
		{"retention", f.g.retention == r.Retention, textfmt.Duration(f.g.retention), textfmt.Duration(r.Retention)},
		{"max-replays", f.g.maxReplays == r.MaxReplays, strconv.Itoa(f.g.maxReplays), strconv.Itoa(r.MaxReplays)},
		{"id-separator", f.g.separator == r.Separator, strconv.Quote(f.g.separator), strconv.Quote(r.Separator)},
	} {
		if c.same || !slices.Contains(given, c.flag) {
			continue
		}
		return usagef("--%s %s: the twin in %s runs by --%s %s (set when it started, and every command on its directory judges by it): leave --%s out, or start another twin",
			c.flag, c.flags, textfmt.Printable(dir), c.flag, c.its, c.flag)
	}
	f.g.ttl, f.g.retention, f.g.maxReplays, f.g.separator = r.TTL, r.Retention, r.MaxReplays, r.Separator
	return nil
}
