package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deadletter/deadletter/store"
)

// Hooked wraps a container to count calls and to let a test act between them: a second writer between a read
// and the conditional write, a fault on a delete, a recording of every condition sent.
type Hooked struct {
	store.Container
	Reads, Writes, Deletes atomic.Int64
	// BeforeRead may fail a Read before it reaches the container; AfterRead runs after a successful one, before
	// it returns (a second actor strikes here).
	BeforeRead func(name string) error
	AfterRead  func(name string)
	// BeforeWrite and BeforeDelete may fail the call before it reaches the container.
	BeforeWrite  func(name string, o store.WriteOptions) error
	BeforeDelete func(name, ifMatch string) error

	mu  sync.Mutex
	Log []Call
}

// Call is one write or delete as it was sent.
type Call struct {
	Op, Name, IfMatch string
	IfNoneMatchAny    bool
}

// Read implements store.Container.
func (h *Hooked) Read(ctx context.Context, name string, max int64) (store.Blob, error) {
	h.Reads.Add(1)
	if h.BeforeRead != nil {
		if err := h.BeforeRead(name); err != nil {
			return store.Blob{}, err
		}
	}
	b, err := h.Container.Read(ctx, name, max)
	if err == nil && h.AfterRead != nil {
		h.AfterRead(name)
	}
	return b, err
}

// Write implements store.Container.
func (h *Hooked) Write(ctx context.Context, name string, body []byte, o store.WriteOptions) (store.BlobInfo, error) {
	h.Writes.Add(1)
	h.mu.Lock()
	h.Log = append(h.Log, Call{Op: "write", Name: name, IfMatch: o.IfMatch, IfNoneMatchAny: o.IfNoneMatchAny})
	h.mu.Unlock()
	if h.BeforeWrite != nil {
		if err := h.BeforeWrite(name, o); err != nil {
			return store.BlobInfo{}, err
		}
	}
	return h.Container.Write(ctx, name, body, o)
}

// Delete implements store.Container.
func (h *Hooked) Delete(ctx context.Context, name, ifMatch string) error {
	if err := h.deleting(name, ifMatch); err != nil {
		return err
	}
	return h.Container.Delete(ctx, name, ifMatch)
}

// deleting counts, logs and hooks a delete (with or without a lease) before it is passed on.
func (h *Hooked) deleting(name, ifMatch string) error {
	h.Deletes.Add(1)
	h.mu.Lock()
	h.Log = append(h.Log, Call{Op: "delete", Name: name, IfMatch: ifMatch})
	h.mu.Unlock()
	if h.BeforeDelete != nil {
		return h.BeforeDelete(name, ifMatch)
	}
	return nil
}

// Calls returns a copy of the write and delete log.
func (h *Hooked) Calls() []Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Call(nil), h.Log...)
}

// Create passes through to a container that can create itself.
func (h *Hooked) Create(ctx context.Context) error {
	if p, ok := h.Container.(store.Provisioner); ok {
		return p.Create(ctx)
	}
	return fmt.Errorf("create %s: %w", h.Container.Describe(), errors.ErrUnsupported)
}

// Backdate passes through to a directory, so a hooked directory can still be seeded. Over a container that
// cannot backdate (Azure) it fails, rather than letting a test believe its blobs were aged.
func (h *Hooked) Backdate(ctx context.Context, name string, t time.Time) error {
	if p, ok := h.Container.(store.Provisioner); ok {
		return p.Backdate(ctx, name, t)
	}
	return fmt.Errorf("backdate %q: %s: %w", name, h.Container.Describe(), errors.ErrUnsupported)
}

// SetTags passes through to a container that keeps tags.
func (h *Hooked) SetTags(ctx context.Context, name string, tags map[string]string, ifMatch string) error {
	if tg, ok := h.Container.(store.Tagger); ok {
		return tg.SetTags(ctx, name, tags, ifMatch)
	}
	return fmt.Errorf("set tags of %q: %w", name, errors.ErrUnsupported)
}

// Tags passes through to a container whose reads do not carry tags.
func (h *Hooked) Tags(ctx context.Context, name string) (map[string]string, error) {
	if tr, ok := h.Container.(store.TagReader); ok {
		return tr.Tags(ctx, name)
	}
	b, err := h.Container.Stat(ctx, name)
	return b.Tags, err
}

// Lease passes through to a container that leases (a Hooked over one without leases has none either).
func (h *Hooked) Lease(ctx context.Context, name, ifMatch string, d time.Duration) (string, error) {
	if l, ok := h.Container.(store.Leaser); ok {
		return l.Lease(ctx, name, ifMatch, d)
	}
	return "", fmt.Errorf("lease %q: %w", name, errors.ErrUnsupported)
}

// Release passes through to a container that leases.
func (h *Hooked) Release(ctx context.Context, name, id string) error {
	if l, ok := h.Container.(store.Leaser); ok {
		return l.Release(ctx, name, id)
	}
	return nil
}

// DeleteLeased is Delete under a lease: counted, logged and hooked as Delete is.
func (h *Hooked) DeleteLeased(ctx context.Context, name, ifMatch, id string) error {
	if err := h.deleting(name, ifMatch); err != nil {
		return err
	}
	if l, ok := h.Container.(store.Leaser); ok {
		return l.DeleteLeased(ctx, name, ifMatch, id)
	}
	return h.Container.Delete(ctx, name, ifMatch)
}
