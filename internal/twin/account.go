package twin

import (
	"context"
	"fmt"
	"sort"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// whereabouts is where the outstanding events are: on their way (a delivery Event Grid owes, or a dead letter
// waiting for its blob) or in blobs — dead letters at the root, quarantine copies. Only outstanding events are
// marked: those kept by id in maps, those of the base (baseEvents) in bitmaps, so a million blobs cost a bit each.
type whereabouts struct {
	tw                    *Twin
	inFlight, inBlobs     map[string]bool
	baseFlight, baseBlobs bitmap
}

// mark notes an event (its original id) on its way or in a blob, when it is outstanding.
func (w *whereabouts) mark(id string, flight bool) {
	if w.tw.st.Outstanding[id] {
		if flight {
			w.inFlight[id] = true
		} else {
			w.inBlobs[id] = true
		}
		return
	}
	if i := w.tw.st.base.index(idHash(id)); i >= 0 {
		if flight {
			w.baseFlight.set(i)
		} else {
			w.baseBlobs.set(i)
		}
	}
}

// somewhere reports whether an event was found on its way or in a blob.
func (w *whereabouts) somewhere(id string) bool {
	if w.inFlight[id] || w.inBlobs[id] {
		return true
	}
	i := w.tw.st.base.index(idHash(id))
	return i >= 0 && (w.baseFlight.get(i) || w.baseBlobs.get(i))
}

// scanWorkers is how many blobs whereabouts reads at once.
const scanWorkers = 8

func (tw *Twin) whereabouts(ctx context.Context) (*whereabouts, error) {
	n := tw.st.base.len()
	w := &whereabouts{tw: tw, inFlight: map[string]bool{}, inBlobs: map[string]bool{}, baseFlight: newBitmap(n), baseBlobs: newBitmap(n)}
	sep := tw.cfg.Separator
	for _, p := range tw.st.Queue {
		if p.Event != nil {
			w.mark(eventKey(p.Event.ID, sep), true)
		}
	}
	for _, batch := range tw.st.Batches {
		for _, dl := range batch {
			w.mark(eventKey(dl.ID, sep), true)
		}
	}
	// Every blob but the archived is read, a few at once, page by page of the listing.
	err := tw.readBlobs(ctx, func(bi store.BlobInfo) bool {
		return !isArchived(bi.Name) // a record of what was republished: those events are on their way or delivered
	}, func(ids []string) {
		for _, id := range ids {
			w.mark(id, false)
		}
	})
	return w, err
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
	// RepublishedTwice are events the replay sent to their handlers a second time, after a start of the Function
	// App re-uploaded a blob it had handled already (counted among the delivered or on their way: the same events).
	RepublishedTwice int `json:"republishedTwice"`
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
	a := Account{Published: tw.st.Totals.Published, Delivered: tw.st.Totals.Delivered, Lost: tw.st.Totals.Lost, Nowhere: []string{},
		RepublishedTwice: tw.st.Totals.RepublishedTwice}
	for id := range tw.st.Outstanding {
		switch {
		case w.inFlight[id]:
			a.OnTheirWay++
		case w.inBlobs[id]:
			a.InBlobs++
		default:
			a.Nowhere = append(a.Nowhere, id)
		}
	}
	for i, h := range tw.baseHashes() {
		switch {
		case tw.st.BaseGone.get(i):
		case w.baseFlight.get(i):
			a.OnTheirWay++
		case w.baseBlobs.get(i):
			a.InBlobs++
		default:
			a.Nowhere = append(a.Nowhere, baseName(h))
		}
	}
	sort.Strings(a.Nowhere)
	return a, nil
}

// String says the account in one line.
func (a Account) String() string {
	s := fmt.Sprintf("%d published = %d delivered + %d on their way + %d in blobs + %d lost", a.Published, a.Delivered, a.OnTheirWay, a.InBlobs, a.Lost)
	if a.RepublishedTwice > 0 {
		s += fmt.Sprintf("; %d republished a second time by a start of the Function App", a.RepublishedTwice)
	}
	if len(a.Nowhere) > 0 {
		s += fmt.Sprintf("; %d NOWHERE", len(a.Nowhere))
	}
	return s
}

// eventKey is the event an id names, for the account (replay.EventOf).
func eventKey(id, sep string) string { return rules.EventOf(id, sep) }
