package rules

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"
)

// FindingKind names what needs a human.
type FindingKind string

// The findings check reports, worst first.
const (
	FindingExpiring      FindingKind = "expiring"
	FindingStranded      FindingKind = "stranded"
	FindingReplayStalled FindingKind = "replayStalled"
	FindingCrash         FindingKind = "crash"
	// FindingUntriggerable: root blobs the replay subscription's filter never delivers (see Untriggerable).
	FindingUntriggerable FindingKind = "untriggerable"
	FindingQuarantine    FindingKind = "quarantine"
	FindingMalformed     FindingKind = "malformed"
	// FindingHandlerFailing: event subscriptions Event Grid's own metrics say are failing now (the second witness;
	// see Witness). Its names are subscriptions, not blobs.
	FindingHandlerFailing FindingKind = "handlerFailing"
	// FindingReplayDropping: the replay subscription's triggers Event Grid dropped in the witness's window —
	// blobs stranded now, before the TTL shows them. Its names are subscriptions.
	FindingReplayDropping FindingKind = "replayDropping"
	// FindingAppStartRepeats: root blobs the replay handled already (an archived or quarantine copy beside them)
	// that a worker start of the Function App would re-upload — deadletter's drain leaves them, the estate's
	// app-start drain cannot tell them apart, so every restart or scale-out republishes their events a second
	// time (AppStart.Handled). A crash blob the start would re-upload is the crash finding's, which says so.
	FindingAppStartRepeats FindingKind = "appStartRepeats"
)

// FindingKinds lists the kinds in the order reports give them.
var FindingKinds = [...]FindingKind{FindingExpiring, FindingStranded, FindingReplayStalled, FindingCrash, FindingUntriggerable,
	FindingQuarantine, FindingMalformed, FindingHandlerFailing, FindingReplayDropping, FindingAppStartRepeats}

// Silenced reports whether an acknowledgement silences a finding of this kind: work someone is on (stranded,
// quarantined, a stalled replay). What is about to be lost, and what the replay can never take, stays a finding.
func (k FindingKind) Silenced() bool {
	return k == FindingStranded || k == FindingQuarantine || k == FindingReplayStalled
}

// OfBlobs reports whether a finding of this kind counts blobs; the witness's (handlerFailing, replayDropping)
// count subscriptions, so series of blob counts leave them out.
func (k FindingKind) OfBlobs() bool {
	return k != FindingHandlerFailing && k != FindingReplayDropping
}

// Pane is the one pane every blob of this kind is in, when there is one (ls --pane lists them there).
func (k FindingKind) Pane() (Pane, bool) {
	switch k {
	case FindingStranded:
		return PaneStranded, true
	case FindingQuarantine:
		return PaneQuarantine, true
	case FindingReplayStalled:
		return PaneLive, true
	case FindingAppStartRepeats:
		return PaneStranded, true
	}
	return 0, false
}

// Finding is one thing the estate's missing alerting would have paged about.
type Finding struct {
	Kind  FindingKind
	Count int
	// Oldest is the Last-Modified of the oldest blob concerned; FirstExpiry the earliest lifecycle deletion.
	Oldest, FirstExpiry time.Time
	// Names are the blobs concerned, oldest first (only when CheckOptions.Names asked for them); Written holds
	// each one's Last-Modified, in the same order.
	Names   []string
	Written []time.Time
	// Acked lists the acknowledged blobs of this kind, oldest first (with CheckOptions.Names): for a kind an ack
	// silences they are not in Count; for the others they are, and are listed here as acknowledged too.
	Acked []AckedBlob
	// Events counts, for the witness's findings, the failed delivery attempts or the dropped triggers behind it.
	Events int64
}

// AckedBlob is an acknowledged blob as a report lists it.
type AckedBlob struct {
	Name string
	Ack  Ack
}

// SuspiciousAck is a blob whose ack tags deadletter ignored, and why.
type SuspiciousAck struct {
	Name, Why string
}

// CheckOptions are the thresholds of a check beyond the Config's.
type CheckOptions struct {
	// MaxQuarantine: more quarantined blobs than this is a finding.
	MaxQuarantine int
	// Names collects the blobs behind each finding (check and watch name them; the dashboard's badges only count).
	Names bool
}

