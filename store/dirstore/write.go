package dirstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strconv"
	"time"

	"github.com/deadletter/deadletter/store"
)

// writeTemp writes body to a new file in .deadletter/tmp and syncs it, so that the rename that publishes it
// publishes its bytes too. It is created perm less the umask (0666: 0644 under the usual 022, like any tool's
// files; 0600 for a private Dir).
func writeTemp(h held, prefix string, body []byte, perm fs.FileMode, stamp func() (time.Time, bool), sync bool) (string, fs.FileInfo, error) {
	tmp := h.tmp.leaf()
	for attempt := 0; ; attempt++ {
		name := prefix + strconv.FormatUint(rand.Uint64(), 36)
		f, err := tmp.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && attempt < 8 {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		_, err = f.Write(body)
		if t, ok := stamp(); ok && err == nil { // a rehearsal's clock, not the file system's, says when it was written
			err = tmp.Chtimes(name, t, t)
		}
		if err == nil && sync {
			err = f.Sync()
		}
		var fi fs.FileInfo
		if err == nil {
			fi, err = f.Stat()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			tmp.Remove(name)
			return "", nil, err
		}
		return name, fi, nil
	}
}

// publish renames a synced temporary file to dst (a path below the container root) in the verified folder c,
// then checks that it landed there and syncs the folder, so the new name survives a crash. The rename resolves
// dst's folders by path; should one of them have been swapped for a link since c was opened, the file is not
// where c says and the write is reported as failed.
// It returns the published file as it stands after the rename (which changes its change time, and so its ETag).
func (d *Dir) publish(tmpName string, tmpInfo fs.FileInfo, c *chain, dst, base string) (fs.FileInfo, error) {
	if renameFault != nil {
		if err := renameFault(dst); err != nil {
			return nil, err
		}
	}
	if err := c.roots[0].Rename(path.Join(stateDir, tmpDir, tmpName), dst); err != nil {
		return nil, err
	}
	got, err := c.leaf().Lstat(base)
	if err != nil || !os.SameFile(got, tmpInfo) {
		return nil, &refusal{path.Dir(dst), "a folder that changed while it was written to (replaced by a link?)"}
	}
	if !d.synced() {
		return got, nil // (a bulk copy: Flush makes it durable)
	}
	return got, c.sync()
}

// cannotHold is a name the directory cannot hold beside what it holds (a blob named like a folder on the path, or
// a folder of other blobs under the name): store.ErrNameTaken, with why.
func cannotHold(name string, why error) error {
	return store.OpError("write", name, fmt.Errorf("%w: cannot hold this name in a directory (%w)", store.ErrNameTaken, why))
}

// Write implements Container. The bytes go to a synced temporary file that is renamed over the name, and the
// folder is synced before Write returns, so a caller that deletes another copy next (restore, drain) never
// loses both to a crash. A link, FIFO or device under the name is refused, never replaced.
func (d *Dir) Write(ctx context.Context, name string, body []byte, opts store.WriteOptions) (store.BlobInfo, error) {
	if err := ValidateName(name); err != nil {
		return store.BlobInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return store.BlobInfo{}, store.OpError("write", name, err)
	}
	h, err := d.lock(true)
	if err != nil {
		return store.BlobInfo{}, store.OpError("write", name, err)
	}
	defer h.unlock()
	e, err := d.lookup(name)
	if err != nil {
		return store.BlobInfo{}, store.OpError("write", name, err)
	}
	defer func() { e.close() }()
	exists, err := writable(e.fi, name, opts)
	if err != nil {
		return store.BlobInfo{}, err
	}
	dirs, base := splitName(name)
	if e.c == nil {
		if e.c, err = d.descend(dirs, true); errors.Is(err, errNotFolder) {
			return store.BlobInfo{}, cannotHold(name, err)
		} else if err != nil {
			return store.BlobInfo{}, store.OpError("write", name, err)
		}
	}
	m := dirMeta{ContentType: opts.ContentType, Metadata: opts.Metadata}
	if exists {
		var err error
		if m.Lease, err = d.leaseFor(name, dirs, base, opts.LeaseID); err != nil {
			return store.BlobInfo{}, err
		}
	}
	if !m.empty() {
		// Where the side file will go is checked before anything lands, so a name whose side file cannot be kept
		// fails with nothing changed, not after the body was rewritten.
		mc, err := d.metaFolder(metaSegs(dirs), base+metaSuffix)
		if err != nil {
			return store.BlobInfo{}, cannotHold(name, err)
		}
		mc.close()
	}
	tmpName, fi, err := writeTemp(h, "w-", body, d.filePerm(), d.stamp, d.synced())
	if err != nil {
		return store.BlobInfo{}, store.OpError("write", name, err)
	}
	if exists && e.fi.Mode().Perm() != fi.Mode().Perm() {
		// A rewrite (a drain) keeps the file's permissions: a 0600 blob does not become 0644.
		if err := h.tmp.leaf().Chmod(tmpName, e.fi.Mode().Perm()); err != nil {
			h.tmp.leaf().Remove(tmpName)
			return store.BlobInfo{}, store.OpError("write", name, err)
		}
	}
	// The blob first, then its side file: a write that fails (or a process killed) before the blob lands leaves
	// everything as it was — never new metadata (a drain's stamp) on the old body, which would pass for a drain
	// that happened. One that fails between the two leaves the new body with the old metadata, and says so.
	fi, err = d.publish(tmpName, fi, e.c, name, base)
	if err != nil {
		h.tmp.leaf().Remove(tmpName) // gone already when the rename happened
		return store.BlobInfo{}, store.OpError("write", name, err)
	}
	if err := d.putMeta(h, dirs, base, m); err != nil {
		return store.BlobInfo{}, d.sideFailed(e.c, name, base, exists, err)
	}
	return blobInfo(name, fi, m), nil
}

// sideFailed is the error of a write whose body landed but whose side file did not. A new blob is whole or not
// there (a full disk between the two): a body without its properties would pass, to the next copy, for the blob
// it is not — it is taken away again. A rewrite leaves the new body with the old side file, and says so.
func (d *Dir) sideFailed(c *chain, name, base string, existed bool, err error) error {
	if !existed {
		if rerr := c.leaf().Remove(base); rerr == nil {
			c.sync()
			return store.OpError("write", name, fmt.Errorf("its content type and metadata could not be written, so nothing was: %w", err))
		}
	}
	return store.OpError("write", name, fmt.Errorf("the body landed but its content type and metadata did not: %w", err))
}

// leaseFor is the lease a rewrite of an existing blob keeps — its own, when the writer holds it, as Azure keeps a
// lease over a write that names it — or the refusal of a blob another action holds (a drain racing a repair).
func (d *Dir) leaseFor(name string, dirs []string, base, leaseID string) (*dirLease, error) {
	old := d.metaOf(dirs, base)
	if leaseRefuses(old, leaseID) {
		return nil, store.Leased("write", name)
	}
	if old.Lease.held(time.Now()) {
		return old.Lease, nil
	}
	return nil, nil
}

// writable checks a write against what stands at its name (fi, nil when nothing): a folder or a refused entry
// cannot be written over, and the write's condition must hold. It reports whether a blob exists there.
func writable(fi fs.FileInfo, name string, opts store.WriteOptions) (exists bool, err error) {
	if fi != nil {
		switch {
		case fi.IsDir():
			return false, cannotHold(name, errors.New("a folder of that name holds other blobs"))
		case !fi.Mode().IsRegular():
			return false, store.OpError("write", name, &refusal{name, refusedWhy(fi.Mode())})
		}
		exists = true
	}
	switch {
	case opts.IfNoneMatchAny && exists:
		return exists, store.OpError("write", name, store.ErrAlreadyExists)
	case opts.IfMatch != "" && (!exists || etagOf(fi) != opts.IfMatch):
		return exists, store.OpError("write", name, store.ErrConditionFailed)
	}
	return exists, nil
}

// renameFault, set by tests only, fails the rename that publishes dst: what a rename across file systems
// (EXDEV, a folder that is a mount point) or a full disk does.
var renameFault func(dst string) error
