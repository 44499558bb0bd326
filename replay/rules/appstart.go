package rules

import "time"

// AppStart is what the estate's own drain would re-upload if a worker of the Function App started now.
//
// The estate registers an app-start hook (the design's appStart.ts: drainDeadLetterContainer) that runs once per
// worker start — every restart, every scale-out — and re-uploads each root blob older than the TTL, by three
// rules: it skips archived/ and quarantine/ (compared as the function's own guard compares them, with case), it
// skips blobs younger than the TTL (their own trigger still has attempts), and it never rejects (a listing that
// fails leaves the app starting normally, the blobs for the next start). A re-upload dates the blob, so the next
// start skips it. It knows nothing else, so beside the stranded blobs it is for it re-uploads what deadletter's
// drain leaves: blobs the replay already handled (their events go out a second time) and blobs the replay crashes
// on (it throws again — at every start).
type AppStart struct {
	// Stranded are the blobs it is for: stranded, not handled, not a crash.
	Stranded []string
	// Handled are blobs the replay already handled that linger: the start republishes their events a second
	// time. HandledEvents counts those events (as far as their payloads were read).
	Handled       []string
	HandledEvents int
	// Crash are blobs the replay function crashes on: the start makes it throw again.
	Crash []string
	// Untriggerable are root blobs the replay subscription's filter drops (ARCHIVED/…): the start re-uploads
	// them, and nothing comes of it.
	Untriggerable []string
}

// Takes is how many blobs the start would re-upload.
func (a AppStart) Takes() int {
	return len(a.Stranded) + len(a.Handled) + len(a.Crash) + len(a.Untriggerable)
}

// Repeats says whether the start would do what deadletter's drain refuses to: republish handled events or make
// the replay throw again.
func (a AppStart) Repeats() bool { return len(a.Handled)+len(a.Crash) > 0 }

// Among is the part of a that concerns the given items (the blobs a drain was given): its handled and crash
// blobs among them, their events counted again; its stranded and untriggerable blobs are left as they are.
func (a AppStart) Among(items []Item) AppStart {
	out := AppStart{Stranded: a.Stranded, Untriggerable: a.Untriggerable}
	repeated := make(map[string]bool, len(a.Handled)+len(a.Crash))
	for _, n := range a.Handled {
		repeated[n] = true
	}
	for _, n := range a.Crash {
		repeated[n] = true
	}
	for i := range items {
		it := &items[i]
		if !repeated[it.Name] {
			continue
		}
		if it.Summary != nil && it.Summary.CrashDepth > 0 {
			out.Crash = append(out.Crash, it.Name)
			continue
		}
		out.Handled = append(out.Handled, it.Name)
		if it.Summary != nil {
			out.HandledEvents += it.Summary.Events
		}
	}
	return out
}

// AppStartDrain is what a worker start would re-upload now, of the listed items (the whole listing: the start
// lists the whole container), at service time now.
func (c Config) AppStartDrain(items []*Item, now time.Time) AppStart {
	var a AppStart
	for _, it := range items {
		a.Add(c, it, now)
	}
	return a
}

// Add counts one listed item into what a start would re-upload.
func (a *AppStart) Add(c Config, it *Item, now time.Time) {
	switch c.appStartPart(it, now) {
	case startHandled:
		a.Handled = append(a.Handled, it.Name)
		if it.Summary != nil {
			a.HandledEvents += it.Summary.Events
		}
	case startCrash:
		a.Crash = append(a.Crash, it.Name)
	case startUntriggerable:
		a.Untriggerable = append(a.Untriggerable, it.Name)
	case startStranded:
		a.Stranded = append(a.Stranded, it.Name)
	}
}

// Counts is the start's answer as counts.
func (a AppStart) Counts() AppStartCounts {
	return AppStartCounts{Stranded: len(a.Stranded), Handled: len(a.Handled), HandledEvents: a.HandledEvents, Crash: len(a.Crash),
		Untriggerable: len(a.Untriggerable)}
}

// The parts of what a start re-uploads (appStartPart).
const (
	startNone = iota
	startStranded
	startHandled
	startCrash
	startUntriggerable
)

// appStartPart is the one split of what a start would re-upload: nothing, or the part a blob is in.
func (c Config) appStartPart(it *Item, now time.Time) int {
	if !c.AppStartTakes(it, now) {
		return startNone
	}
	switch h, _ := handled(it); {
	case h:
		return startHandled
	case it.Summary != nil && it.Summary.CrashDepth > 0:
		return startCrash
	case Untriggerable(it.Name):
		return startUntriggerable
	}
	return startStranded
}

// AppStartTakes reports whether a worker start now would re-upload the blob: at the root by the function's own
// case-sensitive guard, and at least a TTL old by its Last-Modified. (A directory entry the store refuses to read
// is no blob in Azure: the start never sees one.)
func (c Config) AppStartTakes(it *Item, now time.Time) bool {
	return it.Refused == "" && c.Classify(it.Name, now.Sub(it.LastModified)) == PaneStranded
}

// AppStarts is what Azure's activity log says of the Function App's starts: the newest start or restart
// operated on it. A worker the platform starts on its own — a scale-out, a recycle — is no operation and is not
// in the log: workers may have started since, and each ran the drain.
type AppStarts struct {
	// Resource is the Function App's resource ID; empty when none is named (nothing is said of starts).
	Resource string
	// Last is the newest start or restart within the span read (zero: none in it).
	Last time.Time
	// Since is how far back the log was read.
	Since time.Time
	// Problem says why the log could not be read ("" when it was).
	Problem string
}

// Known reports whether the log was read.
func (a AppStarts) Known() bool { return a.Resource != "" && a.Problem == "" }

// StartMiss is whether the Function App's last start should have re-uploaded a stranded blob it left, and why it
// may have: what tells "the operator's drain is the only way" from "a restart takes it".
type StartMiss int

const (
	// NotMissed: the blob stranded after the last start (or no start is known): a worker start would take it.
	NotMissed StartMiss = iota
	// MissedYoung: it was younger than the TTL when the app last started, so that start left it to its own
	// trigger — which then ran out (its schedule had no attempt left in the hour, or Event Grid dropped it on
	// probation).
	MissedYoung
	// MissedListed: it was a TTL old already when the app last started, and is still here: that start's drain
	// did not take it — its listing failed (the hook never rejects), or it ran before the hook was deployed.
	MissedListed
)

// StartMissed says whether the app's last known start missed a blob the start's drain is for (stranded, not
// handled, not a crash, triggerable): judged only when the log was read and holds a start.
func (c Config) StartMissed(it *Item, a AppStarts, now time.Time) StartMiss {
	if !a.Known() || a.Last.IsZero() || !it.LastModified.Before(a.Last) || !c.AppStartTakes(it, now) {
		return NotMissed
	}
	if h, _ := handled(it); h || Untriggerable(it.Name) || it.Summary != nil && it.Summary.CrashDepth > 0 {
		return NotMissed
	}
	if a.Last.Sub(it.LastModified) < c.TTL {
		return MissedYoung
	}
	return MissedListed
}
