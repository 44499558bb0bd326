package twin

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/deadletter/deadletter/internal/opfile"
)

// owedTrigger is a BlobCreated Event Grid still owes the replay for a blob a twin of a container copied: the root
// blobs still inside the TTL when it started. A container of a million fresh dead letters owes a million, all due
// at the twin's start: they are kept in name order in owedFile (written once) and put on the queue a chunk at a
// time as the queue reaches them (materialize), never all at once; the state says how many were (OwedNext).
type owedTrigger struct {
	name  string
	first stamp
}

const (
	owedFile  = "owed.bin"
	owedMagic = "deadletter-owed 1\n"
)

// owedChunk is how many owed triggers go on the queue at a time.
var owedChunk = 1024

// owe notes a trigger owed at the twin's start (takeIn), due at due.
func (tw *Twin) owe(name string, due, first time.Time) {
	tw.st.OwedDue = due
	tw.st.owed = append(tw.st.owed, owedTrigger{name: name, first: stampOf(first)})
}

// sealOwed orders the owed triggers as the queue would take them and writes them beside the state.
func (tw *Twin) sealOwed() error {
	sort.Slice(tw.st.owed, func(i, j int) bool { return tw.st.owed[i].name < tw.st.owed[j].name })
	tw.st.OwedCount, tw.st.OwedNext = len(tw.st.owed), 0
	if tw.place == nil || len(tw.st.owed) == 0 {
		return nil
	}
	return opfile.ReplaceWith(tw.place.File(owedFile), 0o600, func(w *bufio.Writer) error {
		w.WriteString(owedMagic)
		var buf [binary.MaxVarintLen64 + 12]byte
		w.Write(binary.AppendUvarint(buf[:0], uint64(len(tw.st.owed))))
		for _, o := range tw.st.owed {
			w.Write(binary.AppendUvarint(buf[:0], uint64(len(o.name))))
			w.WriteString(o.name)
			b := binary.LittleEndian.AppendUint64(buf[:0], uint64(o.first.sec))
			w.Write(binary.LittleEndian.AppendUint32(b, uint32(o.first.nsec)))
		}
		return nil // a bufio.Writer keeps its first error: the flush reports it
	})
}

// readOwed reads the triggers still owed: those of owedFile past the first next.
func readOwed(path string, count, next int) ([]owedTrigger, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	head := make([]byte, len(owedMagic))
	if _, err := io.ReadFull(r, head); err != nil || string(head) != owedMagic {
		return nil, fmt.Errorf("%s: not an owed file of this deadletter", path)
	}
	n, err := binary.ReadUvarint(r)
	if err != nil || n != uint64(count) {
		return nil, fmt.Errorf("%s: %d triggers, the state says %d", path, n, count)
	}
	out := make([]owedTrigger, 0, count-next)
	var name []byte
	var fixed [12]byte
	var block []byte
	prev := ""
	for i := 0; i < count; i++ {
		l, err := binary.ReadUvarint(r)
		if err != nil || l > 4096 {
			return nil, fmt.Errorf("%s: trigger %d: %s", path, i, short(err, "a name over 4096 bytes"))
		}
		name = slices.Grow(name[:0], int(l))[:l]
		if _, err := io.ReadFull(r, name); err != nil {
			return nil, fmt.Errorf("%s: trigger %d: %w", path, i, err)
		}
		if _, err := io.ReadFull(r, fixed[:]); err != nil {
			return nil, fmt.Errorf("%s: trigger %d: %w", path, i, err)
		}
		if i < next {
			continue
		}
		first := stamp{int64(binary.LittleEndian.Uint64(fixed[:8])), int32(binary.LittleEndian.Uint32(fixed[8:]))}
		if err := inRange(fmt.Sprintf("%s: trigger %d: first", path, i), first.time()); err != nil || first.nsec < 0 || first.nsec >= 1e9 {
			return nil, fmt.Errorf("%s: trigger %d: a time out of range", path, i)
		}
		if len(name) == 0 || string(name) <= prev && i > next {
			return nil, fmt.Errorf("%s: trigger %d: out of name order", path, i)
		}
		if cap(block)-len(block) < len(name) {
			block = make([]byte, 0, max(64<<10, len(name)))
		}
		off := len(block)
		block = append(block, name...)
		s := string(block[off:]) // (one copy a name; the block is only a buffer)
		out = append(out, owedTrigger{name: s, first: first})
		prev = s
	}
	return out, nil
}

// materialize puts owed triggers on the queue while the next one owed would come before the queue's first: the
// queue then takes them in the order it would have had they all been on it.
func (tw *Twin) materialize() {
	for len(tw.st.owed) > 0 {
		o := tw.st.owed[0]
		if q := tw.st.Queue; len(q) > 0 {
			top := q[0]
			if top.Due.Before(tw.st.OwedDue) || top.Due.Equal(tw.st.OwedDue) && top.key() < ReplayFunction+"\x00"+o.name {
				return
			}
		}
		n := min(owedChunk, len(tw.st.owed))
		for _, o := range tw.st.owed[:n] {
			heap.Push(&tw.st.Queue, &pending{Due: tw.st.OwedDue, Sub: ReplayFunction, Blob: o.name, First: o.first.time()})
		}
		tw.st.owed = tw.st.owed[n:]
		tw.st.OwedNext += n
	}
}
