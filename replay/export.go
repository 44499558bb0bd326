package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"maps"
	"strings"
	"sync"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// ExportMarker is in the export directory's state folder while an export writes into it unsynced: the next
// export that finds it knows the last one stopped before its files were made durable.
const ExportMarker = "exporting"

// ExportChunk is how many blobs one call of the copy engine takes, exportWorkers how many chunks are copied at
// once and exportAhead how many chunks may be copied or waiting for an earlier one to be reported: the export's
// memory is those chunks, whatever the size of the container.
const (
	ExportChunk   = 256
	exportWorkers = rules.DefaultConcurrency
	exportAhead   = 2 * exportWorkers
)

// Exporter copies the blobs handed to it (Add, in the listing's order) into the export directory with the one
// copy engine (store.Copy), chunk by chunk, exportWorkers chunks at once, and reports every blob in the order it
// was handed over. Its writes are unsynced, made durable by one flush of the file system at the end (Finish);
// the marker it leaves in the directory's state folder until then tells the next export that a crash may have
// left files short. A directory found so marked stays marked: which names the crashed export wrote is not known,
// so every later export into it compares the names it finds held.
type Exporter struct {
	ctx      context.Context
	dst      *dirstore.Dir
	src      store.Container
	resumed  bool // an earlier export into dst stopped before its flush: names dst holds are compared
	unsynced bool // the writes are unsynced, the marker down: Finish flushes
	report   func(store.Copied)
	folds    *foldSet
	chunk    []exportJob
	seq      int
	chunks   chan exportBatch
	ahead    chan struct{}
	wg       sync.WaitGroup

	mu      sync.Mutex
	done    map[int][]store.Copied // chunks copied, waiting for an earlier one to be reported
	next    int                    // the chunk to report next
	copyErr error
}

type exportJob struct {
	bi  store.BlobInfo
	err error // refused before the copy (a case collision)
}

type exportBatch struct {
	seq  int
	jobs []exportJob
}

