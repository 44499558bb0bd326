package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/replay"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/store"
	"github.com/spf13/cobra"
)

// maxCompletions bounds how many blob names a shell is offered.
const maxCompletions = 500

// Blob names are chosen by whoever can write to the container, and a shell's completion inserts them into the
// command line the operator is about to run. So a name goes to the shell only when every script can carry it
// safely: never one with a control character, an escape sequence or a line break (they are counted in a note
// instead), and every one escaped for the shell by the script below — cobra's bash script leaves several
// candidates unescaped and bash then inserts their common prefix as it is, $(…) included.

// completeNames offers the container's blob names in scope that start with what has been typed, read with a
// short deadline so a shell never hangs.
func (f *factory) completeNames(in replay.Scope) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if err := f.prepare(cmd); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		f.g.timeout = 5 * time.Second
		sp := f.g.spec("")
		c, err := session.OpenContainer(&sp)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), f.g.timeout)
		defer cancel()
		var out []string
		hidden := 0
		c.List(ctx, "", func(p store.Page) error {
			for _, b := range p.Blobs {
				switch {
				case !in(b.Name) || !strings.HasPrefix(b.Name, toComplete):
				case textfmt.Printable(b.Name) != b.Name || strings.ContainsAny(b.Name, "\t\n"):
					hidden++ // it would carry raw control bytes to the terminal and the shell
				default:
					out = append(out, b.Name)
				}
			}
			if len(out) >= maxCompletions {
				return context.Canceled
			}
			return nil
		})
		out = out[:min(len(out), maxCompletions)]
		if hidden > 0 {
			out = cobra.AppendActiveHelp(out, fmt.Sprintf("%d blob name(s) hold control characters and are not offered: name them by their GUID (deadletter ls shows them escaped)", hidden))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completionShells are the shells deadletter writes a completion script for.
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

func newCmdCompletion(a *factory, root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "write the shell's completion script (commands, flags and blob names)",
		Long: `completion writes a completion script for bash, zsh, fish or PowerShell to standard output. It completes
commands, flags and the container's blob names; every name is escaped for the shell, and names holding control
characters are never offered.`,
		Example: `  deadletter completion bash > /etc/bash_completion.d/deadletter    # needs the bash-completion package
  deadletter completion zsh > "${fpath[1]}/_deadletter"
  deadletter completion fish > ~/.config/fish/completions/deadletter.fish
  deadletter completion powershell | Out-String | Invoke-Expression`,
		ValidArgs: completionShells,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("completion takes one shell: %s", strings.Join(completionShells, ", "))
			}
			for _, s := range completionShells {
				if args[0] == s {
					return nil
				}
			}
			return usagef("completion %s: not a shell deadletter completes (it completes %s)", textfmt.Printable(args[0]), strings.Join(completionShells, ", "))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			script, err := completionScript(root, args[0])
			if err != nil {
				return err
			}
			_, err = a.io.out.Write(script)
			return err
		},
	}
}

// completionScript is cobra's script for the shell, with bash's made to escape every candidate it inserts.
func completionScript(root *cobra.Command, shell string) ([]byte, error) {
	var b bytes.Buffer
	var err error
	switch shell {
	case "bash":
		err = root.GenBashCompletionV2(&b, true)
	case "zsh":
		err = root.GenZshCompletion(&b)
	case "fish":
		err = root.GenFishCompletion(&b, true)
	case "powershell":
		err = root.GenPowerShellCompletionWithDesc(&b)
	}
	if err != nil || shell != "bash" {
		return b.Bytes(), err
	}
	script := b.String()
	for _, p := range bashPatches {
		if !strings.Contains(script, p.old) {
			return nil, fmt.Errorf("the bash completion script is not the one deadletter knows how to make safe (cobra changed?): %q not found", p.old)
		}
		script = strings.ReplaceAll(script, p.old, p.new)
	}
	return []byte(script), nil
}

// bashPatches make cobra's bash script escape every candidate, not only a single one: bash inserts the common
// prefix of several candidates into the command line as they stand in COMPREPLY.
var bashPatches = []struct{ old, new string }{
	{`        # compgen looses the escaping so, if there is only a single completion, we need to
        # escape it again because it will be inserted on the command-line.  If there are multiple
        # completions, we don't want to escape them because they will be printed in a list
        # and we don't want to show escape characters in that list.
        if (( ${#COMPREPLY[@]} == 1 )); then
            COMPREPLY[0]=$(printf "%q" "${COMPREPLY[0]}")
        fi`, `        # compgen looses the escaping, so every completion is escaped again: bash inserts the common prefix of
        # several candidates into the command line as they stand here, and a blob name may hold $(…) (deadletter).
        IFS=$'\n' read -ra COMPREPLY -d '' < <(printf "%q\n" "${COMPREPLY[@]}")`},
}
