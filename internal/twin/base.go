package twin

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"sort"

	"github.com/deadletter/deadletter/internal/made"
)

// baseEvents are the events a twin of a container found in its blobs when it started (twin start --from): a
// million blobs hold millions of events, so they are kept as a sorted list of 64-bit hashes of their ids, written
// once beside the state (baseFile), and a bitmap in the state of those no longer outstanding (delivered or lost).
// Every event the twin publishes or takes back on its way after that is kept by its id (State.Outstanding). An
// event of the base found nowhere is named by its hash (#0123abcd…): its id was never kept. Two ids of one
// snapshot with the same hash (about 1 in 10^12 at a million events) would count as one.
type baseEvents struct {
	hashes []uint64 // sorted, unique
}

// baseFile holds the hashes: "deadletter-base 1\n", then 8 bytes (little-endian) a hash.
const (
	baseFile  = "base-events.bin"
	baseMagic = "deadletter-base 1\n"
)

func idHash(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	x := h.Sum64()
	x ^= x >> 33 // (FNV's low bits alone are poorly mixed)
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return x
}

// index is the position of an id's hash in the base, or -1.
func (b *baseEvents) index(h uint64) int {
	if b == nil {
		return -1
	}
	i := sort.Search(len(b.hashes), func(i int) bool { return b.hashes[i] >= h })
	if i < len(b.hashes) && b.hashes[i] == h {
		return i
	}
	return -1
}

func (b *baseEvents) len() int {
	if b == nil {
		return 0
	}
	return len(b.hashes)
}

// newBase sorts and dedupes hashes into a base.
func newBase(hashes []uint64) *baseEvents {
	slices.Sort(hashes)
	return &baseEvents{hashes: slices.Compact(hashes)}
}

func writeBase(path string, b *baseEvents) error {
	buf := make([]byte, 0, len(baseMagic)+8*len(b.hashes))
	buf = append(buf, baseMagic...)
	for _, h := range b.hashes {
		buf = binary.LittleEndian.AppendUint64(buf, h)
	}
	return made.WriteFile(path, buf)
}

// readBase reads the base file, which must hold n hashes, sorted.
func readBase(path string, n int) (*baseEvents, error) {
	raw, err := made.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(raw) < len(baseMagic) || string(raw[:len(baseMagic)]) != baseMagic || (len(raw)-len(baseMagic))%8 != 0 {
		return nil, fmt.Errorf("%s: not a base file of this deadletter", path)
	}
	raw = raw[len(baseMagic):]
	if len(raw)/8 != n {
		return nil, fmt.Errorf("%s: %d events, the state says %d", path, len(raw)/8, n)
	}
	b := &baseEvents{hashes: make([]uint64, n)}
	for i := range b.hashes {
		b.hashes[i] = binary.LittleEndian.Uint64(raw[8*i:])
		if i > 0 && b.hashes[i] <= b.hashes[i-1] {
			return nil, fmt.Errorf("%s: not sorted at %d", path, i)
		}
	}
	return b, nil
}

// bitmap is a set of positions.
type bitmap []byte

func newBitmap(n int) bitmap    { return make(bitmap, (n+7)/8) }
func (m bitmap) get(i int) bool { return m[i/8]&(1<<(i%8)) != 0 }
func (m bitmap) set(i int)      { m[i/8] |= 1 << (i % 8) }

// The outstanding events, by id (State.Outstanding) or in the base (a bit of State.BaseGone clear).

// outstanding reports whether an event (its original id) is outstanding.
func (tw *Twin) outstanding(id string) bool {
	if tw.st.Outstanding[id] {
		return true
	}
	i := tw.st.base.index(idHash(id))
	return i >= 0 && !tw.st.BaseGone.get(i)
}

// markOutstanding makes an event outstanding; it reports whether it was not already.
func (tw *Twin) markOutstanding(id string) bool {
	if tw.outstanding(id) {
		return false
	}
	tw.st.Outstanding[id] = true
	return true
}

// settle takes an event out of the outstanding (delivered, or lost).
func (tw *Twin) settle(id string) {
	if tw.st.Outstanding[id] {
		delete(tw.st.Outstanding, id)
		return
	}
	if i := tw.st.base.index(idHash(id)); i >= 0 {
		tw.st.BaseGone.set(i)
	}
}

// lose settles an event as lost, and keeps its id (not a base event's) for the ground truth.
func (tw *Twin) lose(id string) {
	if tw.st.Outstanding[id] {
		if tw.st.LostIDs == nil {
			tw.st.LostIDs = map[string]bool{}
		}
		tw.st.LostIDs[id] = true
	}
	tw.settle(id)
	tw.st.Totals.Lost++
}

// baseName names an event of the base by its hash.
func baseName(h uint64) string { return fmt.Sprintf("#%016x", h) }

// removeStale removes the twin's files of a known set other than the one in use.
func removeStale(dir, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if n := e.Name(); n != keep && len(n) > 6 && n[:6] == "known-" {
			os.Remove(dir + string(os.PathSeparator) + n)
		}
	}
}

// loadBeside reads what a format-3 state keeps beside it: the known file its KnownSeq names, and the base of
// events its start found.
func (tw *Twin) loadBeside(st *State, what reading) error {
	if what != readAll {
		if st.KnownSeq > 0 {
			st.known = nil // (not read: nothing that needs it runs)
		}
		if what == peekState {
			return nil
		}
	} else if st.KnownSeq > 0 {
		k, err := readKnown(tw.place.File(knownFile(st.KnownSeq)))
		if err != nil {
			return err
		}
		if k.len() != st.KnownCount {
			return fmt.Errorf("%s: %d blobs, the state says %d", knownFile(st.KnownSeq), k.len(), st.KnownCount)
		}
		st.known = k
	}
	if st.OwedNext < st.OwedCount && what == readAll {
		o, err := readOwed(tw.place.File(owedFile), st.OwedCount, st.OwedNext)
		if err != nil {
			return err
		}
		st.owed = o
	}
	if st.BaseEvents > 0 {
		b, err := readBase(tw.place.File(baseFile), st.BaseEvents)
		if err != nil {
			return err
		}
		st.base = b
	}
	return nil
}

// baseHashes are the base's hashes, by position (none for a twin without one).
func (tw *Twin) baseHashes() []uint64 {
	if tw.st.base == nil {
		return nil
	}
	return tw.st.base.hashes
}
