package dirstore

import (
	"io/fs"
	"os"
	"strings"
	"time"
)

// maybeSweep removes what crashed writers left, at most once per sweepEvery per Dir (the first write of a
// process included): temporary files older than leftoverAge, and side files whose blob is gone. It runs under
// the exclusive lock, so no other writer is midway; errors only leave leftovers for the next sweep.
func (d *Dir) maybeSweep(h held) {
	d.sweepMu.Lock()
	defer d.sweepMu.Unlock()
	if !d.sweptAt.IsZero() && time.Since(d.sweptAt) < sweepEvery {
		return
	}
	d.sweptAt = time.Now()
	sweepOld(h.tmp.leaf())
	meta, err := d.descend([]string{stateDir, metaDir}, false)
	if err != nil {
		return
	}
	defer meta.close()
	d.sweepMeta(meta.leaf(), meta.roots[0])
}

// sweepOld removes the files of a folder older than leftoverAge.
func sweepOld(r *os.Root) {
	eachEntry(r, func(e fs.DirEntry) {
		if fi, err := e.Info(); err == nil && !fi.IsDir() && time.Since(fi.ModTime()) > leftoverAge {
			r.Remove(e.Name())
		}
	})
}

// sweepMeta removes the side files of meta whose blob in blobs (nil: the folder is gone) no longer exists,
// recursing into subfolders and removing those it empties. Anything else there that is not a side file is a
// leftover temporary file of an older deadletter, removed once old. It reads names, not stats: a side file whose
// blob's name is in the blob folder costs nothing more, so a sweep of a million side files stays cheap.
func (d *Dir) sweepMeta(meta, blobs *os.Root) {
	sw := metaSweep{d: d, meta: meta, blobs: blobs, present: blobNames(blobs)}
	eachName(meta, func(n string) bool {
		sw.entry(n)
		return true
	})
}

// metaSweep is the sweep of one side-file folder against its blob folder.
type metaSweep struct {
	d           *Dir
	meta, blobs *os.Root
	// present holds the blob folder's names; nil when there are too many to hold (then: one Lstat each).
	present map[string]bool
}

// blobNames reads the names of a blob folder, or nil when it is gone or holds more than sweepNamesMax.
func blobNames(blobs *os.Root) map[string]bool {
	if blobs == nil {
		return nil
	}
	present := map[string]bool{}
	if eachName(blobs, func(n string) bool {
		present[n] = true
		return len(present) <= sweepNamesMax
	}) != nil || len(present) > sweepNamesMax {
		return nil
	}
	return present
}

// blob looks up a name in the blob folder.
func (sw *metaSweep) blob(n string) (fs.FileInfo, bool) {
	if sw.blobs == nil || (sw.present != nil && !sw.present[n]) {
		return nil, false
	}
	fi, err := sw.blobs.Lstat(n)
	return fi, err == nil
}

// entry sweeps one name of the side-file folder.
func (sw *metaSweep) entry(n string) {
	base, isSide := strings.CutSuffix(n, metaSuffix)
	if isSide && sw.present != nil && sw.present[base] && !sw.present[n] {
		return // the side file of a blob there (a folder of its name would be unusual, but is checked)
	}
	fi, err := sw.meta.Lstat(n)
	if err != nil {
		return
	}
	switch {
	case fi.IsDir():
		sw.folder(n, fi)
	case isSide && fi.Mode().IsRegular():
		if bfi, ok := sw.blob(base); ok && !bfi.IsDir() {
			return
		}
		sw.meta.Remove(n)
	case time.Since(fi.ModTime()) > leftoverAge:
		sw.meta.Remove(n)
	}
}

// folder sweeps a side-file subfolder against the blob folder of its name, then removes it if that emptied it.
func (sw *metaSweep) folder(n string, fi fs.FileInfo) {
	sub, err := openVerified(sw.meta, n, fi)
	if err != nil {
		return
	}
	var bsub *os.Root
	if bfi, ok := sw.blob(n); ok && bfi.IsDir() {
		bsub, _ = openVerified(sw.blobs, n, bfi)
	}
	sw.d.sweepMeta(sub, bsub)
	sub.Close()
	if bsub != nil {
		bsub.Close()
	}
	if again, err := sw.meta.Lstat(n); err == nil && os.SameFile(again, fi) {
		sw.meta.Remove(n) // fails, as it should, unless the folder is now empty
	}
}

// sweepNamesMax bounds the names of one blob folder a sweep holds at once (a flat folder may hold millions).
const sweepNamesMax = 1 << 16