// Report is the container's health.
type Report struct {
	Healthy  bool
	Now      time.Time
	Counts   map[Pane]int
	Findings []Finding
	// Lost names the blobs the previous pass found expiring that the lifecycle rule has deleted since (see
	// Config.Lost); watch sets it, and Changes reports them as lost rather than resolved.
	Lost []string
	// Handled counts the lingering copies the replay already handled (they raise nothing); Acked the blobs an
	// operator acknowledged (active acks, whatever they silence).
	Handled, Acked int
	// Quarantine counts the quarantined blobs that need a human (not handled, not acknowledged), before
	// CheckOptions.MaxQuarantine decides whether they are a finding.
	Quarantine int
	// Acknowledged are the kinds every blob of which is acknowledged (so no finding raises them), with those blobs
	// (CheckOptions.Names).
	Acknowledged []Finding
	// Suspicious lists the blobs whose ack tags were ignored (forged, broken, too long), at most MaxSuspicious of
	// them; SuspiciousCount counts them all.
	Suspicious      []SuspiciousAck
	SuspiciousCount int
	// Unreadable counts the root and quarantine blobs whose payload could not be read (refused entries, reads
	// that failed, payloads over the size limit): whatever they hold is unknown, so the report is not healthy.
	// FirstUnreadable names one, with why.
	Unreadable      int
	FirstUnreadable string
	// Witness is what Event Grid's witness read for this report (see AddWitness); empty when none is configured.
	Witness WitnessReport
	// AppStart counts what a worker start of the Function App would re-upload now (AppStart, counted).
	AppStart AppStartCounts
}

// AppStartCounts is AppStart as counts: what a worker start would re-upload now, split as AppStart splits it.
type AppStartCounts struct {
	Stranded, Handled, HandledEvents, Crash, Untriggerable int
}

// Takes is how many blobs the start would re-upload.
func (a AppStartCounts) Takes() int { return a.Stranded + a.Handled + a.Crash + a.Untriggerable }

// Repeats: the start would republish handled events or make the replay throw again.
func (a AppStartCounts) Repeats() bool { return a.Handled+a.Crash > 0 }

// add counts one item the start would take (AppStart.Add's split).
func (a *AppStartCounts) add(c Config, it *Item, now time.Time) {
	switch c.appStartPart(it, now) {
	case startHandled:
		a.Handled++
		if it.Summary != nil {
			a.HandledEvents += it.Summary.Events
		}
	case startCrash:
		a.Crash++
	case startUntriggerable:
		a.Untriggerable++
	case startStranded:
		a.Stranded++
	}
}

// AddWitness adds the second witness's findings to a report: a handlerFailing finding naming each subscription
// Event Grid says is failing now, a replayDropping one naming each replay subscription whose triggers it dropped.
// A witness that could not be read raises nothing (unknown is not unhealthy); its problems stay in r.Witness.
func (r *Report) AddWitness(w WitnessReport) {
	r.Witness = w
	if f := witnessFinding(FindingHandlerFailing, w.Failing(nil), func(h HandlerHealth) int64 { return h.Failed }); f.Count > 0 {
		r.Findings = append(r.Findings, f)
	}
	if f := witnessFinding(FindingReplayDropping, w.Dropping(), func(h HandlerHealth) int64 { return h.Dropped }); f.Count > 0 {
		r.Findings = append(r.Findings, f)
	}
	r.Healthy = len(r.Findings) == 0 && r.Unreadable == 0
}

func witnessFinding(kind FindingKind, hs []HandlerHealth, n func(HandlerHealth) int64) Finding {
	f := Finding{Kind: kind, Count: len(hs)}
	for _, h := range hs {
		f.Names = append(f.Names, h.Subscription)
		f.Events += n(h)
	}
	return f
}

// Find returns the finding of a kind, if any.
func (r Report) Find(k FindingKind) (Finding, bool) {
	for _, f := range r.Findings {
		if f.Kind == k {
			return f, true
		}
	}
	return Finding{}, false
}

// Check computes the findings of a snapshot: the check command, watch, the metrics and the dashboard's badges all
// call it. Payload-derived findings (malformed, crash, handled through a quarantine copy) count the blobs read so
// far. One pass, no allocation per blob unless names are wanted.
func (c Config) Check(s *Snapshot, o CheckOptions) Report {
	k := c.NewChecker(o)
	k.now(s.Now)
	for _, it := range s.Items {
		k.add(it, s.Now)
	}
	return k.Report()
}

// Checker adds a report up page by page, so a check of a million-blob container holds only what its findings
// name, never the container.
type Checker struct {
	cfg Config
	o   CheckOptions
	r   Report
	acc [len(FindingKinds)]findingAcc
}

// NewChecker starts an empty report.
func (c Config) NewChecker(o CheckOptions) *Checker {
	k := &Checker{cfg: c, o: o, r: Report{Counts: map[Pane]int{}, Findings: []Finding{}}}
	for _, p := range Panes {
		k.r.Counts[p] = 0
	}
	return k
}

// Add takes blobs classified at the service time now (their payloads read, where the findings need them).
func (k *Checker) Add(items []Item, now time.Time) {
	k.now(now)
	for i := range items {
		k.add(&items[i], now)
	}
}

func (k *Checker) now(now time.Time) {
	if now.After(k.r.Now) {
		k.r.Now = now
	}
}

