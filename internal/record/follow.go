package record

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// Followed is what became of one blob of a record since the action, as the container is now.
type Followed struct {
	Blob Blob
	// Name is the blob followed: the one the action wrote (a restore's copy, a repair's new blob), or the blob
	// itself.
	Name  string
	Where replay.Whereabouts
	// Fate says it in deadletter's words (present.Fate: the rule the dashboard's results use).
	Fate string
	// Err is why it could not be told ("" when it was).
	Err string
}

// Since is when a record's action started: its service time, else its wall time.
func (r Record) Since() time.Time {
	if r.Intent.Service != nil {
		return *r.Intent.Service
	}
	return r.Intent.Wall
}

// Blobs are the record's blobs as last written: the outcome's, or the intent's when it was interrupted.
func (r Record) Blobs() []Blob {
	switch {
	case r.Outcome == nil:
		return r.Intent.Blobs
	case r.OutcomePartsMissing == 0:
		return r.Outcome.Blobs
	}
	// An outcome not read whole: its blobs, then the intent's it does not tell of (their outcome unknown).
	told := make(map[string]bool, len(r.Outcome.Blobs))
	for _, b := range r.Outcome.Blobs {
		told[b.Name] = true
	}
	out := slices.Clip(r.Outcome.Blobs)
	for _, b := range r.Intent.Blobs {
		if !told[b.Name] {
			out = append(out, Blob{Name: b.Name, ETag: b.ETag})
		}
	}
	return out
}

// Follow says what became of each blob of a record, from the snapshot the caller listed (the container as it is
// now): replay.WhereIs, the one rule for it, asked of the snapshot. It says them one at a time, holding none: a
// million-blob drain's log prints each as it is followed.
func Follow(ctx context.Context, snap *rules.Snapshot, r Record) iter.Seq[Followed] {
	return func(yield func(Followed) bool) {
		since := r.Since()
		for _, b := range r.Blobs() {
			if !yield(followOne(ctx, snap, b, since)) {
				return
			}
		}
	}
}

// followOne is Follow of one blob of a record whose action began at since.
func followOne(ctx context.Context, snap *rules.Snapshot, b Blob, since time.Time) Followed {
	name := b.Name
	if b.Target != "" && rules.Outcome(b.Outcome).Done() {
		name = b.Target
	}
	f := Followed{Blob: b, Name: name}
	w, before, err := whereSince(ctx, snap, name, since)
	if err != nil {
		f.Err = err.Error()
		return f
	}
	pane := paneOf(snap, w, name)
	if w.Kind == replay.WhereHere && w.Name == "" {
		w.Name = name
	}
	f.Where, f.Fate = w, present.Fate(w, pane)
	if before {
		f.Fate += " — before this action reached it"
	}
	switch {
	case w.Kind == replay.WhereHere && strings.HasPrefix(name, rules.QuarantinePrefix):
		f.Fate = "still in quarantine"
	case w.Kind == replay.WhereHere && b.Outcome != "" && !rules.Outcome(b.Outcome).Done():
		f.Fate = "left as it was: still " + pane.String()
	}
	return f
}

// State is a record's state in a word: done (every blob done), partly (some left), failed (the action failed as a
// whole, or a blob did), interrupted (no outcome written).
func (r Record) State() string {
	if r.Outcome == nil || r.OutcomePartsMissing > 0 { // (an outcome not read whole: what came of the rest is not known)
		return "interrupted"
	}
	if r.Outcome.Error != "" {
		return "failed"
	}
	done, failed := 0, 0
	for _, b := range r.Outcome.Blobs {
		switch o := rules.Outcome(b.Outcome); {
		case o.Done():
			done++
		case o == rules.OutcomeFailed:
			failed++
		}
	}
	switch {
	case failed > 0:
		return "failed"
	case done == len(r.Outcome.Blobs):
		return "done"
	}
	return "partly"
}

// Mine reports whether the record is who's (the same user on the same host).
func (r Record) Mine(who Who) bool {
	return r.Intent.Who.User == who.User && r.Intent.Who.Host == who.Host
}

// Tally counts the outcome's blobs per outcome, in replay's order: "3 drained, 1 changed".
func (r Record) Tally() string {
	if r.Outcome == nil {
		return "interrupted: no outcome was written"
	}
	counts := map[string]int{}
	for _, b := range r.Outcome.Blobs {
		counts[b.Outcome]++
	}
	var parts []string
	for _, o := range rules.Outcomes {
		if n := counts[string(o)]; n > 0 {
			parts = append(parts, strconv.Itoa(n)+" "+string(o))
		}
	}
	if r.OutcomePartsMissing > 0 {
		parts = append(parts, "the outcome of the rest not read")
	}
	if len(parts) == 0 {
		return "no blob"
	}
	return strings.Join(parts, ", ")
}

