package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// shellHostileNames are blobs anyone who can write to the container can create, next to each other so that a shell
// inserts their common prefix.
var shellHostileNames = []string{"R/$(touch PWNED).json", "R/$(touch PWNED).json.bak", "R/`touch PWNED2`.json", "R/`touch PWNED2`.json.x",
	"R/a;touch PWNED3;.json", "R/a;touch PWNED3;.json2", "R/\x1b]0;owned\x07.json"}

// completionShell runs a real interactive shell in tmux with deadletter's completion script loaded, in a
// directory where a command substitution that runs would leave a file.
func completionShell(t *testing.T, shell string) (tm *tmuxTerm, container, work string) {
	t.Helper()
	path, err := exec.LookPath(shell)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: ./test.sh installs it", shell)
		}
		t.Skipf("%s is not installed", shell)
	}
	container, work = t.TempDir(), t.TempDir()
	d, _ := dirstore.Open(container)
	for _, n := range shellHostileNames {
		if _, err := d.Write(context.Background(), n, []byte("[]"), store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bin := binary(t)
	binDir := filepath.Dir(bin)
	script := filepath.Join(work, "deadletter.completion")
	out := mustRun(t, "completion", shell)
	if err := os.WriteFile(script, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(work, "rc")
	var cmd []string
	switch shell {
	case "bash":
		const bashCompletion = "/usr/share/bash-completion/bash_completion"
		if _, err := os.Stat(bashCompletion); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("bash-completion is missing: ./test.sh installs it")
			}
			t.Skip("bash-completion is not installed")
		}
		os.WriteFile(rc, []byte("PS1='$ '\nPATH="+binDir+":$PATH\n. "+bashCompletion+"\n. "+script+"\ncd "+work+"\n"), 0o644)
		cmd = []string{path, "--noprofile", "--rcfile", rc, "-i"}
	case "zsh":
		os.WriteFile(filepath.Join(work, ".zshrc"), []byte("PS1='$ '\npath=("+binDir+" $path)\nautoload -U compinit && compinit -u\nsource "+script+"\ncompdef _deadletter deadletter\ncd "+work+"\n"), 0o644)
		cmd = []string{"env", "ZDOTDIR=" + work, path, "-i"}
	case "fish":
		os.WriteFile(rc, []byte("set -gx PATH "+binDir+" $PATH\nsource "+script+"\ncd "+work+"\nfunction fish_prompt; echo '$ '; end\n"), 0o644)
		cmd = []string{path, "--no-config", "-C", "source " + rc}
	}
	tm = newTerm(t, 200, 40, cmd...)
	tm.screen("$")
	return tm, container, work
}

// inserted is what a shell should put on the line for a typed prefix (Tab pressed tabs times): the blob's name,
// escaped so that the shell hands deadletter the name and runs nothing of it.
type inserted struct {
	typed, want, name string
	tabs              int
}

// insertions are, per shell, prefixes that reach each kind of hostile name and what the shell inserts. A raw $ or `
// typed into bash or zsh starts the shell's own completion (variables, commands), so the operator types them
// escaped; fish completes variables after a raw $ and a backslash-$ stops it, so there the whole list is walked.
var insertions = map[string][]inserted{
	"bash": {
		{`R/\$`, `R/\$\(touch\ PWNED\).json`, "R/$(touch PWNED).json", 1},
		{"R/\\`", "R/\\`touch\\ PWNED2\\`.json", "R/`touch PWNED2`.json", 1},
		{`R/a`, `R/a\;touch\ PWNED3\;.json`, "R/a;touch PWNED3;.json", 1},
	},
	"zsh": {
		{`R/\$`, `R/\$\(touch\ PWNED\).json`, "R/$(touch PWNED).json", 1},
		{"R/\\`", "R/\\`touch\\ PWNED2\\`.json", "R/`touch PWNED2`.json", 1},
		{`R/a`, `R/a\;touch\ PWNED3\;.json`, "R/a;touch PWNED3;.json", 1},
	},
	"fish": {
		{`R/`, `R/\$\(touch\ PWNED\).json`, "R/$(touch PWNED).json", 2},
		{"R/`", "R/`touch\\ PWNED2`.json", "R/`touch PWNED2`.json", 1},
		{`R/a`, `R/a\;touch\ PWNED3\;.json`, "R/a;touch PWNED3;.json", 1},
	},
}

// gone waits (with a deadline) until the terminal no longer shows text.
func (tm *tmuxTerm) gone(text string) {
	tm.t.Helper()
	var s string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if s = tm.capture(); !strings.Contains(s, text) {
			return
		}
	}
	tm.t.Fatalf("the terminal still shows %q:\n%s", text, s)
}

