package replay

import (
	"context"
	"errors"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// Detail is everything about one blob: the show command and the dashboard's detail view.
type Detail struct {
	// Item is the blob with its summary filled in (Item.Summary is never nil once the body was read).
	rules.Item
	Body       []byte
	Payload    *rules.Payload
	Judgements []rules.Judgement
	// Reasons are the derived quarantine reasons (quarantine blobs only), aligned with Payload.Events.
	Reasons []rules.Verdict
	// Reached is how far each event had got (rules.Config.Reached: a quarantine copy's stripped counts are never
	// read as 0), aligned with Payload.Events.
	Reached []rules.Reached
	Preview *rules.Preview
	Restore *rules.RestorePlan
	// Now is the service time the blob was read at: its age and alerts are measured against it.
	Now time.Time
}

// At is the detail as of the service time now, its blob unchanged: its age, pane and what makes it urgent follow
// the clock without reading it again (a screen that stays open keeps counting down).
func (d *Detail) At(c rules.Config, now time.Time) *Detail {
	out := *d
	it := c.MakeItem(d.Info, now)
	out.Age, out.Pane, out.Now = it.Age, it.Pane, now
	return &out
}

// NotRestored is the result restoring this blob comes to without writing anything, as the restore itself
// reports it — refused where the plan refuses and force is off, or where there is nothing to write even with it;
// failed where the payload could not be read — and whether it comes to that at all. What a restore asks about is
// what it will write: the rest is this.
func (d *Detail) NotRestored(force bool) (rules.Result, bool) {
	r := rules.Result{Name: d.Name, Outcome: rules.OutcomeRefused, Reason: rules.Reason{Kind: rules.ReasonNotQuarantine}}
	switch {
	case d.ReadErr != "": // no plan: the payload could not be read
		r.Outcome, r.Reason = rules.OutcomeFailed, rules.Reason{Kind: rules.ReasonFailed, Err: d.ReadErr}
		return r, true
	case d.Restore == nil:
		return r, true
	}
	r.Resume = len(d.Restore.Resume)
	why, refused := d.Restore.RefusedWith(force)
	r.Reason = why
	return r, refused
}

// EventVerdicts is what to show for event i: the derived reason of a quarantine blob (derived is then true),
// the judged verdicts of a root or archived one, and none for a malformed payload, which is quarantined whole.
func (d *Detail) EventVerdicts(i int) (vs rules.VerdictSet, derived bool) {
	switch {
	case i < len(d.Reasons):
		return rules.SetOf(d.Reasons[i]), true
	case d.Payload.Malformed() || i >= len(d.Judgements):
		return 0, false
	}
	return d.Judgements[i].Verdicts, false
}

// Inspect reads one blob and works out everything the estate will do with it.
func (l *Loader) Inspect(ctx context.Context, name string) (*Detail, error) {
	b, err := l.Container.Read(ctx, name, store.MaxBlobBytes)
	if err != nil && !errors.Is(err, store.ErrTooLarge) {
		return nil, err
	}
	now := b.ServiceTime
	if now.IsZero() {
		if now, err = l.Container.Now(ctx); err != nil {
			return nil, err
		}
	}
	if tr, ok := l.Container.(store.TagReader); ok && b.Tags == nil {
		tags, terr := tr.Tags(ctx, name)
		if terr != nil && !errors.Is(terr, store.ErrForbidden) {
			return nil, terr // a reader without tags/read permission still sees the blob, without its ack
		}
		b.Tags = tags
	}
	d := &Detail{Item: l.Config.MakeItem(b.BlobInfo, now), Now: now}
	if rules.IsRoot(name) {
		if d.ArchivedTwin, d.QuarantineTwin, err = l.twins(ctx, name); err != nil {
			return nil, err
		}
	}
	if b.Body == nil && b.Size > 0 {
		d.ReadErr = rules.TooLargeToRead()
		d.Payload = &rules.Payload{Err: &rules.MalformedError{Offset: -1, Element: -1, Msg: d.ReadErr}}
		return d, nil
	}
	d.Body = b.Body
	d.Payload = rules.ParsePayload(b.Body)
	s := l.Config.Summarize(name, d.Payload)
	d.Summary = &s
	for _, ev := range d.Payload.Events {
		d.Judgements = append(d.Judgements, l.Config.Judge(ev.ID, ev.EventType))
		d.Reached = append(d.Reached, l.Config.Reached(name, ev.ID, ev.EventType))
		if d.Pane == rules.PaneQuarantine && !d.Payload.Malformed() {
			d.Reasons = append(d.Reasons, l.Config.QuarantineReason(ev.ID, ev.EventType))
		}
	}
	switch d.Pane {
	case rules.PaneLive, rules.PaneStranded:
		pv := l.Config.Plan(name, b.Body, d.Payload)
		d.Preview = &pv
	case rules.PaneQuarantine:
		rp, err := PlanRestoreIn(ctx, l.Container, l.Config, name, b.Body, d.Payload, b.LastModified)
		if err != nil {
			return nil, err
		}
		d.Restore = &rp
	}
	return d, nil
}

// twins looks up the replay function's copies of a root blob, which say whether it was already handled.
func (l *Loader) twins(ctx context.Context, root string) (archived, quarantine bool, err error) {
	a, q := rules.Twins(root)
	found := [2]bool{}
	for i, n := range [...]string{a, q} {
		_, err := l.Container.Stat(ctx, n)
		switch {
		case err == nil:
			found[i] = true
		case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalidName):
		default:
			return false, false, err
		}
	}
	return found[0], found[1], nil
}
