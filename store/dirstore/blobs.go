package dirstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/deadletter/deadletter/store"
)

// Stat implements Container. A link, FIFO or device under the name is store.ErrRefused, not store.ErrNotFound: something
// is there, and it is not a blob deadletter will touch.
func (d *Dir) Stat(ctx context.Context, name string) (store.BlobInfo, error) {
	if err := ValidateName(name); err != nil {
		return store.BlobInfo{}, err
	}
	h, err := d.lock(false)
	if err != nil {
		return store.BlobInfo{}, store.OpError("stat", name, err)
	}
	defer h.unlock()
	e, err := d.lookup(name)
	if err != nil {
		return store.BlobInfo{}, store.OpError("stat", name, err)
	}
	defer e.close()
	fi, err := e.blob(name)
	if err != nil {
		return store.BlobInfo{}, store.OpError("stat", name, err)
	}
	dirs, base := splitName(name)
	return blobInfo(name, fi, d.metaOf(dirs, base)), nil
}

// Read implements Container. Only a regular file is read: the name is looked up without following links, then
// opened without blocking (a FIFO swapped in cannot hang the read) and checked through its own descriptor.
func (d *Dir) Read(ctx context.Context, name string, max int64) (store.Blob, error) {
	if err := ValidateName(name); err != nil {
		return store.Blob{}, err
	}
	h, err := d.lock(false)
	if err != nil {
		return store.Blob{}, store.OpError("read", name, err)
	}
	defer h.unlock()
	e, err := d.lookup(name)
	if err != nil {
		return store.Blob{}, store.OpError("read", name, err)
	}
	defer e.close()
	fi, err := e.blob(name)
	if err != nil {
		return store.Blob{}, store.OpError("read", name, err)
	}
	f, st, err := openRegular(e.c.leaf(), e.base, name, fi)
	if err != nil {
		return store.Blob{}, store.OpError("read", name, err)
	}
	defer f.Close()
	dirs, base := splitName(name)
	bi := blobInfo(name, st, d.metaOf(dirs, base))
	if bi.Size > max {
		return store.Blob{BlobInfo: bi}, store.OpError("read", name, fmt.Errorf("%w: %d bytes, over the %d-byte limit", store.ErrTooLarge, bi.Size, max))
	}
	// Blobs are replaced by rename, never rewritten in place: the size the descriptor's fstat gave is the body.
	body := make([]byte, bi.Size)
	if _, err := io.ReadFull(f, body); err != nil {
		return store.Blob{}, store.OpError("read", name, err)
	}
	return store.Blob{BlobInfo: bi, Body: body, ServiceTime: d.now()}, nil
}

// Delete implements Container. Folders the delete empties are removed (Azure has no folders). A delete needs
// no sync of its own: whatever it depends on — the copy a restore wrote first — was synced by its Write.
func (d *Dir) Delete(ctx context.Context, name string, ifMatch string) error {
	return d.remove(name, ifMatch, "")
}

// remove deletes name If-Match ifMatch, under leaseID (a blob another action holds the lease of is refused).
func (d *Dir) remove(name, ifMatch, leaseID string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	h, err := d.lock(true)
	if err != nil {
		return store.OpError("delete", name, err)
	}
	defer h.unlock()
	e, err := d.lookup(name)
	if err != nil {
		return store.OpError("delete", name, err)
	}
	defer e.close()
	fi, err := e.blob(name)
	if errors.Is(err, store.ErrNotFound) && ifMatch != "" {
		return store.OpError("delete", name, store.ErrConditionFailed)
	}
	if err != nil {
		return store.OpError("delete", name, err)
	}
	if ifMatch != "" && etagOf(fi) != ifMatch {
		return store.OpError("delete", name, store.ErrConditionFailed)
	}
	dirs, base := splitName(name)
	if leaseRefuses(d.metaOf(dirs, base), leaseID) {
		return store.Leased("delete", name)
	}
	if err := e.c.leaf().Remove(e.base); err != nil {
		return store.OpError("delete", name, err)
	}
	d.removeMeta(dirs, base)
	e.c.prune(dirs, 0)
	return nil
}

// Backdate implements Provisioner: it sets a blob's Last-Modified, so a seeded directory can hold stranded and
// expiring blobs.
func (d *Dir) Backdate(ctx context.Context, name string, t time.Time) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	h, err := d.lock(true)
	if err != nil {
		return store.OpError("backdate", name, err)
	}
	defer h.unlock()
	e, err := d.lookup(name)
	if err != nil {
		return store.OpError("backdate", name, err)
	}
	defer e.close()
	if _, err := e.blob(name); err != nil {
		return store.OpError("backdate", name, err)
	}
	if err := e.c.leaf().Chtimes(e.base, t, t); err != nil {
		return store.OpError("backdate", name, err)
	}
	return nil
}

// SetTags implements Tagger: the tags live in the blob's side file, so the blob's own file — its mtime
// (Last-Modified) and identity (ETag) — is not touched.
func (d *Dir) SetTags(ctx context.Context, name string, tags map[string]string, ifMatch string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	h, err := d.lock(true)
	if err != nil {
		return store.OpError("set tags of", name, err)
	}
	defer h.unlock()
	e, err := d.lookup(name)
	if err != nil {
		return store.OpError("set tags of", name, err)
	}
	defer e.close()
	fi, err := e.blob(name)
	if err != nil {
		if ifMatch != "" && errors.Is(err, store.ErrNotFound) {
			return store.OpError("set tags of", name, store.ErrConditionFailed)
		}
		return store.OpError("set tags of", name, err)
	}
	if ifMatch != "" && etagOf(fi) != ifMatch {
		return store.OpError("set tags of", name, store.ErrConditionFailed)
	}
	dirs, base := splitName(name)
	m := d.metaOf(dirs, base)
	if leaseRefuses(m, "") {
		return store.Leased("set tags of", name)
	}
	m.Tags = tags
	if len(tags) == 0 {
		m.Tags = nil
	}
	if err := d.putMeta(h, dirs, base, m); err != nil {
		return store.OpError("set tags of", name, err)
	}
	return nil
}
