package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every command that reads an estate says so when the estate is a twin (docs/twin.md: "every output says so"),
// beyond check and drain (TestEveryOutputSaysRehearsal): the JSON of ls, show, log, report, resubmit (edit's) and
// export carries "rehearsal": true, report's Markdown says REHEARSAL under its title, and the words of ls, show
// and log note it on stderr. A plain directory says none of it.
func TestEveryEstateCommandSaysRehearsal(t *testing.T) {
	t.Parallel()
	twinDir, plain := t.TempDir(), seeded(t)
	mustRun(t, "twin", "start", "--dir", twinDir)
	mustRun(t, "twin", "advance", "--dir", twinDir, "--by", "3h")
	fix := filepath.Join(t.TempDir(), "fix.json")
	os.WriteFile(fix, []byte(withData), 0o600)
	for _, c := range []struct {
		dir  string
		want bool
	}{{twinDir, true}, {plain, false}} {
		name := strings.SplitN(mustRun(t, "ls", "--dir", c.dir, "-o", "name"), "\n", 2)[0]
		exp := filepath.Join(t.TempDir(), "exp")
		for _, args := range [][]string{
			{"ls", "--json"}, {"show", name, "--json"}, {"log", "--json"}, {"report", "--format", "json"},
			{"resubmit", fix, "--subscription", "webhooks", "--dry-run", "--json"}, {"export", name, "--to", exp, "--json"},
		} {
			out, errs, _ := runCmd(t, append(args, "--dir", c.dir)...)
			var m map[string]any
			if err := json.Unmarshal([]byte(out), &m); err != nil {
				t.Fatalf("%v on %s: %v\n%s%s", args, c.dir, err, out, errs)
			}
			if got := m["rehearsal"] == true; got != c.want {
				t.Errorf("%v on %s: rehearsal %v, want %v\n%s", args, c.dir, m["rehearsal"], c.want, out)
			}
		}
		report := mustRun(t, "report", "--dir", c.dir)
		title := strings.Join(strings.SplitN(report, "\n", 4)[:3], "\n")
		if strings.Contains(title, "REHEARSAL") != c.want {
			t.Errorf("report on %s: its title area says REHEARSAL: %v, want %v\n%s", c.dir, !c.want, c.want, title)
		}
		for _, args := range [][]string{{"ls"}, {"show", name}, {"log"}} {
			_, errs, _ := runCmd(t, append(args, "--dir", c.dir)...)
			if strings.Contains(errs, "REHEARSAL") != c.want {
				t.Errorf("%v on %s: stderr says REHEARSAL: %v, want %v\n%s", args, c.dir, !c.want, c.want, errs)
			}
		}
	}
}
