// Package store is the dead-letter container as the rest of deadletter sees it: a flat namespace of blobs
// that can be listed page by page, read, written and deleted under ETag conditions, plus the service's clock.
//
// Two implementations live beneath it, each in its own package so that nothing links a backend it does not use:
// store/azureblob (Azure Blob Storage through azblob and azidentity) and store/dirstore (a local directory, for
// offline snapshots, the demo, the rehearsal twin and fast tests). Errors are typed so that callers decide on
// meaning (someone else changed it, it is gone, it already exists) rather than on HTTP status codes. Powers only some containers
// have — creating and backdating for seeds, index tags for acknowledgements — are capability interfaces.
package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
)

// MaxBlobBytes is the largest payload Read will return (blob.MaxBytes: a dead letter is at most ~1 MB).
const MaxBlobBytes = blob.MaxBytes

// Typed errors. Every implementation wraps one of these (with the blob name) so errors.Is works.
var (
	// ErrNotFound: the blob (or the container) does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConditionFailed: an If-Match condition did not hold — someone else rewrote or removed the blob since it
	// was read. Azure answers 412, or 404 for some missing-blob cases; both mean the same to a caller.
	ErrConditionFailed = errors.New("condition not met: the blob changed or vanished since it was read")
	// ErrAlreadyExists: an If-None-Match "*" write found a blob already there.
	ErrAlreadyExists = errors.New("already exists")
	// ErrTooLarge: the blob is larger than MaxBlobBytes and was not read.
	ErrTooLarge = errors.New("too large")
	// ErrInvalidName: the name cannot be stored by this backend.
	ErrInvalidName = errors.New("invalid blob name")
	// ErrForbidden: the identity lacks a data-plane role on the account, or its key or signature was refused.
	ErrForbidden = errors.New("forbidden")
	// ErrContainerNotFound: the container itself is missing.
	ErrContainerNotFound = errors.New("container not found")
	// ErrRefused: the entry exists but is not a blob this backend will read (a symbolic link, a FIFO, a device).
	ErrRefused = errors.New("refused")
	// ErrNameTaken comes with ErrNotFound where no blob has a name but something else holds it, so it cannot be
	// written: a directory container's folder of other blobs.
	ErrNameTaken = errors.New("the name is held by a folder of other blobs")
	// ErrLeased: another action holds the blob's lease (a repair or a restore between its check and its delete);
	// a write or delete of it without the lease's id does not land. It comes with ErrConditionFailed, as Azure's
	// 412 does: the blob is not the caller's to change now.
	ErrLeased = errors.New("another action holds the blob's lease")
)

// Leased is the error of a write or delete refused because another action holds the blob's lease: both
// ErrLeased and ErrConditionFailed.
func Leased(op, name string) error {
	return OpError(op, name, fmt.Errorf("%w (%w)", ErrConditionFailed, ErrLeased))
}

// BlobInfo is what a listing says about one blob, without downloading it. It is blob.Info, defined beneath the
// store so that the replay rules can judge blobs without importing the store.
type BlobInfo = blob.Info

// Blob is a downloaded blob: its properties as of the read, and its bytes.
type Blob struct {
	BlobInfo
	Body []byte
	// ServiceTime is the service's clock when the read was answered (zero when the backend has none).
	ServiceTime time.Time
}

// Page is one page of a listing. Pages come in no promised order; within a page, blobs are in name order.
type Page struct {
	Blobs []BlobInfo
	// ServiceTime is the service's clock when the page was answered: ages are measured against it, not against
	// the local clock, which can be minutes off on an operator's laptop.
	ServiceTime time.Time
}

// WriteOptions are the conditions and properties of a write. At most one of IfMatch and IfNoneMatchAny is set.
type WriteOptions struct {
	// IfMatch makes the write succeed only if the blob still has this ETag.
	IfMatch string
	// IfNoneMatchAny makes the write succeed only if no blob has the name yet.
	IfNoneMatchAny bool
	ContentType    string
	Metadata       map[string]string
	// LeaseID is the lease the writer holds on the blob (Leaser): a leased blob is written only under it.
	LeaseID string
}

