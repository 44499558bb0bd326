package twin

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
	"sort"
	"time"
	"unsafe"

	"github.com/deadletter/deadletter/internal/opfile"
	"github.com/deadletter/deadletter/store/dirstore"
)

// knownSet is what the twin last saw of every blob: to tell another command's write (a BlobCreated it must
// deliver) from its own, and when the lifecycle rule takes it. It is kept compact, as a twin of a million blobs
// knows a million: a name cut from a shared block, its ETag as a 64-bit hash (it is only compared), its
// Last-Modified as nanoseconds, and a heap of Last-Modified (pruned lazily) so the lifecycle's next deletion is
// found without a walk over every blob. It is kept beside the state, not in it (knownFile).
type knownSet struct {
	m     map[string]knownEntry
	block []byte
	exp   expiryHeap
	gen   uint32 // notice's pass: entries not seen in it are gone
	dirty bool   // changed since it was written
}

// knownFile is the name of the seq-th known file.
func knownFile(seq int) string { return fmt.Sprintf("known-%d.bin", seq) }

type knownEntry struct {
	etag uint64
	lm   stamp
	seen uint32
}

// stamp is a Last-Modified, exact (nanoseconds since the epoch would end in 2262; the twin's clock runs to 9000).
type stamp struct {
	sec  int64
	nsec int32
}

func stampOf(t time.Time) stamp     { return stamp{t.Unix(), int32(t.Nanosecond())} }
func (s stamp) time() time.Time     { return time.Unix(s.sec, int64(s.nsec)).UTC() }
func (s stamp) before(o stamp) bool { return s.sec < o.sec || s.sec == o.sec && s.nsec < o.nsec }

type expiry struct {
	lm   stamp
	name string
}

type expiryHeap []expiry