// Completion in a real shell inserts hostile blob names escaped: for each, a typed prefix and Tab put the name on
// the line (waited for and asserted, in bash, zsh and fish), and Enter runs deadletter show on exactly that blob
// — nothing of the name runs. The prefix R/ reaches every name, the one holding an escape sequence too: the
// shell lists the others and no raw escape reaches the terminal (its title stays, nothing of the name shows
// with the escape eaten).
func TestCompletionRunsNothing(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			tm, container, work := completionShell(t, shell)
			line := "deadletter show --dir " + container + " "
			for _, in := range insertions[shell] {
				tm.keys("-l", line+in.typed)
				for i := 0; i < in.tabs; i++ {
					tm.keys("Tab")
				}
				tm.screen("$ " + line + in.want)
				if in.tabs > 1 { // the second Tab opened the shell's list on its first entry: Enter takes it and closes the list
					tm.keys("Enter")
					tm.gone("PWNED).json.bak")
				}
				tm.keys("Enter")
				// show prints the blob's name on a line of its own, then its pane: the name the shell handed it.
				tm.screenMatches(`(?m)^` + regexp.QuoteMeta(in.name) + `\s*\n\s+pane\s`)
				tm.keys("-l", "clear")
				tm.keys("Enter")
				tm.gone(in.want)
			}

			tm.keys("-l", line+"R/")
			tm.keys("Tab", "Tab")
			s := tm.screenMatches(`PWNED3\\?;\.json2`) // the list of candidates is up
			if shell != "fish" && !strings.Contains(s, "1 blob name(s) hold control characters") {
				t.Errorf("%s does not say a name was left out:\n%s", shell, s)
			}
			if strings.Contains(s, "owned") || strings.Contains(s, "R/.json") {
				t.Errorf("the name holding an escape sequence was offered:\n%s", s)
			}
			if title := tm.tmux("display-message", "-p", "-t", "dl", "#{pane_title}"); strings.Contains(title, "owned") {
				t.Errorf("a blob name set the terminal title: %q", title)
			}
			tm.keys("C-c")

			// A last command proves the shell ran the lines before it.
			tm.keys("-l", "echo done-"+shell)
			tm.keys("Enter")
			tm.screen("done-" + shell)
			for _, f := range []string{"PWNED", "PWNED2", "PWNED3"} {
				if _, err := os.Stat(filepath.Join(work, f)); err == nil {
					t.Fatalf("completion ran a command from a blob name: %s exists\n%s", f, tm.capture())
				}
			}
			if s := tm.capture(); strings.Contains(s, "\x1b") {
				t.Fatalf("a raw escape sequence reached the terminal:\n%s", s)
			}
		})
	}
}

// What the shells are given: names by prefix, none with control characters (a note says how many), and an
// unknown shell is an error.
func TestCompletionCandidates(t *testing.T) {
	t.Parallel()
	container := t.TempDir()
	d, _ := dirstore.Open(container)
	for _, n := range shellHostileNames {
		d.Write(context.Background(), n, []byte("[]"), store.WriteOptions{})
	}
	out := mustRun(t, "__complete", "show", "--dir", container, "R/")
	if strings.ContainsRune(out, 0x1b) || strings.ContainsRune(out, 0x07) {
		t.Fatalf("raw control bytes in the completions: %q", out)
	}
	if !strings.Contains(out, "R/$(touch PWNED).json.bak") || !strings.Contains(out, "1 blob name(s) hold control characters") {
		t.Fatalf("completions: %q", out)
	}
	if _, errs, code := runCmd(t, "completion", "tcsh"); code != 2 || !strings.Contains(errs, "not a shell deadletter completes") {
		t.Fatalf("completion tcsh: exit %d %s", code, errs)
	}
	if !strings.Contains(mustRun(t, "completion", "bash"), `printf "%q\n" "${COMPREPLY[@]}"`) {
		t.Fatal("the bash script does not escape every candidate")
	}
}

// In a real bash, `deadletter context use <Tab>` and `--context <Tab>` complete the config file's contexts.
func TestContextNamesCompleteInBash(t *testing.T) {
	tm, _, work := completionShell(t, "bash")
	cfg := filepath.Join(work, "config.yaml")
	if err := os.WriteFile(cfg, []byte("contexts:\n  - name: production-east\n    dir: "+work+"\n  - name: staging\n    dir: "+work+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm.keys("-l", "export DEADLETTER_CONFIG="+cfg)
	tm.keys("Enter")
	tm.keys("-l", "deadletter context use produ")
	tm.keys("Tab")
	tm.screen("deadletter context use production-east")
	tm.keys("C-u")
	tm.keys("-l", "deadletter ls --context st")
	tm.keys("Tab")
	tm.screen("deadletter ls --context staging")
	tm.keys("C-c")
}
