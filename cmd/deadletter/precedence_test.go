package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store/storetest"
)

// SPEC §5's precedence, every pair: the command line (a container flag or --context) > DEADLETTER_CONTEXT > a
// container named by the environment > the config file's current-context > defaults. A container named above a
// context sets it aside, and the tool says so; a context named on the command line keeps its other values under
// a container flag typed beside it.
func TestPrecedenceEveryPair(t *testing.T) {
	dirs := map[string]string{}
	for _, n := range []string{"flag", "ctxflag", "ctxenv", "env", "current"} {
		dirs[n] = t.TempDir()
	}
	cfg := writeConfig(t, fmt.Sprintf("current-context: current\ncontexts:\n"+
		"  - name: ctxflag\n    dir: %s\n    read-only: true\n"+
		"  - name: ctxenv\n    dir: %s\n"+
		"  - name: current\n    dir: %s\n", dirs["ctxflag"], dirs["ctxenv"], dirs["current"]))
	// Each source, as the command line or the environment gives it.
	type source struct {
		args []string
		env  [2]string
	}
	sources := map[string]source{
		"flag":    {args: []string{"--dir", dirs["flag"]}},
		"ctxflag": {args: []string{"--context", "ctxflag"}},
		"ctxenv":  {env: [2]string{"DEADLETTER_CONTEXT", "ctxenv"}},
		"env":     {env: [2]string{"DEADLETTER_DIR", dirs["env"]}},
		"current": {}, // the config file's, always there
	}
	order := []string{"flag", "ctxflag", "ctxenv", "env", "current"}
	for i, hi := range order {
		for _, lo := range order[i+1:] {
			t.Run(hi+">"+lo, func(t *testing.T) {
				args := []string{"ls", "--json", "--config", cfg}
				for _, n := range []string{hi, lo} {
					args = append(args, sources[n].args...)
					if e := sources[n].env; e[0] != "" {
						t.Setenv(e[0], e[1])
					}
				}
				out, errs, code := runCmd(t, args...)
				var l lsOut
				if code != 0 || json.Unmarshal([]byte(out), &l) != nil {
					t.Fatalf("%v: exit %d %s", args, code, errs)
				}
				want := hi
				if hi == "flag" && lo == "ctxflag" {
					want = "flag" // --context with a container flag beside it: the flag's container
				}
				if l.Container != "dir:"+dirs[want] {
					t.Fatalf("%v opened %s, want %s's %s", args, l.Container, want, dirs[want])
				}
				// A context named by something other than the command line, under a container named above it,
				// is set aside and said to be.
				has := map[string]bool{hi: true, lo: true}
				chosen := "current"
				if has["ctxflag"] {
					chosen = "ctxflag"
				} else if has["ctxenv"] {
					chosen = "ctxenv"
				}
				aside := chosen != "ctxflag" && (has["flag"] || chosen == "current" && has["env"])
				if aside != strings.Contains(errs, "set aside") {
					t.Fatalf("%v: stderr %q (set aside: %v)", args, errs, aside)
				}
			})
		}
	}
	// Within one context the command line beats its values: ctxflag is read-only, --read-only=false is not; and
	// its read-only still holds under a --dir typed beside it.
	if _, errs, code := runCmd(t, "drain", "--config", cfg, "--context", "ctxflag", "--yes"); code == 0 || !strings.Contains(errs, "read-only") {
		t.Fatalf("a drain in the read-only context: exit %d %s", code, errs)
	}
	if _, errs, code := runCmd(t, "drain", "--config", cfg, "--context", "ctxflag", "--dir", dirs["flag"], "--yes"); code == 0 || !strings.Contains(errs, "read-only") {
		t.Fatalf("a drain in the read-only context with --dir: exit %d %s", code, errs)
	}
	mustRun(t, "drain", "--config", cfg, "--context", "ctxflag", "--read-only=false", "--yes")
}

// With a current context set and the Function App's connection-string variable exported, the real binary acts on
// the variable's container and says the current context was set aside: drain on stderr, and the dashboard in its
// header.
func TestTheConnectionStringSetsTheCurrentContextAside(t *testing.T) {
	cs := storetest.AzuriteConnectionString(t)
	name := storetest.NewName()
	mustRun(t, "seed", "--connection-string", cs, "--container", name, "--register-out", filepath.Join(t.TempDir(), "h.json"))
	rehearsal := seeded(t)
	cfg := writeConfig(t, "current-context: rehearsal\ncontexts:\n  - name: rehearsal\n    dir: "+rehearsal+"\n")
	t.Setenv("AZURE_STORAGE_ACCOUNT_CONNECTION_STRING", cs)
	t.Setenv("DEADLETTER_CONTAINER", name)
	t.Setenv("DEADLETTER_CONFIG", cfg)
	const said = "container from $AZURE_STORAGE_ACCOUNT_CONNECTION_STRING; current-context rehearsal set aside"
	onAzurite := map[string]bool{}
	for _, b := range lsJSONOf(t, "--connection-string", cs, "--container", name).Blobs {
		onAzurite[b["name"].(string)] = true
	}
	// Azurite cannot backdate: wait until its root blobs are a second old, so a --ttl 1s drain takes them.
	var res struct {
		Estate  string                           `json:"estate"`
		Results []struct{ Name, Outcome string } `json:"results"`
	}
	for deadline := time.Now().Add(60 * time.Second); len(res.Results) == 0; time.Sleep(200 * time.Millisecond) {
		var out, errb bytes.Buffer
		c := exec.Command(binary(t), "drain", "--dry-run", "--json", "--ttl", "1s")
		c.Stdout, c.Stderr = &out, &errb
		if err := c.Run(); err != nil && c.ProcessState.ExitCode() > 3 {
			t.Fatalf("drain: %v %s", err, errb.String())
		}
		if !strings.Contains(errb.String(), said) {
			t.Fatalf("drain did not say the context was set aside: %s", errb.String())
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing on Azurite became drainable: %s %s", out.String(), errb.String())
		}
	}
	for _, r := range res.Results {
		if !onAzurite[r.Name] {
			t.Fatalf("drain took %s, not a blob of the variable's container", r.Name)
		}
	}
	if !strings.Contains(res.Estate, name) || strings.Contains(res.Estate, "rehearsal") {
		t.Fatalf("the drain's estate: %q", res.Estate)
	}
	tm := newTerm(t, 160, 30, binary(t), "--interval", "1h")
	tm.screen("current-context rehearsal set aside", "devsto") // the header: the sentence, then Azurite's account
	tm.keys("q")
	tm.exited()
}
