package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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

// Completion in a real shell offers hostile blob names escaped — typing a prefix, pressing Tab (once and twice)
// and Enter runs nothing of the name — and never passes a raw escape sequence to the terminal.
func TestCompletionRunsNothing(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			tm, container, work := completionShell(t, shell)
			for _, prefix := range []string{"R/$", "R/`", "R/a"} {
				tm.keys("-l", "deadletter show --dir "+container+" "+prefix)
				tm.keys("Tab")
				time.Sleep(300 * time.Millisecond) // (the shell's own completion round trip: nothing to wait on)
				tm.keys("Tab")
				time.Sleep(300 * time.Millisecond)
				tm.keys("Enter")
				tm.screen("$")
				tm.keys("C-c")
			}
			// A last command proves the shell ran the lines before it.
			tm.keys("-l", "echo done-"+shell)
			tm.keys("Enter")
			tm.screen("done-" + shell)
			for _, f := range []string{"PWNED", "PWNED2", "PWNED3"} {
				if _, err := os.Stat(filepath.Join(work, f)); err == nil {
					t.Fatalf("completion ran a command from a blob name: %s exists\n%s", f, tm.capture())
				}
			}
			if s := tm.capture(); strings.Contains(s, "\x1b") || strings.Contains(s, "owned") && !strings.Contains(s, `\x1b`) {
				t.Fatalf("a raw escape sequence reached the terminal:\n%s", s)
			}
		})
	}
}

// What the shells are given: names by prefix, none with control characters (a note says how many), and an
// unknown shell is an error.
func TestCompletionCandidates(t *testing.T) {
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
