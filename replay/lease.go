package replay

import (
	"context"
	"errors"
	"time"

	"github.com/deadletter/deadletter/store"
)

// A repair and a restore hold their original's lease (store.Leaser) from the moment they check it is still what
// they read until they delete it: meanwhile no drain can re-upload it (its If-Match write is refused, the blob is
// leased) and no other repair or restore can take it — so the original's events are never at the root twice, once
// in the original re-uploaded and once in the new blob. A store without leases (storetest's) is used as before.

// takeLease takes name's lease If-Match etag, waiting while another action holds it (a restore of the same copy
// ends within store.LeaseTime). It returns "" where the store has no leases; an original that changed or vanished
// meanwhile is ErrConditionFailed or ErrNotFound, as the write would have been.
func takeLease(ctx context.Context, c store.Container, name, etag string) (string, error) {
	l, ok := c.(store.Leaser)
	if !ok {
		return "", nil
	}
	deadline := time.Now().Add(store.LeaseTime + 5*time.Second)
	for delay := 20 * time.Millisecond; ; delay = min(2*delay, time.Second) {
		id, err := l.Lease(ctx, name, etag, store.LeaseTime)
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			return "", nil
		case err == nil || !errors.Is(err, store.ErrLeased) || time.Now().After(deadline):
			return id, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(delay):
		}
	}
}

// giveLease gives a lease back (nothing for none), the blob as it stands.
func giveLease(ctx context.Context, c store.Container, name, id string) {
	if l, ok := c.(store.Leaser); ok && id != "" {
		l.Release(context.WithoutCancel(ctx), name, id)
	}
}

// deleteHeld deletes name If-Match etag under the lease id ("" for none).
func deleteHeld(ctx context.Context, c store.Container, name, etag, id string) error {
	if l, ok := c.(store.Leaser); ok && id != "" {
		return l.DeleteLeased(ctx, name, etag, id)
	}
	return c.Delete(ctx, name, etag)
}
