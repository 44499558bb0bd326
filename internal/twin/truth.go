package twin

import (
	"context"
	"slices"
	"strings"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// Truth is what really became of one event, as the twin that simulated it knows: what deadletter can only infer
// from the container (an event's journey), said by the one that was there.
type Truth struct {
	ID string `json:"id"`
	// State is one of: on its way (a delivery Event Grid owes, or a dead letter waiting for its blob), in a dead
	// letter (a root blob), quarantined (a quarantine copy), delivered, lost, nowhere (the account broken).
	State string `json:"state"`
	// Attempt is the count the event carries on its way or in its blob (the copy's, for a quarantined one).
	Attempt rules.Attempt `json:"attempt"`
	// Blobs are the root and quarantine blobs holding it.
	Blobs []string `json:"blobs,omitempty"`
}

// The states of Truth.
const (
	TruthOnItsWay    = "on its way"
	TruthDeadLetter  = "in a dead letter"
	TruthQuarantined = "quarantined"
	TruthDelivered   = "delivered"
	TruthLost        = "lost"
	TruthNowhere     = "nowhere"
)

// Truth says what became of each event asked for (original ids, or ids with their count); with none, of every
// event still outstanding, and every one it counted lost. An id the twin never published reads as delivered: ask
// about ids you saw.
func (tw *Twin) Truth(ctx context.Context, ids []string) ([]Truth, error) {
	sep := tw.cfg.Separator
	want := map[string]*Truth{}
	var order []string
	ask := func(id string) {
		if o := eventKey(id, sep); want[o] == nil {
			want[o] = &Truth{ID: o}
			order = append(order, o)
		}
	}
	for _, id := range ids {
		ask(id)
	}
	all := len(ids) == 0
	if all {
		for _, id := range sortedKeys(tw.st.Outstanding) {
			ask(id)
		}
		for _, id := range sortedKeys(tw.st.LostIDs) { // (the ones that matter most)
			ask(id)
		}
	}
	tw.onTheirWay(want)
	if err := tw.inBlobs(ctx, want); err != nil {
		return nil, err
	}
	out := make([]Truth, 0, len(order))
	for _, o := range order {
		t := want[o]
		slices.Sort(t.Blobs)
		switch {
		case t.State != "":
		case tw.st.LostIDs[o]:
			t.State = TruthLost
		case tw.outstanding(o):
			t.State = TruthNowhere
		default:
			t.State = TruthDelivered
		}
		out = append(out, *t)
	}
	return out, nil
}

// onTheirWay marks the events asked for that Event Grid still owes a delivery, or holds as a dead letter waiting
// for its blob.
func (tw *Twin) onTheirWay(want map[string]*Truth) {
	sep := tw.cfg.Separator
	for _, p := range tw.st.Queue {
		if p.Event == nil {
			continue
		}
		if t := want[eventKey(p.Event.ID, sep)]; t != nil {
			t.State, t.Attempt = TruthOnItsWay, rules.ParseID(p.Event.ID, sep).Attempt
		}
	}
	for _, sub := range sortedKeys(tw.st.Batches) {
		for _, dl := range tw.st.Batches[sub] {
			if t := want[eventKey(dl.ID, sep)]; t != nil {
				t.State, t.Attempt = TruthOnItsWay, rules.ParseID(dl.ID, sep).Attempt
			}
		}
	}
}

// inBlobs reads the root and quarantine blobs for the events asked for: a root blob is where one waits, a
// quarantine copy where one was refused.
func (tw *Twin) inBlobs(ctx context.Context, want map[string]*Truth) error {
	sep := tw.cfg.Separator
	return tw.readBlobsNamed(ctx, func(bi store.BlobInfo) bool { return !isArchived(bi.Name) }, func(name string, ids []string) {
		for _, id := range ids {
			t := want[eventKey(id, sep)]
			if t == nil {
				continue
			}
			if !slices.Contains(t.Blobs, name) {
				t.Blobs = append(t.Blobs, name)
			}
			if t.State == TruthOnItsWay {
				continue
			}
			state := TruthDeadLetter
			if strings.HasPrefix(name, rules.QuarantinePrefix) {
				state = TruthQuarantined
			}
			if t.State == "" || state == TruthDeadLetter {
				t.State, t.Attempt = state, rules.ParseID(id, sep).Attempt
			}
		}
	})
}
