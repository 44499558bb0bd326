// Package metrics exports what `deadletter watch` sees to Prometheus: the container's blobs and events, the
// findings check raises, and the health of the watch itself. The estate has no alerting on its dead-letter
// container; these series let an existing Prometheus (or Azure Monitor managed Prometheus) page on them with the
// rules in deploy/prometheus/rules.yml.
//
// Measure turns one pass (snapshot, report, configuration) into plain Values without touching Prometheus, so the
// arithmetic is tested on its own; an Exporter holds the collectors, created and registered once, and applies
// each pass's Values to them; Listen serves its /metrics and /healthz.
package metrics

import (
	"cmp"
	"slices"
	"time"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

// MaxSubscriptions bounds the subscription label. Subscription names come from blob names, which anyone who can
// write to the container chooses: past this many distinct names the smallest are summed under
// OtherSubscription, so one careless or hostile writer cannot blow up the number of series.
const MaxSubscriptions = 100

// OtherSubscription is the subscription label of the blobs past MaxSubscriptions. Event Grid subscription names
// are letters, digits and hyphens only, so it cannot be mistaken for one.
const OtherSubscription = "_other"

// BlobKey is one deadletter_blobs series.
type BlobKey struct {
	Pane rules.Pane
	// Subscription is the first segment of the blob name after any archived/ or quarantine/ prefix, escaped
	// for display; empty for a name without a '/'.
	Subscription string
}

// EventKey is one deadletter_events series.
type EventKey struct {
	Pane    rules.Pane
	Verdict rules.Verdict
}

// Values is what one successful pass says, in the shape the series take.
type Values struct {
	// Blobs counts every listed blob by pane and subscription (only the combinations that occur).
	Blobs map[BlobKey]int
	// Events counts the events of the payloads watch reads (live, stranded and quarantine blobs; archived
	// copies are never read) by pane and verdict: for a root blob each event's primary verdict (what the replay
	// acts on), for a quarantine blob the reason the replay refused it. Malformed payloads have no verdicts.
	Events map[EventKey]int
	// Findings counts the blobs behind each kind check reports, every kind present (0 when it raised nothing),
	// exactly as check counts them: acknowledged and already-handled blobs excluded, quarantine only past
	// --max-quarantine.
	Findings map[rules.FindingKind]int
	// Quarantine is the quarantined blobs that need a human (not acknowledged), before --max-quarantine: the
	// alerting rule applies its own threshold to it.
	Quarantine int
	// Handled and Acked count the blobs kept out of the findings (see replay.Report); Suspicious the blobs whose
	// ack tags were ignored (forged or broken).
	Handled, Acked, Suspicious int
	// OldestStranded is the age of the oldest stranded blob that needs a drain (0 when none).
	OldestStranded time.Duration
	// Unread counts root and quarantine blobs whose payload a successful pass still could not judge (over the
	// size limit, gone between list and read): their verdicts, malformed and crash facts are unknown.
	Unread int
	// Handlers counts the subscriptions Event Grid's witness judged by subscription and verdict (1 each; past
	// MaxSubscriptions summed under OtherSubscription); empty without a witness, or for the topics it could not
	// read (WitnessProblems counts those).
	Handlers map[HandlerKey]int
	// ReplayDropped is, per replay subscription, the triggers Event Grid dropped in the witness's window.
	ReplayDropped map[string]int64
	// WitnessProblems counts what the witness could not read: its topics, or 1 when it cannot read at all.
	WitnessProblems int
}

// Measure computes the Values of one pass. r must be cfg.Check of s (with watch's options): the findings are
// taken from it so the metrics and `check --json` can never disagree; the per-blob breakdowns come from s.
func Measure(s *rules.Snapshot, r rules.Report, cfg rules.Config) Values {
	m := NewMeasurer(cfg)
	for _, it := range s.Items {
		m.AddItem(it, s.Now)
	}
	return m.Values(r)
}

// Measurer adds the per-blob breakdowns up page by page, so watch never holds the container to measure it.
type Measurer struct {
	cfg    rules.Config
	v      Values
	perSub map[string]int
}

// NewMeasurer starts an empty measurement.
func NewMeasurer(cfg rules.Config) *Measurer {
	return &Measurer{cfg: cfg, v: Values{Blobs: map[BlobKey]int{}, Events: map[EventKey]int{}}, perSub: map[string]int{}}
}

// Add takes blobs classified at the service time now, their payloads read where watch reads them.
func (m *Measurer) Add(items []rules.Item, now time.Time) {
	for i := range items {
		m.AddItem(&items[i], now)
	}
}

// AddItem counts one blob.
func (m *Measurer) AddItem(it *rules.Item, now time.Time) {
	v := &m.v
	sub := textfmt.Printable(it.Parsed.Subscription)
	m.perSub[sub]++
	v.Blobs[BlobKey{it.Pane, sub}]++
	if it.Pane == rules.PaneArchived {
		return
	}
	if it.Summary == nil {
		v.Unread++
		return
	}
	if m.cfg.AlertsOf(it, now).Crash {
		return // the replay crashes on it: none of its events gets the fate its verdict says
	}
	for _, vd := range rules.AllVerdicts {
		if n := it.Summary.Verdicts.Of(vd); n > 0 {
			v.Events[EventKey{it.Pane, vd}] += n
		}
	}
}

// Values completes the measurement with the pass's report (r must cover the same blobs).
func (m *Measurer) Values(r rules.Report) Values {
	v := m.v
	v.Findings, v.Handled, v.Acked, v.Quarantine = map[rules.FindingKind]int{}, r.Handled, r.Acked, r.Quarantine
	v.Suspicious = r.SuspiciousCount
	for _, k := range rules.FindingKinds {
		if k.OfBlobs() { // the witness's findings count subscriptions, not blobs
			v.Findings[k] = 0
		}
	}
	for _, f := range r.Findings {
		if f.Kind.OfBlobs() {
			v.Findings[f.Kind] = f.Count
		}
	}
	if f, ok := r.Find(rules.FindingStranded); ok && r.Now.After(f.Oldest) {
		v.OldestStranded = r.Now.Sub(f.Oldest)
	}
	if len(m.perSub) > MaxSubscriptions {
		v.Blobs = foldSubscriptions(v.Blobs, m.perSub)
	}
	v.Handlers, v.ReplayDropped, v.WitnessProblems = witnessValues(r.Witness)
	return v
}

// foldSubscriptions keeps the MaxSubscriptions subscriptions with the most blobs (ties by name, so the choice is
// stable from pass to pass) and sums the rest under OtherSubscription.
func foldSubscriptions(blobs map[BlobKey]int, perSub map[string]int) map[BlobKey]int {
	subs := make([]string, 0, len(perSub))
	for s := range perSub {
		subs = append(subs, s)
	}
	slices.SortFunc(subs, func(a, b string) int { return cmp.Or(cmp.Compare(perSub[b], perSub[a]), cmp.Compare(a, b)) })
	kept := make(map[string]bool, MaxSubscriptions)
	for _, s := range subs[:MaxSubscriptions] {
		kept[s] = true
	}
	out := make(map[BlobKey]int, len(blobs))
	for k, n := range blobs {
		if !kept[k.Subscription] {
			k.Subscription = OtherSubscription
		}
		out[k] += n
	}
	return out
}
