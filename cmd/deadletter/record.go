package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/azureblob"
	"github.com/deadletter/deadletter/tui"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// recorder is the record of this command's actions in the estate c (internal/record): the local log, and the
// shared audit container when the context names one. Nil in read-only mode: it acts on nothing.
func (a *app) recorder(c store.Container) (*record.Recorder, error) {
	if a.g.readOnly {
		return nil, nil
	}
	local, err := record.LocalDir()
	if err != nil {
		return nil, fmt.Errorf("no record can be kept: %w — nothing was done", err)
	}
	shared, err := a.auditLog(c)
	if err != nil {
		return nil, err
	}
	who := a.who()
	if ab, ok := c.(*azureblob.Container); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		who.Principal = ab.Principal(ctx) // (signed in with Entra ID: who it is; "" for a key or a SAS)
		cancel()
	}
	rec := &record.Recorder{Local: local, Who: who, Estate: a.recordEstate(c),
		Warn: func(s string) { fmt.Fprintln(a.io.err, "deadletter: warning: "+s) }}
	if shared != nil {
		rec.Shared = shared
	}
	return rec, nil
}

// who is the operator as the record names them.
func (a *app) who() record.Who { return record.DefaultWho() }

// recordEstate is the estate as a record names it.
func (a *app) recordEstate(c store.Container) record.Estate {
	e := record.EstateOf(a.context, c.Describe())
	if e.Directory != "" {
		if p, err := made.Find(e.Directory); err == nil {
			e.Made = p.ID
		}
	}
	return e
}

// auditLog is the shared audit container the context names (--audit-container), nil when none. It is an Azure
// append-blob container: never the dead-letter container itself (a blob at its root is a BlobCreated for the
// replay), and never for a directory estate (a line planted beside its blobs would forge the report).
func (a *app) auditLog(c store.Container) (*azureblob.AuditLog, error) {
	name := a.g.auditContainer
	if name == "" {
		return nil, nil
	}
	ab, ok := c.(*azureblob.Container)
	if !ok {
		return nil, usagef("--audit-container: a shared record is an Azure append-blob container; %s is a directory, whose record is kept locally only", c.Describe())
	}
	return ab.AuditLog(name)
}

// via is the command that asked, as a record names it: its words and the names of the flags given — never their
// values (a flag may hold a connection string).
func via(cmd *cobra.Command) string {
	parts := []string{cmd.CommandPath()}
	cmd.Flags().Visit(func(f *pflag.Flag) { parts = append(parts, "--"+f.Name) })
	return strings.Join(parts, " ")
}

// recording is one action's record under way.
type recording struct {
	act      *record.Act
	st       replay.Statter
	intended []record.Blob
	a        *app
	rec      *record.Recorder
}

// beginRecord writes the intent of an action on blobs in c before it writes anything. Nothing is recorded for a
// dry run or in read-only mode; a local record that cannot be written is an error (the action must not run).
func (a *app) beginRecord(ctx context.Context, cmd *cobra.Command, c store.Container, action string, dryRun bool, blobs []store.BlobInfo, service time.Time, detail string) (*recording, error) {
	if dryRun {
		return nil, nil
	}
	rec, err := a.recorder(c)
	if err != nil || rec == nil {
		return nil, err
	}
	intended := record.Intended(blobs)
	act, err := rec.Begin(ctx, action, via(cmd), service, intended, detail)
	if err != nil {
		return nil, err
	}
	return &recording{act: act, st: c, intended: intended, a: a, rec: rec}, nil
}

// end writes the outcome. One that cannot be written is said (the action has happened).
func (r *recording) end(ctx context.Context, res []rules.Result, failure error) {
	if r == nil {
		return
	}
	r.endBlobs(ctx, record.Outcomes(ctx, r.st, r.intended, res), failure)
}

func (r *recording) endBlobs(ctx context.Context, blobs []record.Blob, failure error) {
	if r == nil {
		return
	}
	var now time.Time
	if c, ok := r.st.(store.Container); ok {
		now, _ = c.Now(context.WithoutCancel(ctx))
	}
	if err := r.act.End(ctx, now, blobs, failure); err != nil {
		fmt.Fprintf(r.a.io.err, "deadletter: warning: the outcome of this action could not be recorded: %v\n", err)
	}
}

// infosOf is the listed blobs of names (a name not listed: its name alone).
func infosOf(snap *rules.Snapshot, names []string) []store.BlobInfo {
	out := make([]store.BlobInfo, len(names))
	for i, n := range names {
		out[i] = store.BlobInfo{Name: n}
		if j, ok := snap.Lookup(n); ok {
			out[i] = snap.Items[j].Info
		}
	}
	return out
}

// recordFor gives the dashboard the record: a recorder for its actions (none in read-only mode; the dashboard
// says what a shared record refused in its results, never on stderr under its screen) and L's history.
func (a *app) recordFor(opt *tui.Options, c store.Container) error {
	rec, err := a.recorder(c)
	if err != nil {
		return err
	}
	if rec != nil {
		rec.Warn = func(string) {}
		opt.Recorder = rec
	}
	opt.Me = a.who()
	opt.History = func(ctx context.Context) ([]record.Record, error) {
		h, err := a.history(ctx, c)
		return h.Records, err
	}
	return nil
}

// recordTwinScript records a change to a twin's script (twin script set) on the twin's container c: call it
// before the change is written — an error means it must not be — and the returned end with the change's error
// after. now is the twin's clock; change is deadletter's words for it (no payload).
func (a *app) recordTwinScript(ctx context.Context, cmd *cobra.Command, c store.Container, now time.Time, change string) (end func(error), err error) {
	rec, err := a.beginRecord(ctx, cmd, c, record.ActTwinScript, false, nil, now, change)
	if err != nil {
		return nil, err
	}
	return func(failure error) { rec.endBlobs(ctx, []record.Blob{}, failure) }, nil
}
