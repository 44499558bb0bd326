package storetest

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/deadletter/deadletter/store"
)

// Mem is an in-memory container with a settable clock, for fast unit tests and deterministic screens. It is
// never a stand-in for the Azurite suite.
type Mem struct {
	mu     sync.Mutex
	blobs  map[string]store.Blob
	leases map[string]memLease
	n      int
	// Clock is the service time; zero means time.Now.
	Clock time.Time
}

// NewMem returns an empty container whose clock reads now.
func NewMem(now time.Time) *Mem { return &Mem{blobs: map[string]store.Blob{}, Clock: now} }

func (m *Mem) now() time.Time {
	if m.Clock.IsZero() {
		return time.Now().UTC()
	}
	return m.Clock
}

// Describe implements store.Container.
func (m *Mem) Describe() string { return "mem/deadletter" }

// List implements store.Container: one page, in name order.
func (m *Mem) List(ctx context.Context, prefix string, visit func(store.Page) error) error {
	m.mu.Lock()
	p := store.Page{ServiceTime: m.now()}
	for _, b := range m.blobs {
		if strings.HasPrefix(b.Name, prefix) {
			p.Blobs = append(p.Blobs, b.BlobInfo)
		}
	}
	m.mu.Unlock()
	sort.Slice(p.Blobs, func(i, j int) bool { return p.Blobs[i].Name < p.Blobs[j].Name })
	return visit(p)
}

// Stat implements store.Container.
func (m *Mem) Stat(ctx context.Context, name string) (store.BlobInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[name]
	if !ok {
		return store.BlobInfo{}, fmt.Errorf("stat %q: %w", name, store.ErrNotFound)
	}
	return b.BlobInfo, nil
}

// Read implements store.Container.
func (m *Mem) Read(ctx context.Context, name string, max int64) (store.Blob, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[name]
	if !ok {
		return store.Blob{}, fmt.Errorf("read %q: %w", name, store.ErrNotFound)
	}
	if b.Size > max {
		return store.Blob{BlobInfo: b.BlobInfo}, fmt.Errorf("read %q: %w", name, store.ErrTooLarge)
	}
	b.ServiceTime = m.now()
	return b, nil
}

// Write implements store.Container.
func (m *Mem) Write(ctx context.Context, name string, body []byte, o store.WriteOptions) (store.BlobInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, exists := m.blobs[name]
	if o.IfNoneMatchAny && exists {
		return store.BlobInfo{}, fmt.Errorf("write %q: %w", name, store.ErrAlreadyExists)
	}
	if o.IfMatch != "" && (!exists || cur.ETag != o.IfMatch) {
		return store.BlobInfo{}, fmt.Errorf("write %q: %w", name, store.ErrConditionFailed)
	}
	if m.leasedTo(name, o.LeaseID) {
		return store.BlobInfo{}, store.Leased("write", name)
	}
	m.n++
	bi := store.BlobInfo{Name: name, Size: int64(len(body)), ETag: fmt.Sprintf(`"m%d"`, m.n), LastModified: m.now().Truncate(time.Second),
		ContentType: o.ContentType, Metadata: o.Metadata}
	m.blobs[name] = store.Blob{BlobInfo: bi, Body: append([]byte(nil), body...)}
	return bi, nil
}

// Delete implements store.Container.
func (m *Mem) Delete(ctx context.Context, name, ifMatch string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.blobs[name]
	if !ok || ifMatch != "" && cur.ETag != ifMatch {
		if !ok && ifMatch == "" {
			return fmt.Errorf("delete %q: %w", name, store.ErrNotFound)
		}
		return fmt.Errorf("delete %q: %w", name, store.ErrConditionFailed)
	}
	if m.leasedTo(name, "") {
		return store.Leased("delete", name)
	}
	delete(m.blobs, name)
	delete(m.leases, name)
	return nil
}

type memLease struct {
	id    string
	until time.Time
}

// leasedTo reports whether another than id holds name's lease (m.mu held).
func (m *Mem) leasedTo(name, id string) bool {
	l, ok := m.leases[name]
	return ok && time.Now().Before(l.until) && l.id != id
}

// Lease implements store.Leaser.
func (m *Mem) Lease(ctx context.Context, name, ifMatch string, d time.Duration) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.blobs[name]
	switch {
	case !ok:
		return "", fmt.Errorf("lease %q: %w", name, store.ErrNotFound)
	case ifMatch != "" && cur.ETag != ifMatch:
		return "", fmt.Errorf("lease %q: %w", name, store.ErrConditionFailed)
	case m.leasedTo(name, ""):
		return "", store.Leased("lease", name)
	}
	if m.leases == nil {
		m.leases = map[string]memLease{}
	}
	m.n++
	id := fmt.Sprintf("lease-%d", m.n)
	m.leases[name] = memLease{id: id, until: time.Now().Add(d)}
	return id, nil
}

// Release implements store.Leaser.
func (m *Mem) Release(ctx context.Context, name, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.leases[name]; ok && l.id == id {
		delete(m.leases, name)
	}
	return nil
}

// DeleteLeased implements store.Leaser.
func (m *Mem) DeleteLeased(ctx context.Context, name, ifMatch, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.blobs[name]
	if !ok || ifMatch != "" && cur.ETag != ifMatch {
		return fmt.Errorf("delete %q: %w", name, store.ErrConditionFailed)
	}
	if m.leasedTo(name, id) {
		return store.Leased("delete", name)
	}
	delete(m.blobs, name)
	delete(m.leases, name)
	return nil
}

// Now implements store.Container.
func (m *Mem) Now(ctx context.Context) (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now(), nil
}

// Create implements store.Provisioner.
func (m *Mem) Create(ctx context.Context) error { return nil }

// Backdate implements store.Provisioner.
func (m *Mem) Backdate(ctx context.Context, name string, t time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[name]
	if !ok {
		return fmt.Errorf("backdate %q: %w", name, store.ErrNotFound)
	}
	m.n++
	b.LastModified, b.ETag = t.UTC().Truncate(time.Second), fmt.Sprintf(`"m%d"`, m.n)
	m.blobs[name] = b
	return nil
}

// SetTags implements store.Tagger: ETag and Last-Modified stay as they are.
func (m *Mem) SetTags(ctx context.Context, name string, tags map[string]string, ifMatch string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[name]
	if !ok || ifMatch != "" && b.ETag != ifMatch {
		return fmt.Errorf("set tags of %q: %w", name, store.ErrConditionFailed)
	}
	b.Tags = maps.Clone(tags)
	m.blobs[name] = b
	return nil
}

// Has reports whether a blob exists (test assertions).
func (m *Mem) Has(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.blobs[name]
	return ok
}

// Names lists the blobs with a prefix.
func (m *Mem) Names(prefix string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for n := range m.blobs {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Clone is an independent copy of the container (one seed, many tests).
func (m *Mem) Clone() *Mem {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := &Mem{blobs: make(map[string]store.Blob, len(m.blobs)), n: m.n, Clock: m.Clock}
	for k, v := range m.blobs {
		c.blobs[k] = v
	}
	return c
}