func (h expiryHeap) Len() int { return len(h) }
func (h expiryHeap) Less(i, j int) bool {
	if h[i].lm != h[j].lm {
		return h[i].lm.before(h[j].lm)
	}
	return h[i].name < h[j].name
}
func (h expiryHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)   { *h = append(*h, x.(expiry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func newKnownSet() *knownSet { return &knownSet{m: map[string]knownEntry{}} }

func etagHash(etag string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(etag))
	return h.Sum64()
}

// intern is name cut from the set's block (one allocation per 64 KiB of names, not one per name).
func (k *knownSet) intern(name string) string {
	return k.internBytes(unsafe.Slice(unsafe.StringData(name), len(name)))
}

func (k *knownSet) internBytes(name []byte) string {
	if len(name) > 4096 {
		return string(name)
	}
	if cap(k.block)-len(k.block) < len(name) {
		k.block = make([]byte, 0, 64<<10)
	}
	off := len(k.block)
	k.block = append(k.block, name...)
	if len(name) == 0 {
		return ""
	}
	return unsafe.String(&k.block[off], len(name))
}

func (k *knownSet) len() int { return len(k.m) }

// same reports whether the twin knows the blob as it is now (the same ETag).
func (k *knownSet) same(name, etag string) bool {
	e, ok := k.m[name]
	return ok && e.etag == etagHash(etag)
}

// set is what the twin saw of a blob now.
// It returns the set's own copy of the name, to be shared rather than hold the listing's.
func (k *knownSet) set(name, etag string, lm time.Time) string {
	return k.setHashed(name, etagHash(etag), stampOf(lm))
}

func (k *knownSet) setHashed(name string, etag uint64, lm stamp) string {
	k.dirty = true
	e, ok := k.m[name]
	if ok {
		if e.lm != lm {
			name = k.intern(name) // (rare: a known blob rewritten)
			heap.Push(&k.exp, expiry{lm: lm, name: name})
		}
		e.etag, e.lm = etag, lm
		k.m[name] = e
		return name
	}
	name = k.intern(name)
	k.m[name] = knownEntry{etag: etag, lm: lm, seen: k.gen}
	heap.Push(&k.exp, expiry{lm: lm, name: name})
	k.prune()
	return name
}

// del forgets a blob.
func (k *knownSet) del(name string) {
	if _, ok := k.m[name]; ok {
		delete(k.m, name)
		k.dirty = true
	}
}

// prune rebuilds the expiry heap when stale entries outnumber live ones.
func (k *knownSet) prune() {
	if len(k.exp) < 2*len(k.m)+1024 {
		return
	}
	k.exp = k.exp[:0]
	for name, e := range k.m {
		k.exp = append(k.exp, expiry{lm: e.lm, name: name})
	}
	heap.Init(&k.exp)
}

// valid reports whether an expiry heap entry still says a known blob's Last-Modified.
func (k *knownSet) valid(x expiry) bool {
	e, ok := k.m[x.name]
	return ok && e.lm == x.lm
}

// oldest is the earliest Last-Modified known.
func (k *knownSet) oldest() (time.Time, bool) {
	for len(k.exp) > 0 {
		if k.valid(k.exp[0]) {
			return k.exp[0].lm.time(), true
		}
		heap.Pop(&k.exp)
	}
	return time.Time{}, false
}

// modifiedBy is every known blob whose Last-Modified is due (due must hold of every time before one it holds
// of), in name order.
func (k *knownSet) modifiedBy(due func(lm time.Time) bool) []string {
	var out []string
	var keep []expiry
	for len(k.exp) > 0 && due(k.exp[0].lm.time()) {
		x := heap.Pop(&k.exp).(expiry)
		if k.valid(x) {
			out = append(out, x.name)
			keep = append(keep, x) // (still known until deleted)
		}
	}
	for _, x := range keep {
		heap.Push(&k.exp, x)
	}
	sort.Strings(out)
	return compactStrings(out)
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// lastModified is a known blob's Last-Modified.
func (k *knownSet) lastModified(name string) (time.Time, bool) {
	e, ok := k.m[name]
	if !ok {
		return time.Time{}, false
	}
	return e.lm.time(), true
}

// names is every known name, sorted.
func (k *knownSet) names() []string {
	out := make([]string, 0, len(k.m))
	for n := range k.m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// startPass begins a pass of notice: mark each blob seen, then sweep those not seen.
func (k *knownSet) startPass() { k.gen++ }

func (k *knownSet) markSeen(name string) {
	if e, ok := k.m[name]; ok && e.seen != k.gen {
		e.seen = k.gen
		k.m[name] = e
	}
}

// sweep forgets every blob the pass did not see.
func (k *knownSet) sweep() {
	for name, e := range k.m {
		if e.seen != k.gen {
			delete(k.m, name)
			k.dirty = true
		}
	}
}

// The known file: a header, the count, then per blob its name (length-prefixed), its ETag's hash and its
// Last-Modified in seconds and nanoseconds — about 90 bytes a blob.
const knownMagic = "deadletter-known 1\n"

// maxKnown bounds what a known file may say it holds (a damaged or hostile count allocates nothing beyond it).
const maxKnown = 50_000_000

// writeKnown writes the set to path whole or not at all (a temporary file, synced, renamed; 0600).
func writeKnown(path string, k *knownSet) error {
	return opfile.ReplaceWith(path, 0o600, func(w *bufio.Writer) error {
		w.WriteString(knownMagic)
		var buf [binary.MaxVarintLen64 + 20]byte
		w.Write(binary.AppendUvarint(buf[:0], uint64(len(k.m))))
		for name, e := range k.m {
			b := binary.AppendUvarint(buf[:0], uint64(len(name)))
			w.Write(b)
			w.WriteString(name)
			b = binary.LittleEndian.AppendUint64(buf[:0], e.etag)
			b = binary.LittleEndian.AppendUint64(b, uint64(e.lm.sec))
			b = binary.LittleEndian.AppendUint32(b, uint32(e.lm.nsec))
			w.Write(b)
		}
		return nil // a bufio.Writer keeps its first error: the flush reports it
	})
}

// readKnown reads a known file, refusing one damaged: a bad header, a count or name out of bounds, a
// Last-Modified out of the clock's range, a short file.
func readKnown(path string) (*knownSet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	head := make([]byte, len(knownMagic))
	if _, err := io.ReadFull(r, head); err != nil || string(head) != knownMagic {
		return nil, fmt.Errorf("%s: not a known file of this deadletter", path)
	}
	n, err := binary.ReadUvarint(r)
	if err != nil || n > maxKnown {
		return nil, fmt.Errorf("%s: a count of %d blobs: want at most %d", path, n, maxKnown)
	}
	k := &knownSet{m: make(map[string]knownEntry, n), exp: make(expiryHeap, 0, n)}
	var name []byte
	var fixed [20]byte
	minS, maxS := dirstore.MinTime.Unix(), dirstore.MaxTime.Unix()
	for i := uint64(0); i < n; i++ {
		l, err := binary.ReadUvarint(r)
		if err != nil || l > 4096 {
			return nil, fmt.Errorf("%s: blob %d: %s", path, i, short(err, "a name over 4096 bytes"))
		}
		name = slices.Grow(name[:0], int(l))[:l]
		if _, err := io.ReadFull(r, name); err != nil {
			return nil, fmt.Errorf("%s: blob %d: %w", path, i, err)
		}
		if _, err := io.ReadFull(r, fixed[:]); err != nil {
			return nil, fmt.Errorf("%s: blob %d: %w", path, i, err)
		}
		lm := stamp{int64(binary.LittleEndian.Uint64(fixed[8:])), int32(binary.LittleEndian.Uint32(fixed[16:]))}
		if lm.sec < minS || lm.sec > maxS || lm.nsec < 0 || lm.nsec >= 1e9 {
			return nil, fmt.Errorf("%s: known[%q].lastModified: want a time between %d and %d", path, name, dirstore.MinTime.Year(), dirstore.MaxTime.Year())
		}
		s := k.internBytes(name)
		k.m[s] = knownEntry{etag: binary.LittleEndian.Uint64(fixed[:8]), lm: lm}
		k.exp = append(k.exp, expiry{lm: lm, name: s})
	}
	heap.Init(&k.exp)
	return k, nil
}

func short(err error, otherwise string) string {
	if err != nil {
		if errors.Is(err, io.EOF) {
			return "the file ends early"
		}
		return err.Error()
	}
	return otherwise
}
