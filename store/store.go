// Package store is the dead-letter container as the rest of deadletter sees it: a flat namespace of blobs
// that can be listed, read, written and deleted under ETag conditions, plus the service's clock.
//
// Two implementations live here: Azure Blob Storage through azblob (dir.go's sibling azure.go) and a local
// directory (dir.go) for offline snapshots, the demo and fast tests. Errors are typed so that callers decide
// on meaning (someone else changed it, it is gone, it already exists) rather than on HTTP status codes.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MaxBlobBytes is the largest payload Read will return. Event Grid writes at most ~1 MB per dead-letter blob, so
// anything far beyond it is not a dead letter; refusing it keeps one hostile blob from exhausting memory.
const MaxBlobBytes = 64 << 20

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
	// ErrForbidden: the identity lacks a data-plane role on the account.
	ErrForbidden = errors.New("forbidden")
	// ErrContainerNotFound: the container itself is missing.
	ErrContainerNotFound = errors.New("container not found")
)

// BlobInfo is what a listing says about one blob, without downloading it.
type BlobInfo struct {
	Name         string
	Size         int64
	ETag         string
	LastModified time.Time
	ContentType  string
	Metadata     map[string]string
}

// Blob is a downloaded blob: its properties as of the read, and its bytes.
type Blob struct {
	BlobInfo
	Body []byte
	// ServiceTime is the service's clock when the read was answered (zero when the backend has none).
	ServiceTime time.Time
}

// Listing is one enumeration of the container.
type Listing struct {
	Blobs []BlobInfo
	// ServiceTime is the service's clock at the last page of the listing: ages are measured against it, not
	// against the local clock, which can be minutes off on an operator's laptop.
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
}

// Container is the dead-letter container.
type Container interface {
	// Describe names the container for humans: account/container or the directory.
	Describe() string
	// List enumerates every blob with its properties and metadata.
	List(ctx context.Context) (Listing, error)
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

// MetaGet looks a metadata key up case-insensitively, as Azure treats metadata names.
func MetaGet(m map[string]string, key string) (string, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return "", false
}

// MetaWith returns a copy of m with key set to value, dropping any other spelling of key (Azure metadata names
// are case-insensitive, and the SDK may hand them back re-cased).
func MetaWith(m map[string]string, key, value string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		if !strings.EqualFold(k, key) {
			out[k] = v
		}
	}
	out[key] = value
	return out
}

func opError(op, name string, err error) error {
	return fmt.Errorf("%s %q: %w", op, name, err)
}
