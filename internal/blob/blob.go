// Package blob is what a listing says about one blob — its name, size, ETag, times, metadata and tags — and the
// rules for reading its metadata, with no way to reach a container. The store (which lists, reads and writes
// blobs) and the replay rules (which judge them, and import no store) both build on it.
package blob

import (
	"strings"
	"time"
)

// MaxBytes is the largest payload a store will read. Event Grid writes at most ~1 MB per dead-letter blob, so
// anything far beyond it is not a dead letter; refusing it keeps one hostile blob from exhausting memory.
const MaxBytes = 64 << 20

// Info is what a listing says about one blob, without downloading it.
type Info struct {
	Name         string
	Size         int64
	ETag         string
	LastModified time.Time
	ContentType  string
	Metadata     map[string]string
	// Tags are the blob's index tags (acknowledgements live there): changing them changes neither the ETag nor
	// Last-Modified.
	Tags map[string]string
	// Refused says why an entry the listing found is not a readable blob (a directory container's symbolic
	// link or FIFO); empty for every real blob. Refused entries are listed, never skipped silently, so that
	// nothing hidden behind one can make the container look healthy.
	Refused string
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