// whereSince is where a blob of a record is now (replay.WhereIs, asked of the snapshot), counting copies written
// since the action. Not there and no copy since, a copy from before it means the replay (or a worker start, or
// another drain) took the blob before the action reached it — not a loss: that copy, and before.
func whereSince(ctx context.Context, snap *rules.Snapshot, name string, since time.Time) (w replay.Whereabouts, before bool, err error) {
	w, err = replay.WhereIs(ctx, replay.Listed(snap), store.BlobInfo{Name: name, LastModified: since}, since)
	if err != nil || w.Kind != replay.WhereDeleted {
		return w, false, err
	}
	w0, err0 := replay.WhereIs(ctx, replay.Listed(snap), store.BlobInfo{Name: name}, time.Time{})
	if err0 == nil && w0.Kind != replay.WhereDeleted && w0.Kind != replay.WhereHere {
		return w0, true, nil
	}
	return w, false, nil
}

// paneOf is the pane of the blob a record followed, as listed (live when it is not).
func paneOf(snap *rules.Snapshot, w replay.Whereabouts, name string) rules.Pane {
	if w.Kind != replay.WhereHere {
		return rules.PaneLive
	}
	if i, ok := snap.Lookup(w.Name); ok {
		return snap.Items[i].Pane
	}
	if i, ok := snap.Lookup(name); ok {
		return snap.Items[i].Pane
	}
	return rules.PaneLive
}

// Touches are the records' actions blob by blob, as an event's journey takes them (rules.Touch): what each did to
// which blob, when (service time), by whom.
func Touches(rs []Record) []rules.Touch {
	var out []rules.Touch
	for _, r := range rs {
		last := r.Last()
		for _, b := range r.Blobs() {
			out = append(out, rules.Touch{Blob: b.Name, Action: last.Action, Target: b.Target, At: r.Since(), By: r.Intent.Who.String(),
				Outcome: b.Outcome})
		}
	}
	return out
}

// Events follows the events of the records' blobs (issue 49: what became of an action's events, not only of its
// blob): each blob followed is read where it is now (once), its events' original ids taken, and one trace over the
// container follows them all, with every action of all (the whole record: a later restore is part of the story).
// The journeys come back per record blob (Key), in the blob's order. A screen runs its steps apart (Holders and
// PlanTrace in Update, ReadEvents and the plan's Run in commands) so its snapshot is never read off its goroutine.
func Events(ctx context.Context, l *replay.Loader, snap *rules.Snapshot, rs, all []Record) (map[Key][]rules.Journey, error) {
	ev, err := ReadEvents(ctx, l, Holders(ctx, snap, rs))
	if err != nil {
		return nil, err
	}
	js, _, err := l.PlanTrace(snap, ev.Originals).Run(ctx, Touches(all))
	if err != nil {
		return nil, err
	}
	return ev.Journeys(js), nil
}

// Holder is a blob of a record and where its events are now.
type Holder struct {
	Key  Key
	Name string
}

// Holders are the records' blobs with where each is now (Follow: the snapshot's word, no call to the container).
func Holders(ctx context.Context, snap *rules.Snapshot, rs []Record) []Holder {
	var out []Holder
	for _, r := range rs {
		for f := range Follow(ctx, snap, r) {
			if name := f.Where.Name; name != "" && f.Where.Kind != replay.WhereDeleted {
				out = append(out, Holder{Key{r.Intent.ID, f.Blob.Name}, name})
			} // (nothing of it is left to read its events from)
		}
	}
	return out
}

// HeldEvents are the original ids of the events each record blob holds, and all of them, each once.
type HeldEvents struct {
	ByKey     map[Key][]string
	Originals []string
}

// ReadEvents reads each holder's blob (once a name) for its events' original ids.
func ReadEvents(ctx context.Context, l *replay.Loader, holds []Holder) (HeldEvents, error) {
	ev := HeldEvents{ByKey: map[Key][]string{}}
	seen := map[string]bool{}
	read := map[string][]string{}
	for _, h := range holds {
		evs, ok := read[h.Name]
		if !ok {
			b, err := l.Container.Read(ctx, h.Name, store.MaxBlobBytes)
			if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrTooLarge) {
				return ev, err
			}
			if err == nil {
				for _, e := range rules.ParsePayload(b.Body).Events {
					evs = append(evs, rules.EventOf(e.ID, l.Config.Separator))
				}
			}
			read[h.Name] = evs
		}
		for _, o := range evs {
			if !slices.Contains(ev.ByKey[h.Key], o) {
				ev.ByKey[h.Key] = append(ev.ByKey[h.Key], o)
			}
			if !seen[o] {
				seen[o] = true
				ev.Originals = append(ev.Originals, o)
			}
		}
	}
	return ev, nil
}

// Journeys sorts journeys (of ev.Originals) back to the record blobs holding their events.
func (ev HeldEvents) Journeys(js []rules.Journey) map[Key][]rules.Journey {
	byID := map[string]rules.Journey{}
	for _, j := range js {
		byID[j.Original] = j
	}
	out := map[Key][]rules.Journey{}
	for k, os := range ev.ByKey {
		for _, o := range os {
			out[k] = append(out[k], byID[o])
		}
	}
	return out
}

// Key names one blob of one record.
type Key struct{ Record, Blob string }
