package dirstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/deadletter/deadletter/store"
)

// List implements Container. The folders are read in parallel by a bounded set of workers, and pages of up to
// 5,000 (each in name order; across folders in any order) are handed to visit as they fill, so neither time to
// the first page nor memory grows with the container. Symbolic links, FIFOs and other entries that are not
// regular files are listed as refused, never followed and never skipped; when a folder of the prefix itself is
// a link, that link is listed, as everything the prefix asks for is behind it. Nothing is opened but folders
// and side files, so a FIFO cannot block the listing.
func (d *Dir) List(ctx context.Context, prefix string, visit func(store.Page) error) error {
	if err := d.clockFailed(); err != nil {
		return fmt.Errorf("list %s: %w", d.Describe(), err)
	}
	h, err := d.lock(false)
	if err != nil {
		return fmt.Errorf("list %s: %w", d.Describe(), err)
	}
	defer h.unlock()
	var segs []string
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		// Only the folder the prefix ends in can hold its blobs; a folder no name could have holds none.
		if ValidateName(prefix[:i]) != nil {
			return nil
		}
		segs = strings.Split(prefix[:i], "/")
	}
	start, err := d.descend(segs, false)
	var ref *refusal
	switch {
	case missing(err):
		return nil
	case errors.As(err, &ref):
		var fi fs.FileInfo
		if r := d.r.Load(); r != nil {
			fi, _ = r.Lstat(ref.path)
		}
		if err := visit(store.Page{Blobs: []store.BlobInfo{refusedEntry(ref.path, ref.why, fi)}, ServiceTime: d.now()}); err != nil {
			return fmt.Errorf("list %s: %w", d.Describe(), err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("list %s: %w", d.Describe(), err)
	}
	defer start.close()
	if err := d.walk(ctx, prefix, start, segs, visit); err != nil {
		return fmt.Errorf("list %s: %w", d.Describe(), err)
	}
	return nil
}

// listWorkers bounds the folders read at once: enough to keep a disk's queue and the CPUs busy with stats,
// few enough not to thrash a spinning disk or exhaust file descriptors.
func listWorkers() int { return min(16, max(4, 2*runtime.GOMAXPROCS(0))) }

// walker is one parallel listing: a stack of folders still to read, shared by the workers, and the page
// being filled, cut at 5,000 and handed to the caller's goroutine.
type walker struct {
	d      *Dir
	top    *os.Root // the container directory
	prefix string
	ctx    context.Context

	mu      sync.Mutex
	cond    *sync.Cond
	todo    []walkItem
	pending int // folders queued or being read
	err     error
	page    []store.BlobInfo

	pages chan []store.BlobInfo
}

// walkItem is a folder to read: rel below the container, as its parent's listing saw it (fi) and, for the
// start folder only, already open.
type walkItem struct {
	rel  string
	fi   fs.FileInfo
	root *os.Root
}

func (d *Dir) walk(ctx context.Context, prefix string, start *chain, segs []string, visit func(store.Page) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &walker{d: d, top: start.roots[0], prefix: prefix, ctx: ctx, pages: make(chan []store.BlobInfo, 2),
		todo: []walkItem{{rel: strings.Join(segs, "/"), root: start.leaf()}}, pending: 1}
	w.cond = sync.NewCond(&w.mu)
	var wg sync.WaitGroup
	for range listWorkers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.work()
		}()
	}
	go func() {
		wg.Wait()
		if w.err == nil && len(w.page) > 0 {
			w.send(w.page)
		}
		close(w.pages)
	}()
	var verr error
	for p := range w.pages {
		if verr == nil {
			if verr = visit(store.Page{Blobs: p, ServiceTime: d.now()}); verr != nil {
				cancel() // stop the workers; keep draining so none is left blocked
			}
		}
	}
	switch {
	case verr != nil:
		return verr
	case w.err != nil:
		return w.err
	}
	return ctx.Err()
}

func (w *walker) work() {
	for {
		w.mu.Lock()
		for len(w.todo) == 0 && w.pending > 0 && w.err == nil {
			w.cond.Wait()
		}
		if w.err != nil || w.pending == 0 {
			w.mu.Unlock()
			return
		}
		it := w.todo[len(w.todo)-1]
		w.todo = w.todo[:len(w.todo)-1]
		w.mu.Unlock()
		err := w.ctx.Err()
		if err == nil {
			err = w.read(it)
		}
		w.mu.Lock()
		w.pending--
		if err != nil && w.err == nil {
			w.err = err
		}
		if w.pending == 0 || w.err != nil {
			w.cond.Broadcast()
		}
		w.mu.Unlock()
	}
}