// Container is the dead-letter container.
type Container interface {
	// Describe names the container for humans: account/container or the directory.
	Describe() string
	// List enumerates every blob whose name starts with prefix ("" for all) with its properties, metadata and
	// tags, handing each page to visit as soon as it arrives, so that a caller can show the first rows of a
	// million-blob container at once. An error from visit stops the listing and is returned.
	List(ctx context.Context, prefix string, visit func(Page) error) error
	// Read downloads one blob, refusing (ErrTooLarge) anything over max bytes without reading it whole.
	Read(ctx context.Context, name string, max int64) (Blob, error)
	// Stat returns one blob's current properties (ErrNotFound when it is gone).
	Stat(ctx context.Context, name string) (BlobInfo, error)
	// Write stores body under name, subject to opts' condition, and returns the new properties.
	Write(ctx context.Context, name string, body []byte, opts WriteOptions) (BlobInfo, error)
	// Delete removes name if its ETag is still ifMatch (ErrConditionFailed otherwise).
	Delete(ctx context.Context, name string, ifMatch string) error
	// Now is the service's clock (the local clock where the backend has none).
	Now(ctx context.Context) (time.Time, error)
}

// Leaser takes a blob's lease — Azure's primitive for one writer at a time: while a lease is held, no write or
// delete of the blob lands without the lease's id (ErrLeased), so a drain's rewrite fails as if the blob had
// changed and the replay's delete leaves it where it is. A repair and a restore hold one on their original from
// the check that it is still what was read until they delete it: nothing can send its events meanwhile.
type Leaser interface {
	// Lease takes name's lease for d if its ETag is still ifMatch — ErrConditionFailed (or ErrNotFound) when it
	// changed or vanished, ErrLeased when another action holds one — and returns the lease's id.
	Lease(ctx context.Context, name, ifMatch string, d time.Duration) (string, error)
	// Release gives the lease back, the blob as it is (a lease gone already is no error).
	Release(ctx context.Context, name, id string) error
	// DeleteLeased deletes name if its ETag is still ifMatch, under the lease id.
	DeleteLeased(ctx context.Context, name, ifMatch, id string) error
}

// LeaseTime is how long a repair or a restore holds its original's lease at most: Azure's longest finite lease.
// One that stops half-way (a crash, kill -9) leaves the blob free again within it.
const LeaseTime = 60 * time.Second

// Provisioner is what seeding a container needs beyond the contract: bringing it into being and, where the
// backend can, dating a blob in the past so a seeded incident holds stranded and expiring blobs.
type Provisioner interface {
	// Create makes the container if it does not exist.
	Create(ctx context.Context) error
	// Backdate sets a blob's Last-Modified; errors.ErrUnsupported where the service owns that clock (Azure).
	Backdate(ctx context.Context, name string, t time.Time) error
}

// Tagger sets a blob's index tags without changing its ETag or Last-Modified (acknowledgements).
type Tagger interface {
	// SetTags replaces the blob's whole tag set, If-Match ifMatch when it is not empty.
	SetTags(ctx context.Context, name string, tags map[string]string, ifMatch string) error
}

// NameValidator is implemented by containers with limits of their own on blob names (a directory's path
// segments and bytes): a name it refuses cannot be written there, so a plan can refuse it before any write.
type NameValidator interface {
	ValidateName(name string) error
}

// TagReader reads one blob's index tags, for a backend whose reads do not carry them (Azure answers a download
// with a tag count only; listings carry them whole).
type TagReader interface {
	Tags(ctx context.Context, name string) (map[string]string, error)
}

// Listing is a whole enumeration gathered in memory: what tests and small tools want.
type Listing struct {
	Blobs []BlobInfo
	// ServiceTime is the service's clock at the last page.
	ServiceTime time.Time
}

// ListAll gathers every page of c's listing, sorted by name.
func ListAll(ctx context.Context, c Container) (Listing, error) {
	var l Listing
	err := c.List(ctx, "", func(p Page) error {
		l.Blobs = append(l.Blobs, p.Blobs...)
		if p.ServiceTime.After(l.ServiceTime) {
			l.ServiceTime = p.ServiceTime
		}
		return nil
	})
	if err != nil {
		return Listing{}, err
	}
	SortByName(l.Blobs)
	return l, nil
}

// OpError is how every backend says which operation on which blob failed, keeping the typed error for errors.Is.
func OpError(op, name string, err error) error {
	return fmt.Errorf("%s %q: %w", op, name, err)
}

// SortByName orders blobs by name, as a page holds them.
func SortByName(bs []BlobInfo) {
	slices.SortFunc(bs, func(a, b BlobInfo) int { return strings.Compare(a.Name, b.Name) })
}