// add counts one blob.
func (k *Checker) add(it *Item, now time.Time) {
	k.r.Counts[it.Pane]++
	if it.ReadFailed && it.Pane != PaneArchived {
		if k.r.Unreadable == 0 {
			k.r.FirstUnreadable = it.Name + ": " + it.ReadErr
		}
		k.r.Unreadable++
	}
	k.r.AppStart.add(k.cfg, it, now)
	a := k.cfg.AlertsOf(it, now)
	if a.Suspicious != "" {
		if k.r.SuspiciousCount++; len(k.r.Suspicious) < MaxSuspicious {
			k.r.Suspicious = append(k.r.Suspicious, SuspiciousAck{Name: it.Name, Why: a.Suspicious})
		}
	}
	if a.Acked {
		k.r.Acked++
	}
	if a.Handled {
		k.r.Handled++
		if k.cfg.AppStartTakes(it, now) {
			k.of(FindingAppStartRepeats).add(it, a, k.o.Names, false)
		}
		return
	}
	for _, kind := range FindingKinds {
		if !raises(kind, it, a) {
			continue
		}
		if kind == FindingQuarantine && !a.Acked {
			k.r.Quarantine++
		}
		k.of(kind).add(it, a, k.o.Names, a.Acked && kind.Silenced())
	}
}

// MaxSuspicious is how many blobs with ignored ack tags a report names.
const MaxSuspicious = 20

// raises reports whether a blob (not handled) raises a finding of kind, acknowledged or not.
func raises(kind FindingKind, it *Item, a Alerts) bool {
	switch kind {
	case FindingExpiring:
		return a.Expiring
	case FindingStranded:
		// A drain cannot help an untriggerable blob nor one the replay crashes on: their own findings say so, and
		// one blob gets one voice.
		return it.Pane == PaneStranded && !a.Untriggerable && !a.Crash
	case FindingReplayStalled:
		return a.Stalled
	case FindingCrash:
		return a.Crash
	case FindingUntriggerable:
		return a.Untriggerable
	case FindingQuarantine:
		return it.Pane == PaneQuarantine
	case FindingMalformed:
		return a.Malformed
	}
	return false
}

// Report is the findings so far.
func (k *Checker) Report() Report {
	r := k.r
	r.Counts = maps.Clone(k.r.Counts)
	r.Findings = []Finding{}
	for i, kind := range FindingKinds {
		f, ok := k.acc[i].finding(kind, k.cfg)
		switch {
		case !ok && len(f.Acked) > 0:
			r.Acknowledged = append(r.Acknowledged, f) // every blob of it acknowledged: said, not raised
		case !ok, kind == FindingQuarantine && f.Count <= k.o.MaxQuarantine:
		default:
			r.Findings = append(r.Findings, f)
		}
	}
	r.Healthy = len(r.Findings) == 0 && r.Unreadable == 0
	return r
}

// of is the accumulator of a kind: k.acc holds one per FindingKinds entry, in that order (found by a look over
// six kinds, so no list of positions has to be kept in step with it by hand).
func (k *Checker) of(kind FindingKind) *findingAcc {
	for i, fk := range FindingKinds {
		if fk == kind {
			return &k.acc[i]
		}
	}
	panic("replay: unknown finding kind " + string(kind))
}

type findingAcc struct {
	count  int
	oldest time.Time
	blobs  []namedBlob
	acked  []namedBlob
}

// namedBlob is what a finding keeps of a blob: its name, when it was written and its ack, not the blob.
type namedBlob struct {
	name string
	at   time.Time
	ack  *Ack
}

// add counts a blob into the finding, or — silenced by an ack — only lists it as acknowledged.
func (f *findingAcc) add(it *Item, a Alerts, names, silenced bool) {
	if names && a.Acked {
		f.acked = append(f.acked, namedBlob{it.Name, it.LastModified, a.Ack})
	}
	if silenced {
		return
	}
	if f.count == 0 || it.LastModified.Before(f.oldest) {
		f.oldest = it.LastModified
	}
	f.count++
	if names {
		f.blobs = append(f.blobs, namedBlob{it.Name, it.LastModified, nil})
	}
}

// byAge orders blobs oldest first, then by name.
func byAge(blobs []namedBlob) []namedBlob {
	blobs = slices.Clone(blobs)
	slices.SortStableFunc(blobs, func(a, b namedBlob) int { return cmp.Or(a.at.Compare(b.at), strings.Compare(a.name, b.name)) })
	return blobs
}

// finding is the accumulated finding; the first of its blobs to expire is the oldest (one retention for all).
func (f *findingAcc) finding(k FindingKind, c Config) (Finding, bool) {
	out := Finding{Kind: k, Count: f.count, Oldest: f.oldest, FirstExpiry: c.ExpiresAt(f.oldest)}
	if f.count == 0 {
		out.Oldest, out.FirstExpiry = time.Time{}, time.Time{}
	}
	if f.blobs != nil {
		blobs := byAge(f.blobs)
		out.Names, out.Written = make([]string, len(blobs)), make([]time.Time, len(blobs))
		for i, b := range blobs {
			out.Names[i], out.Written[i] = b.name, b.at
		}
	}
	for _, b := range byAge(f.acked) {
		out.Acked = append(out.Acked, AckedBlob{Name: b.name, Ack: *b.ack})
	}
	return out, f.count > 0
}
