package rules

import (
	"strconv"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
)

// The metadata schema: what deadletter's own actions write into a blob's metadata, read and written here only —
// the front ends ask Marks, never blob.MetaGet with a key of the schema.
//
// Metadata a drain adds to the blob it re-uploads, and a restore to the copy it writes.
const (
	MetaDrainCount = "drainCount"
	MetaDrainedAt  = "drainedAt"
	// MetaRestoredFrom records which quarantine copy a restored blob came from.
	MetaRestoredFrom = "restoredFrom"
	// MetaDrainID and MetaRestoreID carry the id of the action that wrote the blob (one per drain or restore
	// run): a write whose answer was lost is known for this action's by it, never by a time stamp two actions
	// in the same second share.
	MetaDrainID   = "drainId"
	MetaRestoreID = "restoreId"
)

// Marks are the marks deadletter's actions left in a blob's metadata. The values are as the blob holds them
// (text another tool could have written is shown as it is, never re-counted); Drained and Restored say whether
// the mark is there at all.
type Marks struct {
	// DrainCount is how many times deadletter drained the blob, DrainedAt when last (RFC 3339, the service's
	// time), DrainID the id of that drain.
	DrainCount, DrainedAt, DrainID string
	// RestoredFrom names the quarantine copy a restored blob came from, RestoreID the restore that wrote it.
	RestoredFrom, RestoreID string
	// RepairedFrom names the blob a repair wrote this one to replace.
	RepairedFrom      string
	drained, restored bool
}

// MarksOf reads the action marks of metadata (names in any case, as Azure keeps them).
func MarksOf(md map[string]string) Marks {
	var m Marks
	m.DrainCount, m.drained = blob.MetaGet(md, MetaDrainCount)
	m.DrainedAt, _ = blob.MetaGet(md, MetaDrainedAt)
	m.DrainID, _ = blob.MetaGet(md, MetaDrainID)
	m.RestoredFrom, m.restored = blob.MetaGet(md, MetaRestoredFrom)
	m.RestoreID, _ = blob.MetaGet(md, MetaRestoreID)
	m.RepairedFrom, _ = blob.MetaGet(md, MetaRepairedFrom)
	return m
}

// Drained says a drain marked the blob; Restored that a restore wrote it.
func (m Marks) Drained() bool  { return m.drained }
func (m Marks) Restored() bool { return m.restored }

// Drains is the drain count as a number (0 when never drained, or when the mark is not one).
func (m Marks) Drains() int {
	n, _ := strconv.Atoi(m.DrainCount)
	return n
}

// WithDrainMark is md with one more drain marked: its count, its time and its id.
func WithDrainMark(md map[string]string, now time.Time, id string) map[string]string {
	count := MarksOf(md).Drains() + 1
	stamp := now.UTC().Format(time.RFC3339Nano)
	return blob.MetaWith(blob.MetaWith(blob.MetaWith(md, MetaDrainCount, strconv.Itoa(count)), MetaDrainedAt, stamp), MetaDrainID, id)
}

// WithRestoreMark is md with the quarantine copy a restore came from and, when set, the restore's id.
func WithRestoreMark(md map[string]string, from, id string) map[string]string {
	md = blob.MetaWith(md, MetaRestoredFrom, from)
	if id != "" {
		md = blob.MetaWith(md, MetaRestoreID, id)
	}
	return md
}