// send hands a full page (sorted here, in parallel) to the caller's goroutine.
func (w *walker) send(p []store.BlobInfo) error {
	store.SortByName(p)
	select {
	case w.pages <- p:
		return nil
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

// add puts a folder's batch of entries on the page, sending every page it fills.
func (w *walker) add(batch []store.BlobInfo) error {
	if len(batch) == 0 {
		return nil
	}
	var full [][]store.BlobInfo
	w.mu.Lock()
	w.page = append(w.page, batch...)
	for len(w.page) >= dirPageSize {
		full = append(full, w.page[:dirPageSize:dirPageSize])
		w.page = append(make([]store.BlobInfo, 0, dirPageSize), w.page[dirPageSize:]...)
	}
	w.mu.Unlock()
	for _, p := range full {
		if err := w.send(p); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) push(it walkItem) {
	w.mu.Lock()
	w.todo = append(w.todo, it)
	w.pending++
	w.cond.Signal()
	w.mu.Unlock()
}

// wantsFolder reports whether a folder can hold names with the prefix.
func (w *walker) wantsFolder(rel string) bool {
	return strings.HasPrefix(rel+"/", w.prefix) || strings.HasPrefix(w.prefix, rel+"/")
}

// read lists one folder: its files become blobs (with their side files, read only where the side-file folder
// exists), its links and FIFOs refused entries, its folders work for the other workers.
func (w *walker) read(it walkItem) error {
	r, done, err := w.open(it)
	if r == nil || err != nil {
		return err
	}
	defer done()
	fr := &folderReader{w: w, rel: it.rel}
	if it.rel != "" {
		fr.relSegs = strings.Split(it.rel, "/")
	}
	defer func() { fr.meta.close() }()
	dir, err := r.Open(".")
	if err != nil {
		return err
	}
	defer dir.Close()
	for {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		ents, rerr := dir.ReadDir(1024)
		batch := make([]store.BlobInfo, 0, len(ents))
		for _, e := range ents {
			bi, ok, err := fr.entry(e)
			if err != nil {
				return err
			}
			if ok {
				batch = append(batch, bi)
			}
		}
		if err := w.add(batch); err != nil {
			return err
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// open opens the folder an item names (the top one comes open). A folder that vanished since its parent was
// read gives nil: it was emptied and removed. One replaced meanwhile (by a link out of the container, say) is
// listed as refused and gives nil too.
func (w *walker) open(it walkItem) (*os.Root, func(), error) {
	if it.root != nil {
		return it.root, func() {}, nil
	}
	r, err := w.top.OpenRoot(it.rel)
	switch {
	case missing(err) || errors.Is(err, syscall.ENOTDIR):
		return nil, nil, nil
	case errors.Is(err, fs.ErrPermission):
		return nil, nil, err
	case err != nil:
		return nil, nil, w.add([]store.BlobInfo{refusedEntry(it.rel, whyChanged, it.fi)})
	}
	if st, err := r.Stat("."); err != nil || !os.SameFile(st, it.fi) {
		r.Close()
		return nil, nil, w.add([]store.BlobInfo{refusedEntry(it.rel, whyChanged, it.fi)})
	}
	return r, func() { r.Close() }, nil
}

// folderReader turns one folder's entries into listed blobs.
type folderReader struct {
	w       *walker
	rel     string
	relSegs []string
	// meta is the side-file folder, opened at the first file; nil when there is none.
	meta      *chain
	metaTried bool
	// names is the block the folder's blob names are cut from (see name).
	names []byte
}

// name is the folder's path, "/" and n, cut from a block shared by the folder's names: a snapshot holds every
// listed name for as long as it lives, and one allocation per name, rounded up to its size class, cost a million-
// blob listing 14 MB more. Bytes of the block are never written again once a name is cut from them.
func (f *folderReader) name(n string) string {
	size := len(f.rel) + 1 + len(n)
	if cap(f.names)-len(f.names) < size {
		// Blocks grow from 512 bytes to 16 KB: a folder of a few names (an hour of a quiet subscription) costs no
		// 16 KB block, a folder of thousands is cut from 16 KB blocks.
		f.names = make([]byte, 0, max(size, min(2*cap(f.names), 16<<10), 512))
	}
	start := len(f.names)
	f.names = append(append(append(f.names, f.rel...), '/'), n...)
	return unsafe.String(&f.names[start], size)
}

// entry is one entry of the folder as a listed blob (ok false: not listed — a folder, handed to the walk, or a
// name outside the prefix).
func (f *folderReader) entry(e fs.DirEntry) (bi store.BlobInfo, ok bool, err error) {
	n := e.Name()
	if f.rel == "" && n == stateDir {
		return bi, false, nil
	}
	rel := n
	if f.rel != "" {
		rel = f.name(n)
	}
	fi, err := e.Info()
	if missing(err) {
		return bi, false, nil
	}
	if err != nil {
		return bi, false, err
	}
	switch t := fi.Mode(); {
	case t.IsDir():
		if f.w.wantsFolder(rel) {
			f.w.push(walkItem{rel: rel, fi: fi})
		}
		return bi, false, nil
	case !strings.HasPrefix(rel, f.w.prefix):
		return bi, false, nil
	case t.IsRegular():
		return blobInfo(rel, fi, f.metaOf(n)), true, nil
	default:
		return refusedEntry(rel, refusedWhy(t), fi), true, nil
	}
}

// metaOf reads the side file of the folder's file n, if the side-file folder exists.
func (f *folderReader) metaOf(n string) dirMeta {
	if !f.metaTried {
		f.metaTried = true
		var err error
		if f.meta, err = f.w.d.descendCached(metaSegs(f.relSegs), false, false); err != nil {
			f.meta = nil
		}
	}
	if f.meta == nil {
		return dirMeta{}
	}
	return readMeta(f.meta.leaf(), n+metaSuffix)
}

// refusedEntry lists an entry that is not a readable blob, dated by the entry itself (the link, the FIFO) so that
// it has an age like every other row rather than one of 292 years.
func refusedEntry(name, why string, fi fs.FileInfo) store.BlobInfo {
	bi := store.BlobInfo{Name: name, Refused: why}
	if fi != nil {
		bi.LastModified = fi.ModTime().UTC()
	}
	return bi
}
