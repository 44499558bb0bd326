package replay

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// Whereabouts says where a blob that was there is now — what a screen says after an action, and what watch
// checks before it calls an expiring blob lost.
type Whereabouts struct {
	Kind WhereKind
	// Name is where its events went: the replay's copy, the restored copy, or that copy's own copy.
	Name string
	// At is when that copy was written (or, WhereHere, the blob last was): when it went there.
	At time.Time
}

// Statter is what WhereIs looks in: a container (a call per name) or the snapshot a screen already holds.
type Statter interface {
	Stat(ctx context.Context, name string) (store.BlobInfo, error)
}

// Listed is a snapshot as a Statter: a blob as the snapshot last listed it (store.ErrNotFound when it is not
// there), so a screen follows where blobs went without a call to the container.
func Listed(s *rules.Snapshot) Statter { return listed{s} }

type listed struct{ s *rules.Snapshot }

func (l listed) Stat(_ context.Context, name string) (store.BlobInfo, error) {
	if i, ok := l.s.Lookup(name); ok {
		return l.s.Items[i].Info, nil
	}
	return store.BlobInfo{}, store.ErrNotFound
}

// WhereKind is what became of a blob.
type WhereKind uint8

// The whereabouts of a blob.
const (
	// WhereHere: the blob is where it was (it may have changed).
	WhereHere WhereKind = iota
	// WhereArchived: a root blob the replay took and republished; Name is its archived/ copy.
	WhereArchived
	// WhereQuarantined: a root blob the replay took and refused; Name is its quarantine/ copy.
	WhereQuarantined
	// WhereRestored: a quarantine copy restored to the root; Name is the restored copy (or, once the replay took
	// that, its archived/ or quarantine/ copy).
	WhereRestored
	// WhereDeleted: nothing of it is left — the lifecycle rule, or someone by hand.
	WhereDeleted
)

// WhereIs looks for a blob listed (or read) as bi: still there, taken by the replay, restored, or gone without a
// trace. Copies count only if written at or after since (zero: whenever) — an older quarantine copy holds an
// earlier cycle's refused events, not necessarily these. It is the one rule for "what became of this blob": the
// detail, the results of an action and show ask it, of the container or of the snapshot on screen.
func WhereIs(ctx context.Context, c Statter, bi store.BlobInfo, since time.Time) (Whereabouts, error) {
	type look struct {
		name string
		kind WhereKind
	}
	looks := []look{{bi.Name, WhereHere}}
	switch {
	case strings.HasPrefix(bi.Name, rules.QuarantinePrefix):
		base, err := rules.RestoreTarget(bi.Name, bi.LastModified)
		if err == nil {
			for n := 1; n <= 3; n++ { // the restore's name, and its first alternatives (a name taken by another body)
				target := base
				if n > 1 {
					target = rules.AlternateTarget(base, n)
				}
				a, q := rules.Twins(target)
				looks = append(looks, look{target, WhereRestored}, look{a, WhereRestored}, look{q, WhereRestored})
			}
		}
	case rules.IsRoot(bi.Name):
		a, q := rules.Twins(bi.Name)
		looks = append(looks, look{a, WhereArchived}, look{q, WhereQuarantined})
	}
	since = since.Truncate(time.Second) // (Last-Modified has whole seconds)
	for _, l := range looks {
		st, err := c.Stat(ctx, l.name)
		switch {
		case err == nil:
			if l.kind != WhereHere && st.LastModified.Before(since) {
				continue
			}
			if l.kind == WhereRestored {
				if from := rules.MarksOf(st.Metadata).RestoredFrom; from != "" && from != bi.Name {
					continue // another copy's restore took that name
				}
			}
			return Whereabouts{Kind: l.kind, Name: l.name, At: st.LastModified}, nil
		case !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrInvalidName):
			return Whereabouts{}, err
		}
	}
	return Whereabouts{Kind: WhereDeleted}, nil
}
