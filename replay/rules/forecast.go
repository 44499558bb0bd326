package rules

import (
	"fmt"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
)

// Forecast is a drain before it runs: which blobs it will re-upload, which it leaves and why (as the results
// the drain itself would give them), and what the replay function will then do with what it re-uploads. The
// command line's question and the dashboard's dialog both present it; neither works any of it out.
type Forecast struct {
	// Names are the blobs the drain will re-upload (or try again: Unreadable), in the order given.
	Names []string
	// Left are the blobs it will not touch, each with the outcome and reason the drain reports for it.
	Left []Result
	// Blobs, Events, Bytes and the rest count only the blobs the drain will re-upload, as far as is known.
	Blobs, Events, Malformed, Crash, MayCrash, Unread int
	Bytes                                             int64
	// Unreadable counts, apart from Blobs, the stranded blobs whose payload could not be read (a read that
	// failed): the drain tries them again, re-uploading any it can read now and failing on the rest, so it asks
	// about them too — but it cannot say they will be drained.
	Unreadable int
	// NotStranded counts the given blobs the drain leaves alone whatever it is told: live ones (younger than the
	// TTL, their own trigger may still arrive) and the replay's own archived/ and quarantine/ records.
	NotStranded int
	Verdicts    VerdictCounts
	// Handled counts the blobs the replay already handled: skipped, or drained anyway when IncludeHandled.
	Handled        int
	IncludeHandled bool
	// Untriggerable counts root blobs whose trigger the replay subscription filters out: no drain reaches them.
	Untriggerable int
	// CrashLeft counts the blobs the replay function crashes on that the drain leaves (it was not forced).
	CrashLeft int
	// Refused counts entries the store will not read (a link, a FIFO in a directory container).
	Refused int
	// TooLarge counts the stranded blobs over blob.MaxBytes: the drain never reads them, so it fails on them.
	TooLarge int
	// Acked counts the blobs among Blobs an operator acknowledged (as of now): the re-upload changes them, which
	// ends their acks.
	Acked int
}

// ForecastDrain is what draining the given blobs with options o (IncludeHandled, Force) would do, from their
// listing and summaries: now is the service time the items were listed at.
func (c Config) ForecastDrain(items []Item, o DrainOptions, now time.Time) Forecast {
	f := Forecast{IncludeHandled: o.IncludeHandled}
	for i := range items {
		it := &items[i]
		t := c.DrainTargetOf(it, now)
		if h, _ := handled(it); h {
			f.Handled++
		}
		if r, skip := LeaveAlone(c, t, o); skip {
			f.Left = append(f.Left, r)
			switch r.Outcome {
			case OutcomeExcluded, OutcomeYoung:
				f.NotStranded++
			case OutcomeUntriggerable:
				f.Untriggerable++
			case OutcomeRefused:
				f.Refused++
			case OutcomeCrash:
				f.CrashLeft++
			}
			continue
		}
		if it.Size > blob.MaxBytes {
			f.TooLarge++
			f.Left = append(f.Left, Result{Name: it.Name, Outcome: OutcomeFailed, Reason: Reason{Kind: ReasonFailed, Err: TooLargeToRead()}})
			continue
		}
		f.Names = append(f.Names, it.Name)
		if it.ReadFailed {
			f.Unreadable++
			continue
		}
		f.Blobs++
		f.Bytes += it.Size
		if _, st, _ := c.AckOf(it.Info, now); st == AckActive {
			f.Acked++
		}
		s := it.Summary
		if s == nil {
			f.Unread++
			continue
		}
		f.Events += s.Events
		switch {
		case s.Malformed:
			f.Malformed++
		case s.CrashDepth > 0:
			f.Crash++ // forced: the function throws before it republishes anything
		default:
			if s.MayCrash > 0 {
				f.MayCrash++
			}
			f.Verdicts.Add(s.Verdicts)
		}
	}
	return f
}

// LeaveAlone is the drain's rule for a blob it will not re-upload, decided from what was listed: the result the
// drain gives it. The drain checks the same again on what it reads at write time (age, a handled payload).
func LeaveAlone(cfg Config, t DrainTarget, o DrainOptions) (Result, bool) {
	r := Result{Name: t.Name}
	switch {
	case !IsRoot(t.Name):
		r.Outcome, r.Reason = OutcomeExcluded, Reason{Kind: ReasonNotRoot}
	case t.Refused != "":
		r.Outcome, r.Reason = OutcomeRefused, Reason{Kind: ReasonRefusedEntry, Err: t.Refused}
	case Untriggerable(t.Name):
		r.Outcome, r.Reason = OutcomeUntriggerable, Reason{Kind: ReasonUntriggerable}
	case t.HandledBy != "" && !o.IncludeHandled:
		r.Outcome, r.Reason = OutcomeHandled, Reason{Kind: ReasonHandled, Name: t.HandledBy}
	case t.ListedLive:
		r.Outcome, r.Reason = OutcomeYoung, Reason{Kind: ReasonListedYoung, TTL: cfg.TTL}
	case t.CrashDepth > 0 && !o.Force:
		return CrashResult(r, t.CrashDepth), true
	default:
		return r, false
	}
	return r, true
}

// Asks reports whether the drain has anything to ask about: blobs it will re-upload, or unreadable ones it tries.
// (Blobs over the size limit, handled and not stranded ones, it only reports.)
func (f Forecast) Asks() bool { return f.Blobs+f.Unreadable > 0 }

// TooLargeToRead is why a blob over blob.MaxBytes is not read: it is not a dead letter Event Grid wrote.
func TooLargeToRead() string {
	return fmt.Sprintf("not read: larger than %d MiB, so not a dead letter Event Grid wrote", blob.MaxBytes>>20)
}
