package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/opfile"
	"github.com/deadletter/deadletter/replay/rules"

	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/store"
	"github.com/spf13/cobra"
)

type resubmitOptions struct {
	repairFlags
	subscription, replaces string
	file                   string
}

func newCmdResubmit(f *factory, runF func(context.Context, *resubmitOptions) error) *cobra.Command {
	o := &resubmitOptions{repairFlags: repairFlags{f: f, action: record.ActResubmit}}
	cmd := &cobra.Command{
		Use:         "resubmit FILE --subscription NAME [--replaces NAME]",
		Short:       "send a payload fixed elsewhere back through the replay, as a new root dead letter",
		Annotations: lookingAtAnEstate(),
		Long: `resubmit writes FILE (a payload fixed by hand, "-" for standard input) as a new dead letter at the container
root, so its BlobCreated reaches the replay function. It is judged first by the rules show uses, and the preview
says what the replay will do with it — refused, unless --force, when it would still be malformed, quarantined or
crash. Without --replaces it is named after its content in the subscription's current hour folder and retires
nothing; with --replaces NAME it is named after that blob (in its subscription and hour folder, with
.repaired-<its Last-Modified>), and that blob — a quarantine copy or a root blob, never an archived record — is
deleted, only if unchanged, after the new blob has landed. Ids are written as they stand in FILE.`,
		Example: `  deadletter get quarantine/WEBHOOKS/2026/3/14/9/3f2a….json --to fix.json   # fix it, then:
  deadletter resubmit fix.json --subscription webhooks --replaces quarantine/WEBHOOKS/2026/3/14/9/3f2a….json
  deadletter resubmit fix.json --subscription webhooks --dry-run`,
		Args: exactArgs(1, "resubmit takes one file (- for standard input)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file, o.via = args[0], via(cmd)
			return runWith(runF, runResubmit)(cmd.Context(), o)
		},
	}
	o.register(cmd)
	cmd.Flags().StringVar(&o.subscription, "subscription", "", "the Event Grid subscription the payload's events belong to (required without --replaces)")
	cmd.Flags().StringVar(&o.replaces, "replaces", "", "the blob this payload replaces: deleted after the new one has landed")
	cmd.RegisterFlagCompletionFunc("replaces", f.completeNames(replay.AnyBlob))
	return cmd
}

func runResubmit(ctx context.Context, o *resubmitOptions) error {
	a, file := o.f, o.file
	switch {
	case o.subscription == "" && o.replaces == "":
		return usagef("resubmit needs --subscription (the payload's subscription), or --replaces (the blob it replaces)")
	case o.subscription != "" && !rules.ValidSubscriptionName(o.subscription):
		return usagef("--subscription \"%s\" is not a subscription name: %s", textfmt.Printable(o.subscription), rules.SubscriptionNameRule)
	}
	if a.g.readOnly && !o.dryRun {
		return replay.ErrReadOnly
	}
	body, err := readPayloadFile(file, a.io.in)
	if err != nil {
		return err
	}
	s, err := a.session(ctx, a.timeout(0))
	if err != nil {
		return err
	}
	l, cfg := s.Loader(), s.Config()
	var rp rules.RepairPlan
	if o.replaces != "" {
		name, err := replay.ResolveRepairable(ctx, a.io.err, l, o.replaces, a.g.container)
		if err != nil {
			return couldNotLook(ctx, err)
		}
		b, err := l.Container.Read(ctx, name, store.MaxBlobBytes)
		if err != nil {
			return couldNotLook(ctx, err)
		}
		if sub := rules.ParseBlobName(name).Subscription; o.subscription != "" && !strings.EqualFold(sub, o.subscription) {
			return usagef("--replaces %s is a dead letter of %s, not of --subscription %s", textfmt.Printable(name), textfmt.Printable(sub), textfmt.Printable(o.subscription))
		}
		now, err := serviceNow(ctx, l.Container, b.ServiceTime)
		if err != nil {
			return err
		}
		if rp, err = replay.PlanRepair(ctx, l.Container, cfg, cfg.OriginalOf(b.BlobInfo, b.Body, now), body); err != nil {
			return couldNotLook(ctx, err)
		}
	} else {
		now, err := l.Container.Now(ctx)
		if err != nil {
			return couldNotLook(ctx, err)
		}
		if rp, err = replay.PlanResubmit(ctx, l.Container, cfg, o.subscription, body, now); err != nil {
			return couldNotLook(ctx, err)
		}
		if held, err := holdsSubscription(ctx, l.Container, o.subscription); err == nil && !held {
			fmt.Fprintf(a.io.err, "note: the container holds no dead letter of %s (at the root, in quarantine/ or archived/): is the subscription's name right?\n",
				textfmt.Printable(strings.ToUpper(o.subscription)))
		}
	}
	return o.repair(ctx, s, &rp, nil) // (the payload is in FILE already)
}

// holdsSubscription reports whether any blob of the subscription's folder is in the container — at the root, in
// quarantine/ or archived/ — reading at most one page of each.
func holdsSubscription(ctx context.Context, c store.Container, sub string) (bool, error) {
	found := errors.New("found")
	for _, p := range []string{"", rules.QuarantinePrefix, rules.ArchivedPrefix} {
		err := c.List(ctx, p+strings.ToUpper(sub)+"/", func(pg store.Page) error {
			if len(pg.Blobs) > 0 {
				return found
			}
			return nil
		})
		switch {
		case errors.Is(err, found):
			return true, nil
		case err != nil:
			return false, err
		}
	}
	return false, nil
}

// serviceNow is the service's clock: as a read answered it, else asked.
func serviceNow(ctx context.Context, c store.Container, read time.Time) (time.Time, error) {
	if !read.IsZero() {
		return read, nil
	}
	return c.Now(ctx)
}

// readPayloadFile reads a payload the operator fixed: a regular file (never a FIFO that would hang, nor a device),
// or standard input for "-", at most store.MaxBlobBytes.
func readPayloadFile(path string, stdin io.Reader) ([]byte, error) {
	tooLarge := errors.New("the payload is over 64 MiB: not a dead letter Event Grid would write")
	if path == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, store.MaxBlobBytes+1))
		if err == nil && len(b) > store.MaxBlobBytes {
			err = tooLarge
		}
		return b, err
	}
	b, err := opfile.ReadRegular(path, store.MaxBlobBytes)
	var nr *opfile.NotRegularError
	switch {
	case errors.As(err, &nr):
		return nil, fmt.Errorf("%s is %s, not a regular file", textfmt.Printable(path), opfile.FileKind(nr.Mode))
	case errors.Is(err, opfile.ErrTooLarge):
		return nil, tooLarge
	}
	return b, err
}
