package replay

import (
	"context"
	"errors"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"golang.org/x/sync/errgroup"
)

// What restore and ack would do with a batch of blobs, answered before anything is written: the command line's
// question and the dashboard's dialogs present these, and neither works a rule out itself. (A drain's is
// Forecast.)

// RestoreEntry is one quarantine blob as a restore would take it.
type RestoreEntry struct {
	Name string
	// Detail is the blob read and its restore planned (nil when it could not be read; Left then says why).
	Detail *Detail
	// Left is what the restore comes to for it without writing anything — refused, could not be read, not found
	// — with Outcome empty when the restore will write it.
	Left rules.Result
	// Forceable: refused without --force, restored with it.
	Forceable bool
}

// Writes reports whether the restore writes a copy of this blob.
func (e *RestoreEntry) Writes() bool { return e.Left.Outcome == "" }

// RestorePreview is a restore of named quarantine blobs before it runs.
type RestorePreview struct {
	Entries []RestoreEntry
	Force   bool
}

// PreviewRestore reads each blob (as listed) and plans its restore, as the restore itself will (Inspect, then the
// same refusals), at most DefaultConcurrency at a time. A blob that cannot be read is an entry too; one that is
// gone since it was listed because it was restored says so (already restored as …), not merely not found.
func (l *Loader) PreviewRestore(ctx context.Context, blobs []store.BlobInfo, force bool) *RestorePreview {
	p := &RestorePreview{Entries: make([]RestoreEntry, len(blobs)), Force: force}
	var g errgroup.Group
	g.SetLimit(rules.DefaultConcurrency)
	for i, bi := range blobs {
		g.Go(func() error {
			e := &p.Entries[i]
			e.Name = bi.Name
			d, err := l.Inspect(ctx, bi.Name)
			if err != nil {
				e.Left = UnreadRestore(ctx, bi.Name, err)
				if errors.Is(err, store.ErrNotFound) && !bi.LastModified.IsZero() {
					if w, werr := WhereIs(ctx, l.Container, bi, time.Time{}); werr == nil && w.Kind == WhereRestored {
						e.Left = rules.Result{Name: bi.Name, Outcome: rules.OutcomeGone, Target: w.Name, Reason: rules.Reason{Kind: rules.ReasonAlreadyRestored, Name: w.Name}}
					}
				}
				return nil
			}
			e.Detail = d
			return nil
		})
	}
	g.Wait()
	p.SetForce(force)
	return p
}

// SetForce decides every entry again with --force on or off.
func (p *RestorePreview) SetForce(force bool) {
	p.Force = force
	for i := range p.Entries {
		e := &p.Entries[i]
		if e.Detail == nil {
			continue
		}
		unforced, refused := e.Detail.NotRestored(false)
		forced, stillRefused := e.Detail.NotRestored(true)
		e.Forceable = refused && !stillRefused
		switch {
		case stillRefused:
			e.Left = forced
		case refused && !force:
			e.Left = unforced
		default:
			e.Left = rules.Result{}
		}
	}
}

// Keep drops the entries whose blob keep refuses (restore --all's filters, on what was read); unreadable ones stay.
func (p *RestorePreview) Keep(keep func(*Detail) bool) {
	out := p.Entries[:0]
	for _, e := range p.Entries {
		if e.Detail == nil || keep(e.Detail) {
			out = append(out, e)
		}
	}
	p.Entries = out
}

// Writes are the names the restore will write, in the order given.
func (p *RestorePreview) Writes() []string {
	var out []string
	for i := range p.Entries {
		if p.Entries[i].Writes() {
			out = append(out, p.Entries[i].Name)
		}
	}
	return out
}

// Resuming are the copies the restore writes that set events moving again (each with its summary): whose
// handlers the restored events go to.
func (p *RestorePreview) Resuming() []rules.Item {
	var out []rules.Item
	for i := range p.Entries {
		if e := &p.Entries[i]; e.Writes() && e.Detail != nil && e.Detail.Restore != nil && len(e.Detail.Restore.Resume) > 0 {
			out = append(out, e.Detail.Item)
		}
	}
	return out
}

// Left are the results of the blobs the restore will not write.
func (p *RestorePreview) Left() []rules.Result {
	var out []rules.Result
	for i := range p.Entries {
		if !p.Entries[i].Writes() {
			out = append(out, p.Entries[i].Left)
		}
	}
	return out
}

// Previewed holds the ETag each blob had when its plan was read: the restore skips a copy rewritten since.
func (p *RestorePreview) Previewed() map[string]string {
	out := make(map[string]string, len(p.Entries))
	for _, e := range p.Entries {
		if e.Detail != nil {
			out[e.Name] = e.Detail.ETag
		}
	}
	return out
}

// RestoreCounts add a preview up.
type RestoreCounts struct {
	// Writes, Refused and Unreadable partition the entries (Unreadable: not found or could not be read).
	Writes, Refused, Unreadable int
	// Forceable counts the refused-without-force; Lingering the forced ones whose original is still at the root.
	Forceable, Lingering int
	// Resume is how many events the written copies set moving again.
	Resume int
}

// Counts adds the preview up.
func (p *RestorePreview) Counts() RestoreCounts {
	var c RestoreCounts
	for i := range p.Entries {
		e := &p.Entries[i]
		if e.Forceable {
			c.Forceable++
		}
		switch {
		case e.Writes():
			c.Writes++
			c.Resume += len(e.Detail.Restore.Resume)
			if e.Detail.Restore.Lingers != "" {
				c.Lingering++
			}
		case e.Left.Outcome == rules.OutcomeRefused:
			c.Refused++
		default:
			c.Unreadable++
		}
	}
	return c
}
