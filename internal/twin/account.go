package twin

import (
	"context"
	"fmt"
	"sort"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// whereabouts is where every outstanding event is: on its way (a delivery Event Grid owes, or a dead letter
// waiting for its blob) or in blobs — dead letters at the root, quarantine copies.
type whereabouts struct {
	inFlight map[string]bool
	inBlobs  map[string][]string
}

func (tw *Twin) whereabouts(ctx context.Context) (whereabouts, error) {
	w := whereabouts{inFlight: map[string]bool{}, inBlobs: map[string][]string{}}
	sep := tw.cfg.Separator
	for _, p := range tw.st.Queue {
		if p.Event != nil {
			w.inFlight[eventKey(p.Event.ID, sep)] = true
		}
	}
	for _, batch := range tw.st.Batches {
		for _, dl := range batch {
			w.inFlight[eventKey(dl.ID, sep)] = true
		}
	}
	l, err := store.ListAll(ctx, tw.dir)
	if err != nil {
		return w, err
	}
	for _, bi := range l.Blobs {
		if isArchived(bi.Name) {
			continue // a record of what was republished: those events are on their way or delivered
		}
		b, err := tw.dir.Read(ctx, bi.Name, store.MaxBlobBytes)
		if err != nil {
			return w, err
		}
		for _, id := range eventIDs(b.Body, sep) {
			w.inBlobs[id] = append(w.inBlobs[id], bi.Name)
		}
	}
	return w, nil
}

// Account is where every event the twin ever published is: the invariant is that the counts add up to what was
// published and no outstanding event is nowhere.
type Account struct {
	Published  int      `json:"published"`
	Delivered  int      `json:"delivered"`
	OnTheirWay int      `json:"onTheirWay"` // deliveries Event Grid still owes
	InBlobs    int      `json:"inBlobs"`    // dead letters at the root and quarantine copies
	Lost       int      `json:"lost"`
	Nowhere    []string `json:"nowhere"` // outstanding events found nowhere: the invariant broken
}

// Balanced reports whether every published event is accounted for.
func (a Account) Balanced() bool {
	return len(a.Nowhere) == 0 && a.Published == a.Delivered+a.OnTheirWay+a.InBlobs+a.Lost
}

// Check accounts for every event the twin ever published.
func (tw *Twin) Check(ctx context.Context) (Account, error) {
	w, err := tw.whereabouts(ctx)
	if err != nil {
		return Account{}, err
	}
	a := Account{Published: tw.st.Totals.Published, Delivered: tw.st.Totals.Delivered, Lost: tw.st.Totals.Lost, Nowhere: []string{}}
	for id := range tw.st.Outstanding {
		switch {
		case w.inFlight[id]:
			a.OnTheirWay++
		case len(w.inBlobs[id]) > 0:
			a.InBlobs++
		default:
			a.Nowhere = append(a.Nowhere, id)
		}
	}
	sort.Strings(a.Nowhere)
	return a, nil
}

// String says the account in one line.
func (a Account) String() string {
	s := fmt.Sprintf("%d published = %d delivered + %d on their way + %d in blobs + %d lost", a.Published, a.Delivered, a.OnTheirWay, a.InBlobs, a.Lost)
	if len(a.Nowhere) > 0 {
		s += fmt.Sprintf("; %d NOWHERE", len(a.Nowhere))
	}
	return s
}

// eventKey is the event an id names, for the account (replay.EventOf).
func eventKey(id, sep string) string { return rules.EventOf(id, sep) }