// StartExport lists dst once (its names claim their case-folded spellings), marks it as being exported into and
// starts the workers.
func StartExport(ctx context.Context, dst *dirstore.Dir, src store.Container, describe string, report func(store.Copied)) (*Exporter, error) {
	folds := newFoldSet()
	err := dst.List(ctx, "", func(p store.Page) error {
		for _, b := range p.Blobs {
			folds.claim(b.Name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	_, err = dirstore.ReadState(dst.Root(), ExportMarker)
	resumed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	unsynced := dst.SetUnsynced(true) // (where the system cannot flush a file system, every write stays synced)
	if unsynced {
		// The marker is durable before any unsynced file lands.
		if err := dirstore.WriteState(dst.Root(), ExportMarker, []byte(describe+"\n")); err != nil {
			return nil, err
		}
		if err := dst.Flush(); err != nil {
			return nil, err
		}
	}
	ex := &Exporter{ctx: ctx, dst: dst, src: src, resumed: resumed, unsynced: unsynced, report: report, folds: folds,
		chunks: make(chan exportBatch), ahead: make(chan struct{}, exportAhead), done: map[int][]store.Copied{}}
	for range exportWorkers {
		ex.wg.Add(1)
		go ex.work()
	}
	return ex, nil
}

// Add takes one blob, in the listing's order: a name that differs only by case from one taken or held before is
// refused here, so which one is written does not depend on the workers' timing.
func (ex *Exporter) Add(bi store.BlobInfo) {
	j := exportJob{bi: bi}
	if err := dirstore.PortableName(bi.Name); err != nil {
		// A name the directory cannot hold is refused for what it is (its own .deadletter/ folder, a segment too
		// long), before any case comparison: it takes no spelling from another.
		j.err = store.OpError("write", bi.Name, err)
	} else if ex.folds.clash(bi.Name) {
		j.err = store.OpError("write", bi.Name, fmt.Errorf("%w (exported, or in the directory already)", store.ErrCaseCollision))
	} else {
		ex.folds.claim(bi.Name)
	}
	ex.chunk = append(ex.chunk, j)
	if len(ex.chunk) == ExportChunk {
		ex.send()
	}
}

func (ex *Exporter) send() {
	if len(ex.chunk) == 0 {
		return
	}
	ex.ahead <- struct{}{} // (freed when the chunk is reported; after ctx ends, Copy reports its blobs at once)
	ex.chunks <- exportBatch{seq: ex.seq, jobs: ex.chunk}
	ex.seq++
	ex.chunk = nil
}

func (ex *Exporter) work() {
	defer ex.wg.Done()
	for b := range ex.chunks {
		res := make([]store.Copied, len(b.jobs))
		blobs := make([]store.BlobInfo, 0, len(b.jobs))
		at := make([]int, 0, len(b.jobs))
		for i, j := range b.jobs {
			if j.err != nil {
				res[i] = store.Copied{Name: j.bi.Name, Err: j.err}
				continue
			}
			blobs = append(blobs, j.bi)
			at = append(at, i)
		}
		n := 0
		_, err := store.Copy(ex.ctx, ex.dst, ex.src, blobs, store.CopyOptions{Check: dirstore.PortableName, Progress: func(c store.Copied) {
			if ex.resumed && errors.Is(c.Err, store.ErrAlreadyExists) {
				c.Err = ex.compare(blobs[n])
			}
			res[at[n]] = c
			n++
		}})
		ex.mu.Lock()
		if err != nil && ex.copyErr == nil {
			ex.copyErr = err
		}
		for i := range res {
			if res[i].Name == "" && res[i].Err == nil { // (Copy failed before reaching it)
				res[i] = store.Copied{Name: b.jobs[i].bi.Name, Err: err}
			}
		}
		ex.done[b.seq] = res
		for {
			r, ok := ex.done[ex.next]
			if !ok {
				break
			}
			delete(ex.done, ex.next)
			ex.next++
			for _, c := range r {
				ex.report(c)
			}
			<-ex.ahead
		}
		ex.mu.Unlock()
	}
}

// Finish copies what is left, waits for the workers and makes every file written durable (one flush of the file
// system), then takes the marker away — what this export wrote is there whole, whatever stopped it — unless the
// directory was marked before it began (a crash's files may still be there: the names this export did not reach,
// the different ones it reported).
func (ex *Exporter) Finish() error {
	ex.send()
	close(ex.chunks)
	ex.wg.Wait()
	if !ex.unsynced {
		return ex.copyErr
	}
	ex.dst.SetUnsynced(false)
	if err := ex.dst.Flush(); err != nil {
		return fmt.Errorf("the files written were not made durable (the next export into the directory compares what it holds): %w", err)
	}
	if !ex.resumed {
		if err := dirstore.RemoveState(ex.dst.Root(), ExportMarker); err != nil {
			return err
		}
	}
	return ex.copyErr
}

// ErrDiffers: after an export that stopped before its files were made durable, the directory holds a file under
// a blob's name that is not the source's blob (a crash can leave one short, empty or without its properties).
var ErrDiffers = errors.New("the directory holds a different file under that name")

// compare takes a name the directory held already, in an export after one that stopped before its flush: the
// same bytes, content type, metadata, index tags and Last-Modified as the source's is already there (as any
// name held); anything else is ErrDiffers, never written over.
func (ex *Exporter) compare(bi store.BlobInfo) error {
	same, err := sameAsSource(ex.ctx, ex.dst, ex.src, bi)
	switch {
	case err != nil:
		return store.OpError("write", bi.Name, fmt.Errorf("the directory holds that name already, and comparing it with the source failed: %w", err))
	case !same:
		return store.OpError("write", bi.Name, ErrDiffers)
	}
	return store.OpError("write", bi.Name, store.ErrAlreadyExists)
}

// sameAsSource reports whether dst holds the source's blob under bi's name: what store.Copy writes.
func sameAsSource(ctx context.Context, dst *dirstore.Dir, src store.Container, bi store.BlobInfo) (bool, error) {
	got, err := dst.Read(ctx, bi.Name, store.MaxBlobBytes)
	if err != nil {
		return false, err
	}
	want, err := src.Read(ctx, bi.Name, store.MaxBlobBytes)
	if err != nil {
		return false, err
	}
	tags := bi.Tags
	if tr, ok := src.(store.TagReader); ok && tags == nil {
		if tags, err = tr.Tags(ctx, bi.Name); err != nil && !errors.Is(err, store.ErrForbidden) {
			return false, err
		}
	}
	meta, ct := want.Metadata, want.ContentType
	if meta == nil {
		meta = bi.Metadata
	}
	if ct == "" {
		ct = bi.ContentType
	}
	return bytes.Equal(got.Body, want.Body) && got.ContentType == ct && maps.Equal(folded(got.Metadata), folded(meta)) &&
		maps.Equal(got.Tags, tags) && (want.LastModified.IsZero() || got.LastModified.Equal(want.LastModified)), nil
}

// folded is metadata with its names in one case (Azure hands them back in its own).
func folded(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out
}

// foldSet is the export's check for names that differ only by case — a name itself or a folder of its path —
// among the blobs exported and the names the directory held: for each, the hash of its case-folded spelling and
// the hash of its own (16 bytes, not the names: a million names would keep some 100 MB). Two spellings whose
// folded hashes meet by chance (about 1 in 10^7 at a million names) are refused as a collision: reported, never
// written over.
type foldSet struct {
	seed maphash.Seed
	m    map[uint64]uint64
}

func newFoldSet() *foldSet { return &foldSet{seed: maphash.MakeSeed(), m: map[uint64]uint64{}} }

func (f *foldSet) each(name string, visit func(folded, exact uint64) bool) bool {
	for i := range name {
		if name[i] == '/' && visit(maphash.String(f.seed, strings.ToLower(name[:i+1])), maphash.String(f.seed, name[:i+1])) {
			return true
		}
	}
	return visit(maphash.String(f.seed, strings.ToLower(name)), maphash.String(f.seed, name))
}

func (f *foldSet) claim(name string) {
	f.each(name, func(folded, exact uint64) bool { f.m[folded] = exact; return false })
}

func (f *foldSet) clash(name string) bool {
	return f.each(name, func(folded, exact uint64) bool {
		got, ok := f.m[folded]
		return ok && got != exact
	})
}

// Resumed says an earlier export into the directory stopped before its files were made durable: every name the
// directory holds is compared with the source rather than taken for done.
func (ex *Exporter) Resumed() bool { return ex.resumed }
