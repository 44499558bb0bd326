package replay

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"golang.org/x/sync/errgroup"
)

// Traced is what trace found for what was asked: the journey of one event, or of each event of one blob.
type Traced struct {
	Asked string
	// Blob is the blob asked for ("" when an event id was); Gone says it is not in the container (only the record
	// remembers it, and Touches are what the record says of it).
	Blob    string
	Gone    bool
	Touches []rules.Touch
	// Journeys are the events' journeys, in the blob's order (an event repeated in it once).
	Journeys []rules.Journey
	// Read is how many payloads were read to find them (those the index could not rule out).
	Read int
	// Malformed is the blob's payload error when it breaks the schema (its events, if any, a best-effort reading).
	Malformed string
	// Fragment: the blob was picked out by a piece of its name (an event with exactly that id is --event's).
	Fragment bool
}

// Trace follows events through the container. asked is a blob — its name, URL, GUID or a fragment that picks out
// one, as show takes it — or else an event id, with or without its count (event: always an id). Every blob that
// may hold the events is read — the snapshot's index (Summary.IDs) rules out the ones already read that cannot —
// and only the sightings of the events asked for are kept, so a trace over a million blobs holds what it found,
// not what it read. touches are the record's actions (record.Touches).
func (l *Loader) Trace(ctx context.Context, snap *rules.Snapshot, asked, container string, event bool, touches []rules.Touch) (*Traced, error) {
	t := &Traced{Asked: asked}
	var originals []string
	lk := resolveIn(snap, container, []string{asked}, AnyBlob)[0]
	if one := oneDeadLetter(lk.candidates); one != "" && lk.more == 0 {
		lk.name, lk.candidates = one, nil
	}
	switch {
	case event:
	case len(lk.candidates) > 0:
		return nil, lk.err()
	case lk.name != "":
		if err := l.traceBlob(ctx, t, lk.name, &originals); err != nil {
			return nil, err
		}
		t.Fragment = !isFullName(asked)
	case lk.fullName:
		name := nameFromURL(asked, container)
		if one := copyOf(snap, name); one != "" {
			if err := l.traceBlob(ctx, t, one, &originals); err != nil {
				return nil, err
			}
			break
		}
		if tt := touchesOf(name, touches); len(tt) > 0 {
			t.Blob, t.Gone, t.Touches = name, true, tt
			return t, nil
		}
		// (no blob and no record of one by that name: an event id may hold a /)
	}
	if t.Blob == "" {
		originals = []string{rules.EventOf(asked, l.Config.Separator)}
	}
	if len(originals) == 0 {
		return t, nil
	}
	plan := l.PlanTrace(snap, originals)
	js, read, err := plan.Run(ctx, touches)
	if err != nil {
		return nil, err
	}
	t.Read += read
	for _, j := range js {
		if len(j.Passes) > 0 { // (an id no blob holds has no journey to tell)
			t.Journeys = append(t.Journeys, j)
		}
	}
	return t, nil
}

// traceBlob reads the blob a trace was asked for and takes its events' original ids (each once).
func (l *Loader) traceBlob(ctx context.Context, t *Traced, name string, originals *[]string) error {
	t.Blob = name
	b, err := l.Container.Read(ctx, name, store.MaxBlobBytes)
	if err != nil {
		return err
	}
	t.Read++
	p := rules.ParsePayload(b.Body)
	if p.Malformed() {
		t.Malformed = p.Err.Error()
	}
	seen := map[string]bool{}
	for _, ev := range p.Events {
		if o := rules.EventOf(ev.ID, l.Config.Separator); !seen[o] {
			seen[o] = true
			*originals = append(*originals, o)
		}
	}
	return nil
}

// copyOf is the replay's copy of a root blob that is gone, holding every event of it: its archived copy, else its
// quarantine copy; "" when neither is listed.
func copyOf(snap *rules.Snapshot, root string) string {
	if !rules.IsRoot(root) {
		return ""
	}
	a, q := rules.Twins(root)
	for _, n := range []string{a, q} {
		if _, ok := snap.Lookup(n); ok {
			return n
		}
	}
	return ""
}

// TracePlan is a trace's reads, picked from a snapshot: the blobs that may hold the events (PlanTrace). Picking
// is quick and touches the snapshot, so a screen does it in Update; Run does the reads, in a command.
type TracePlan struct {
	l         *Loader
	originals []string
	want      map[string]bool
	blobs     []traceBlob
	now       time.Time
	// Unread counts the blobs a plan of the index alone (PlanTraceIndexed) left out: not read yet, so a pass in
	// one of them is not told.
	Unread int
}

type traceBlob struct {
	info  *store.BlobInfo // (the snapshot's own: a plan over a million blobs copies none)
	crash bool            // the blob's summary says the replay throws on it
	known bool            // its summary was read (else the read finds out)
}

