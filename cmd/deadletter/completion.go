package main

import (
	"context"
	"strings"
	"time"

	"github.com/deadletter/deadletter/store"
	"github.com/spf13/cobra"
)

// maxCompletions bounds how many blob names a shell is offered.
const maxCompletions = 500

// completeNames offers the container's blob names in scope that hold what has been typed (a prefix or any
// fragment, like the commands themselves accept), read with a short deadline so a shell never hangs.
func (a *app) completeNames(in scope) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if err := a.prepare(cmd); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		a.g.timeout = 5 * time.Second
		c, err := a.g.open()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), a.g.timeout)
		defer cancel()
		frag := strings.ToLower(toComplete)
		var out []string
		c.List(ctx, "", func(p store.Page) error {
			for _, b := range p.Blobs {
				if in(b.Name) && strings.Contains(strings.ToLower(b.Name), frag) {
					out = append(out, b.Name)
				}
			}
			if len(out) >= maxCompletions {
				return context.Canceled
			}
			return nil
		})
		return out[:min(len(out), maxCompletions)], cobra.ShellCompDirectiveNoFileComp
	}
}
