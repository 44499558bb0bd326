package rules

import (
	"time"

	"github.com/deadletter/deadletter/internal/blob"
)

// Item is one blob of a snapshot: its properties, pane and clock facts, and its payload summary once read. A
// snapshot holds one for every listed blob — a million of them at scale — so nothing derivable is stored (when
// the lifecycle rule deletes the blob is Config.ExpiresAt of LastModified, answered by AlertsOf) and the small
// fields sit together.
type Item struct {
	blob.Info
	Age time.Duration
	// Parsed is what the name says.
	Parsed BlobName
	// Summary is nil until the payload has been read.
	Summary *Summary
	// ReadErr says why the payload could not be read (too large, gone, forbidden, refused).
	ReadErr string
	Pane    Pane
	// ArchivedTwin and QuarantineTwin say that the replay function's copy of this root blob exists: the replay
	// handled it and only the best-effort delete failed (see Config.AlertsOf).
	ArchivedTwin, QuarantineTwin bool
	// ReadFailed is set when the payload could not be read (network, permissions, a refused entry, over the size
	// limit): what it holds is unknown, so a check cannot call the container healthy.
	ReadFailed bool
}

// MakeItem classifies one listed blob against the service clock now.
func (c Config) MakeItem(bi blob.Info, now time.Time) Item {
	age := now.Sub(bi.LastModified)
	it := Item{Info: bi, Pane: c.Classify(bi.Name, age), Age: age, Parsed: ParseBlobName(bi.Name)}
	if bi.Refused != "" {
		it.ReadErr, it.ReadFailed = "refused: "+bi.Refused, true
	}
	return it
}

// Snapshot is one refresh of the container: the listing, classified against the service clock, with payload
// summaries filled in as they are read. A listing arrives page by page; Merge takes each page and Sweep ends
// it, so a screen can show the first rows of a million-blob container at once.
type Snapshot struct {
	Container string
	// Now is the service's clock at the listing; every age is measured against it.
	Now   time.Time
	Items []*Item

	index nameIndex // name → position in Items
	seen  []uint32  // the listing generation that last saw each item
	gen   uint32
}

// Since is the service's time now, as far as the snapshot can tell without asking: its Now plus the time gone by
// on the local clock since listedAt, the local time that listing was read at.
func (s *Snapshot) Since(listedAt, local time.Time) time.Time { return s.Now.Add(local.Sub(listedAt)) }

// NewSnapshot is an empty snapshot of the named container.
func NewSnapshot(container string) *Snapshot {
	return &Snapshot{Container: container}
}

// Begin starts a new listing over the snapshot: items the listing does not see again are dropped by Sweep.
func (s *Snapshot) Begin() { s.gen++ }

// Merge takes one page of a listing: new blobs are appended, blobs already held are updated in place (keeping
// their summary when the ETag is unchanged), and the replay's twin copies are linked both ways. It returns the
// positions of the items added, so a table can take just those.
func (s *Snapshot) Merge(items []Item, now time.Time) (added []int) {
	s.indexed()
	if now.After(s.Now) {
		s.Now = now
	}
	for _, it := range items {
		if i, ok := s.index.lookup(s.Items, it.Name); ok {
			old := s.Items[i]
			if old.ETag == it.ETag && it.Summary == nil {
				it.Summary, it.ReadErr, it.ReadFailed = old.Summary, old.ReadErr, old.ReadFailed
			}
			it.ArchivedTwin, it.QuarantineTwin = old.ArchivedTwin, old.QuarantineTwin
			*old = it
			s.mark(i)
			continue
		}
		s.Items = append(s.Items, &it)
		s.index.add(s.Items, len(s.Items)-1)
		s.seen = append(s.seen, s.gen)
		added = append(added, len(s.Items)-1)
		s.link(len(s.Items) - 1)
	}
	return added
}

// indexed makes sure every item is in the index (a Snapshot made as a literal, with Items, has none yet).
func (s *Snapshot) indexed() {
	if s.index.n != len(s.Items) {
		s.index.rebuild(s.Items, 2*len(s.Items))
	}
}

func (s *Snapshot) mark(i int) {
	for len(s.seen) < len(s.Items) {
		s.seen = append(s.seen, s.gen)
	}
	s.seen[i] = s.gen
}

// link records a twin relation in whichever order the root blob and its copy arrive.
func (s *Snapshot) link(i int) {
	name := s.Items[i].Name
	if IsRoot(name) {
		a, q := Twins(name)
		s.Items[i].ArchivedTwin, s.Items[i].QuarantineTwin = s.isCopy(a), s.isCopy(q)
		return
	}
	if s.Items[i].Refused != "" {
		return // a link or a FIFO where a copy would be is not the replay's copy
	}
	for _, p := range [...]string{ArchivedPrefix, QuarantinePrefix} {
		if root, ok := cutPrefix(name, p); ok {
			if r, ok := s.index.lookup(s.Items, root); ok {
				if p == ArchivedPrefix {
					s.Items[r].ArchivedTwin = true
				} else {
					s.Items[r].QuarantineTwin = true
				}
			}
		}
	}
}

// isCopy reports whether the snapshot holds a real blob (not a refused entry) by that name.
func (s *Snapshot) isCopy(name string) bool {
	i, ok := s.index.lookup(s.Items, name)
	return ok && s.Items[i].Refused == ""
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return "", false
}

// Sweep ends a complete listing: items it did not see are gone and leave the snapshot. It reports whether
// anything was removed (positions then change, and holders of indexes must rebuild them).
func (s *Snapshot) Sweep() bool {
	kept := s.Items[:0]
	seen := s.seen[:0]
	for i, it := range s.Items {
		if i < len(s.seen) && s.seen[i] == s.gen {
			kept = append(kept, it)
			seen = append(seen, s.gen)
		}
	}
	removed := len(kept) != len(s.Items)
	clear(s.Items[len(kept):])
	s.Items, s.seen = kept, seen
	if removed {
		s.index.rebuild(s.Items, 2*len(s.Items))
		for i := range s.Items {
			if IsRoot(s.Items[i].Name) {
				s.link(i)
			}
		}
	}
	return removed
}

// Count returns how many blobs are in each pane.
func (s *Snapshot) Count() map[Pane]int {
	m := map[Pane]int{}
	for i := range s.Items {
		m[s.Items[i].Pane]++
	}
	return m
}

// InPane returns the items of one pane, in snapshot order.
func (s *Snapshot) InPane(p Pane) []Item {
	var out []Item
	for _, it := range s.Items {
		if it.Pane == p {
			out = append(out, *it)
		}
	}
	return out
}

// Lookup finds a blob's position in Items by name.
func (s *Snapshot) Lookup(name string) (int, bool) {
	s.indexed()
	return s.index.lookup(s.Items, name)
}

// Apply puts hydrated results into the snapshot (matching by name and ETag, so a result for an older version
// of a blob is dropped).
func (s *Snapshot) Apply(hs ...Hydrated) {
	for _, h := range hs {
		if i, ok := s.Lookup(h.Name); ok && s.Items[i].ETag == h.ETag {
			s.Items[i].Summary, s.Items[i].ReadErr, s.Items[i].ReadFailed = h.Summary, h.ReadErr, h.Failed
		}
	}
}

// Hydrated is the outcome of reading one blob's payload.
type Hydrated struct {
	Name    string
	ETag    string
	Summary *Summary
	ReadErr string
	// Failed: the payload could not be read, so what it holds is unknown (see Item.ReadFailed).
	Failed bool
}
