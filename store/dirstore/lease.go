package dirstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/deadletter/deadletter/store"
)

// Leases are kept in a blob's side file, under the container's exclusive lock like every write: Write, Delete and
// SetTags of a blob leased by another refuse (store.Leased), across processes, as Azure's service does.

// Lease implements store.Leaser.
func (d *Dir) Lease(ctx context.Context, name, ifMatch string, dur time.Duration) (string, error) {
	var id string
	err := d.withBlob("lease", name, ifMatch, func(h held, dirs []string, base string, m dirMeta) error {
		if m.Lease.held(time.Now()) {
			return store.Leased("lease", name)
		}
		var b [8]byte
		rand.Read(b[:])
		id = hex.EncodeToString(b[:])
		m.Lease = &dirLease{ID: id, Until: time.Now().Add(dur)}
		return d.putMeta(h, dirs, base, m)
	})
	return id, err
}

// Release implements store.Leaser.
func (d *Dir) Release(ctx context.Context, name, id string) error {
	err := d.withBlob("release", name, "", func(h held, dirs []string, base string, m dirMeta) error {
		if m.Lease == nil || m.Lease.ID != id {
			return nil
		}
		m.Lease = nil
		return d.putMeta(h, dirs, base, m)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil // (the blob is gone: so is its lease)
	}
	return err
}

// DeleteLeased implements store.Leaser.
func (d *Dir) DeleteLeased(ctx context.Context, name, ifMatch, id string) error {
	return d.remove(name, ifMatch, id)
}

// withBlob runs f on an existing blob under the exclusive lock, If-Match ifMatch when it is not empty, with its
// side file as it stands.
func (d *Dir) withBlob(op, name, ifMatch string, f func(h held, dirs []string, base string, m dirMeta) error) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	h, err := d.lock(true)
	if err != nil {
		return store.OpError(op, name, err)
	}
	defer h.unlock()
	e, err := d.lookup(name)
	if err != nil {
		return store.OpError(op, name, err)
	}
	defer e.close()
	fi, err := e.blob(name)
	if err != nil {
		return store.OpError(op, name, err)
	}
	if ifMatch != "" && etagOf(fi) != ifMatch {
		return store.OpError(op, name, store.ErrConditionFailed)
	}
	dirs, base := splitName(name)
	if err := f(h, dirs, base, d.metaOf(dirs, base)); err != nil {
		return store.OpError(op, name, err)
	}
	return nil
}

// leaseRefuses says whether a write, delete or tag change under leaseID is refused by the blob's lease (m's).
func leaseRefuses(m dirMeta, leaseID string) bool {
	return m.Lease.held(time.Now()) && m.Lease.ID != leaseID
}
