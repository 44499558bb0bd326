package main

import (
	"fmt"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/spf13/cobra"
)

func newCmdAudit(f *factory) *cobra.Command {
	a := f
	cmd := &cobra.Command{
		Use:         "audit",
		Short:       "the shared record every operator on call appends to (an append-blob container)",
		Args:        unknownCommand,
		Annotations: lookingAtAnEstate(),
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "init",
		Short: "make the audit container the context names (--audit-container), and say the role it needs",
		Long: `audit init makes the append-blob container named by --audit-container (or the context's audit-container:)
in the estate's account (or at the https URL given, in another), if it does not exist, and says the role every
operator needs on it. Each action's record is then appended there as well as to the local log, so everyone on
call sees each other's work in deadletter log and the dashboard's history. Never the dead-letter container.`,
		Args:        cobra.NoArgs,
		Annotations: lookingAtAnEstate(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.g.readOnly {
				return usagef("read-only mode: audit init makes a container")
			}
			if a.g.auditContainer == "" {
				return usagef("audit init needs --audit-container NAME (or audit-container: in the context)")
			}
			ctx, cancel := a.withTimeout(cmd.Context(), lookTimeout)
			defer cancel()
			s, err := a.session(ctx, a.timeout(lookTimeout))
			if err != nil {
				return err
			}
			al, err := s.AuditLog()
			if err != nil {
				return err
			}
			made, err := al.Create(ctx)
			if err != nil {
				return err
			}
			verb := "exists already"
			if made {
				verb = "made"
			}
			fmt.Fprintf(a.io.out, "%s: %s\n", textfmt.Printable(al.Describe()), verb)
			fmt.Fprintln(a.io.out, "every operator who acts needs Storage Blob Data Contributor on it (append and read: scope the role to this container alone); Storage Blob Data Reader reads it")
			return nil
		},
	})
	return cmd
}
