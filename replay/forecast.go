package replay

import (
	"time"

	"github.com/deadletter/deadletter/store"
)

// Forecast is what draining a set of blobs sets in motion, from their summaries.
type Forecast struct {
	// Blobs, Events, Bytes and the rest count only the blobs the drain will re-upload, as far as is known.
	Blobs, Events, Malformed, Crash, Unread int
	Bytes                                   int64
	// Unreadable counts, apart from Blobs, the stranded blobs whose payload could not be read (an entry the store
	// refuses, a read that failed): the drain tries them again, re-uploading any it can read now and failing on
	// the rest, so it asks about them too — but it cannot say they will be drained.
	Unreadable int
	// NotStranded counts the given blobs the drain leaves alone whatever it is told: live ones (younger than the
	// TTL, their own trigger may still arrive) and the replay's own archived/ and quarantine/ records.
	NotStranded int
	Verdicts    VerdictCounts
	// Handled counts the blobs the replay already handled: skipped, or drained anyway when IncludeHandled.
	Handled        int
	IncludeHandled bool
	// TooLarge counts the stranded blobs over store.MaxBlobBytes: the drain never reads them, so it fails on them.
	TooLarge int
	// Acked counts the blobs among Blobs an operator acknowledged (as of now): the re-upload changes them, which
	// ends their acks.
	Acked int
}

// ForecastDrain adds up what the replay function will do with the given blobs once they are drained. Only what
// the drain will re-upload is summed: blobs that are not stranded are counted apart, and blobs the replay already
// handled are skipped by the drain, so they are left out of the sums unless includeHandled. now is the service
// time the items were listed at (for their acks).
func ForecastDrain(items []Item, includeHandled bool, now time.Time) Forecast {
	f := Forecast{IncludeHandled: includeHandled}
	for i := range items {
		it := &items[i]
		if it.Pane != PaneStranded {
			f.NotStranded++
			continue
		}
		if h, _ := handled(it); h {
			f.Handled++
			if !includeHandled {
				continue
			}
		}
		if it.Size > store.MaxBlobBytes {
			f.TooLarge++
			continue
		}
		if it.ReadFailed {
			f.Unreadable++
			continue
		}
		f.Blobs++
		f.Bytes += it.Size
		if ack, ok := AckOf(it.BlobInfo); ok && ack.Covers(it.BlobInfo, now) {
			f.Acked++
		}
		switch {
		case it.Summary == nil:
			f.Unread++
			continue
		}
		f.Events += it.Summary.Events
		switch {
		case it.Summary.Malformed:
			f.Malformed++
		case it.Summary.CrashDepth > 0:
			f.Crash++ // the function throws before it republishes or quarantines anything
		default:
			f.Verdicts.Add(it.Summary.Verdicts)
		}
	}
	return f
}

// Asks reports whether the drain has anything to ask about: blobs it will re-upload, or unreadable ones it tries.
// (Blobs over the size limit, handled and not stranded ones, it only reports.)
func (f Forecast) Asks() bool { return f.Blobs+f.Unreadable > 0 }