// PlanTrace picks the blobs of snap that may hold the events with these original ids (rules.EventOf: parsed
// once — an original may itself end in |n).
func (l *Loader) PlanTrace(snap *rules.Snapshot, originals []string) *TracePlan {
	return l.planTrace(snap, originals, false)
}

// PlanTraceIndexed is PlanTrace over the blobs already read alone: a screen whose hydration is still reading the
// rest downloads nothing twice (the plan counts what it left out: Unread).
func (l *Loader) PlanTraceIndexed(snap *rules.Snapshot, originals []string) *TracePlan {
	return l.planTrace(snap, originals, true)
}

func (l *Loader) planTrace(snap *rules.Snapshot, originals []string, indexed bool) *TracePlan {
	p := &TracePlan{l: l, want: map[string]bool{}, now: snap.Now}
	hashes := map[uint32]bool{}
	for _, o := range originals {
		if !p.want[o] {
			p.originals = append(p.originals, o)
		}
		p.want[o], hashes[rules.IDHash(o)] = true, true
	}
	for _, it := range snap.Items {
		if indexed && it.Summary == nil {
			p.Unread++
			continue
		}
		if it.Refused != "" || !it.Summary.MayHold(hashes) {
			continue
		}
		p.blobs = append(p.blobs, traceBlob{info: &it.Info, crash: it.Summary != nil && it.Summary.CrashDepth > 0, known: it.Summary != nil})
	}
	return p
}

// Run reads the blobs picked and follows each event: its journey (in the order asked), and how many payloads
// were read.
func (p *TracePlan) Run(ctx context.Context, touches []rules.Touch) ([]rules.Journey, int, error) {
	sightings, read, err := p.l.sightings(ctx, p.blobs, p.want)
	if err != nil {
		return nil, read, err
	}
	out := make([]rules.Journey, 0, len(p.originals))
	for _, o := range p.originals {
		out = append(out, p.l.Config.Journey(o, sightings[o], touches, p.now))
	}
	return out, read, nil
}

// touchesOf are the record's actions on one blob, or on a copy of it.
func touchesOf(name string, touches []rules.Touch) []rules.Touch {
	var out []rules.Touch
	for _, t := range touches {
		if t.Blob == name || t.Target == name {
			out = append(out, t)
		}
	}
	return out
}

// sightings reads the blobs picked and returns each wanted event's copies.
func (l *Loader) sightings(ctx context.Context, blobs []traceBlob, want map[string]bool) (map[string][]rules.Sighting, int, error) {
	var (
		mu   sync.Mutex
		out  = map[string][]rules.Sighting{}
		read int
	)
	n := l.Concurrency
	if n <= 0 {
		n = rules.DefaultConcurrency
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(n)
	for _, tb := range blobs {
		g.Go(func() error {
			b, err := l.Container.Read(ctx, tb.info.Name, store.MaxBlobBytes)
			switch {
			case errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrTooLarge):
				return nil // gone since the listing, or too large for anyone to read: it holds nothing to follow
			case err != nil:
				return err
			}
			p := rules.ParsePayload(b.Body)
			crash := tb.crash
			if !tb.known && rules.IsRoot(tb.info.Name) {
				s := l.Config.Summarize(tb.info.Name, p)
				crash = s.CrashDepth > 0
			}
			md := b.Metadata
			if md == nil {
				md = tb.info.Metadata
			}
			mu.Lock()
			defer mu.Unlock()
			read++
			for _, ev := range p.Events {
				o := rules.EventOf(ev.ID, l.Config.Separator)
				if !want[o] {
					continue
				}
				out[o] = append(out[o], rules.Sighting{Blob: tb.info.Name, LastModified: b.LastModified, Marks: rules.MarksOf(md),
					Index: ev.Index, ID: ev.ID, EventType: ev.EventType, DeadLetterReason: ev.DeadLetterReason,
					LastDeliveryOutcome: ev.LastDeliveryOutcome, LastHTTPStatus: ev.LastHTTPStatusCode,
					LastTry: ev.LastDeliveryAttemptTime, Malformed: p.Malformed(), Crash: crash})
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, read, err
	}
	return out, read, nil
}

// oneDeadLetter picks, of names that are all one dead letter (X, archived/X, quarantine/X), the one holding every
// event of it: X while it is there, else its archived copy, else the quarantine copy; "" when they are not one.
func oneDeadLetter(names []string) string {
	if len(names) < 2 {
		return ""
	}
	root := strings.TrimPrefix(strings.TrimPrefix(names[0], rules.ArchivedPrefix), rules.QuarantinePrefix)
	a, q := rules.Twins(root)
	for _, n := range names {
		if n != root && n != a && n != q {
			return ""
		}
	}
	for _, pick := range []string{root, a, q} {
		if slices.Contains(names, pick) {
			return pick
		}
	}
	return ""
}
