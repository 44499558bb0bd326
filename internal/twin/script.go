package twin

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
)

// Sub is one Event Grid subscription of the estate and the handler behind it.
type Sub struct {
	Name      string  `json:"name"`      // the subscription's name (its dead letters are named after it, in capitals)
	EventType string  `json:"eventType"` // what its events carry
	System    bool    `json:"system"`    // a system-topic subscription (storage's own event type)
	Rate      float64 `json:"rate"`      // events published per hour
}

// Window is a stretch of the script when a handler is down: every delivery to it fails with Status and Outcome.
// Sub names the subscription; AllHandlers is the whole Function App's handlers; ReplayFunction the replay.
type Window struct {
	Sub     string        `json:"sub"`
	From    time.Duration `json:"from"` // from the script's start
	To      time.Duration `json:"to"`
	Status  int           `json:"status"`  // the HTTP status (0: no response — a timeout)
	Outcome string        `json:"outcome"` // Event Grid's word for it (Busy, NotFound, TimedOut…)
	Why     string        `json:"why"`
}

// Poison is one event a buggy publisher sends that no handler accepts (a 400), so it is dead-lettered at once:
// a payload the estate's schema refuses ("schema"), or data nested past what the replay can serialize ("deep").
type Poison struct {
	Sub  string        `json:"sub"`
	At   time.Duration `json:"at"`
	Kind string        `json:"kind"`
}

// Who a window can name besides a subscription.
const (
	AllHandlers    = "*"
	ReplayFunction = "replay"
)

// Script is a scenario: the estate's subscriptions, when their handlers and the replay are down, the poison
// events, and where (from its start) a rehearsal opens.
type Script struct {
	Name    string        `json:"name"`
	Opens   time.Duration `json:"opens"`
	Subs    []Sub         `json:"subs"`
	Windows []Window      `json:"windows"`
	Poison  []Poison      `json:"poison"`
	// Starts are the Function App's starts, in time order: each runs the estate's app-start drain.
	Starts []AppStart `json:"starts,omitempty"`
}

// down is the window a delivery to sub at offset t fails in (nil: the handler answers).
func (s *Script) down(sub string, t time.Duration) *Window {
	for i := range s.Windows {
		w := &s.Windows[i]
		if t >= w.From && t < w.To && (w.Sub == sub || w.Sub == AllHandlers && sub != ReplayFunction) {
			return w
		}
	}
	return nil
}

// Scenarios are the scripts the twin knows.
var Scenarios = []string{"incident", "replay-stopped", "push-outage"}

// ScriptOf is a scenario's script.
func ScriptOf(name string) (Script, error) {
	switch name {
	case "", "incident":
		return incident(false), nil
	case "replay-stopped":
		return incident(true), nil
	case "push-outage":
		return pushOutage(), nil
	}
	return Script{}, fmt.Errorf("unknown scenario %q (have: incident, replay-stopped, push-outage)", name)
}

// incident is the estate a month into a bad stretch, opened where the on-call finds it:
//   - a month ago the budget guard stopped the Function App for four hours (the replay with it). Its start's
//     drain re-uploaded what was a TTL old and left the last hour's dead letters to their own triggers, which had
//     no attempt left in their hour: stranded ever since, and now a day from the lifecycle rule;
//   - three days ago a bad deploy of the friend-requests handler answered 500 for eight hours while the replay
//     ran: its events went round the replay until the cap quarantined them (capped events, restorable now);
//   - two days ago the storage ledger timed out for two hours: its dead letters are quarantined (no function
//     claims storage's event type);
//   - yesterday evening the Function App was stopped again, for five hours, and its start's drain could not list
//     the container: the stop's stranded dead letters, of every subscription, and the month-old ones stay;
//   - since it came back the webhook handler answers 404 (its URL changed; its events are not idempotent), the
//     push-notification service is busy until twenty minutes after the opening, and the blob-deletion handler
//     fails from two hours before the opening until three hours after (its events are idempotent: a drain before
//     then dead-letters them again, one attempt further on); a buggy publisher sent a thread reply nested too
//     deep to serialize and, an hour later, one the schema refuses.
//
// replayStopped adds the replay being stopped again just after the rehearsal opens: what STALLED looks like,
// and then stranded.
// estateSubs are the estate's event subscriptions and the events each publishes an hour (push: pushRate).
func estateSubs(pushRate float64) []Sub {
	return []Sub{
		{Name: "push-notifications", EventType: "ProcessPushNotification", Rate: pushRate},
		{Name: "friend-requests", EventType: "ProcessFriendRequest", Rate: 8},
		{Name: "thread-replies", EventType: "ProcessThreadReply", Rate: 6},
		{Name: "webhooks", EventType: "ProcessWebhook", Rate: 3},
		{Name: "blob-deletions", EventType: "ProcessBlobDeletion", Rate: 4},
		{Name: "storage-ledger", EventType: "Microsoft.Storage.BlobCreated", System: true, Rate: 2},
	}
}

// budgetGuardStart ends the budget guard's first stop: the Function App starts, and its worker runs the drain.
var budgetGuardStart = AppStart{At: budgetGuardHours * time.Hour, Kind: AppStarted, Workers: 1, Why: "the budget guard started the Function App again"}

// budgetGuardHours is how long the budget guard's first stop lasts: long enough for what it strands to be the
// last hour's dead letters, which the start's drain leaves (younger than the TTL) and their triggers never reach
// (Event Grid gives an event up at the first scheduled attempt past its time-to-live: about 1h47m after it was
// published, with the estate's hour).
const budgetGuardHours = 4

// budgetGuardStop is the estate's first hours in every scenario: the budget guard stopped the Function App,
// every handler and the replay with it.
var budgetGuardStop = [2]Window{
	{Sub: AllHandlers, From: 0, To: budgetGuardHours * time.Hour, Status: 503, Outcome: "Busy", Why: "the budget guard stopped the Function App"},
	{Sub: ReplayFunction, From: 0, To: budgetGuardHours * time.Hour, Status: 503, Outcome: "Busy", Why: "the budget guard stopped the Function App"},
}

func incident(replayStopped bool) Script {
	const day = 24 * time.Hour
	opens := 29*day + 2*time.Hour
	at := func(d time.Duration) time.Duration { return opens + d } // offsets from where the rehearsal opens
	s := Script{Name: "incident", Opens: opens,
		Subs: estateSubs(12),
		Windows: []Window{
			budgetGuardStop[0], budgetGuardStop[1],
			{Sub: "friend-requests", From: at(-3 * day), To: at(-3*day + 8*time.Hour), Status: 500, Outcome: "InternalServerError", Why: "a bad deploy of the friend-requests handler (rolled back)"},
			{Sub: "storage-ledger", From: at(-2 * day), To: at(-2*day + 2*time.Hour), Outcome: "TimedOut", Why: "the ledger's table timed out"},
			{Sub: AllHandlers, From: at(-10 * time.Hour), To: at(-5 * time.Hour), Outcome: "TimedOut", Why: "the budget guard stopped the Function App again"},
			{Sub: ReplayFunction, From: at(-10 * time.Hour), To: at(-5 * time.Hour), Outcome: "TimedOut", Why: "the budget guard stopped the Function App again"},
			{Sub: "webhooks", From: at(-3 * time.Hour), To: at(2 * time.Hour), Status: 404, Outcome: "NotFound", Why: "the webhook endpoint's URL changed"},
			{Sub: "push-notifications", From: at(-40 * time.Minute), To: at(20 * time.Minute), Status: 503, Outcome: "Busy", Why: "the push service is throttling"},
			{Sub: "blob-deletions", From: at(-2 * time.Hour), To: at(3 * time.Hour), Status: 500, Outcome: "InternalServerError", Why: "the blob-deletion handler fails on a full queue"},
		},
		Starts: []AppStart{budgetGuardStart, {At: at(-5 * time.Hour), Kind: AppStarted, Workers: 1, ListingFails: true,
			Why: "the budget guard started the Function App again; the drain's listing failed (the app's identity had no token yet)"}},
		Poison: []Poison{
			{Sub: "thread-replies", At: at(-4 * time.Hour), Kind: "deep"},
			{Sub: "thread-replies", At: at(-3 * time.Hour), Kind: "schema"},
		},
	}
	if replayStopped {
		s.Name = "replay-stopped"
		s.Windows = append(s.Windows, Window{Sub: ReplayFunction, From: at(5 * time.Minute), To: at(3 * time.Hour), Status: 503, Outcome: "Busy",
			Why: "the replay function was stopped (a bad deploy)"})
	}
	return s
}

// UntilFurtherNotice is a window's end when none is set: the handler stays as it is until the script is changed.
const UntilFurtherNotice = time.Duration(math.MaxInt64)

// check is a script as a step relies on it (one read from a twin's state).
func (s *Script) check() error {
	if len(s.Subs) > 10000 || len(s.Windows) > 10000 || len(s.Poison) > 10000 {
		return fmt.Errorf("more than 10,000 subscriptions, windows or poison events")
	}
	subs := map[string]bool{}
	for i, sub := range s.Subs {
		switch {
		case sub.Name == "" || sub.Name == AllHandlers || strings.EqualFold(sub.Name, ReplayFunction):
			return fmt.Errorf("subs[%d].name %q: want a subscription's name", i, sub.Name)
		case subs[sub.Name]:
			return fmt.Errorf("subs[%d].name %q: twice", i, sub.Name)
		case !(sub.Rate >= 0 && sub.Rate <= 3600):
			return fmt.Errorf("subs[%d].rate %g: want 0 to 3600 events an hour", i, sub.Rate)
		}
		subs[sub.Name] = true
	}
	for i, w := range s.Windows {
		switch {
		case w.Sub != AllHandlers && w.Sub != ReplayFunction && !subs[w.Sub]:
			return fmt.Errorf("windows[%d].sub %q: not a subscription of the script", i, w.Sub)
		case w.From < 0 || w.To <= w.From:
			return fmt.Errorf("windows[%d]: from %s to %s is no stretch of time", i, w.From, w.To)
		}
	}
	if err := s.checkPoison(subs); err != nil {
		return err
	}
	return s.checkStarts()
}

// checkPoison: each names a subscription of the script, in time order (the twin sends them in list order).
func (s *Script) checkPoison(subs map[string]bool) error {
	for i, p := range s.Poison {
		if !subs[p.Sub] {
			return fmt.Errorf("poison[%d].sub %q: not a subscription of the script", i, p.Sub)
		}
		if i > 0 && p.At < s.Poison[i-1].At {
			return fmt.Errorf("poison[%d].at %s: before the poison event listed before it", i, p.At)
		}
	}
	return nil
}

func (s *Script) checkStarts() error {
	if len(s.Starts) > 10000 {
		return fmt.Errorf("more than 10,000 starts")
	}
	for i, st := range s.Starts {
		if err := st.check(i); err != nil {
			return err
		}
		if i > 0 && st.At < s.Starts[i-1].At {
			return fmt.Errorf("starts[%d].at %s: before the start listed before it", i, st.At)
		}
	}
	return nil
}

// Who is the script's own spelling of a subscription named in any case, or ReplayFunction for "replay".
func (s *Script) Who(name string) (string, error) {
	if strings.EqualFold(name, ReplayFunction) {
		return ReplayFunction, nil
	}
	var names []string
	for _, sub := range s.Subs {
		if strings.EqualFold(sub.Name, name) {
			return sub.Name, nil
		}
		names = append(names, sub.Name)
	}
	return "", fmt.Errorf("%q is not a subscription of the twin's script (have: %s, or replay)", name, strings.Join(names, ", "))
}

// Change is one edit of a script: a subscription's handler (or the replay) down with a status, or up, from From
// until To (offsets from the script's start; To UntilFurtherNotice when no end is given).
type Change struct {
	Who      string        `json:"who"`
	Down     bool          `json:"down"`
	From, To time.Duration `json:"-"`
	Status   int           `json:"status,omitempty"`
	Why      string        `json:"why,omitempty"`
}

// Apply makes the change: whatever the script said of Who between From and To is replaced — by a window down
// with Status, or by nothing (up). A window of every handler (AllHandlers) it overlaps is split into one per
// subscription first, so bringing one handler up leaves the others as they were. Who is taken in any case.
func (s *Script) Apply(c Change) (Change, error) {
	who, err := s.Who(c.Who)
	if err != nil {
		return c, err
	}
	c.Who = who
	if c.To <= c.From {
		return c, fmt.Errorf("until must come after at")
	}
	overlaps := func(w Window) bool { return w.From < c.To && c.From < w.To }
	var out []Window
	for _, w := range s.Windows {
		if w.Sub == AllHandlers && who != ReplayFunction && overlaps(w) {
			for _, sub := range s.Subs {
				v := w
				v.Sub = sub.Name
				out = append(out, v)
			}
			continue
		}
		out = append(out, w)
	}
	kept := out[:0:0]
	for _, w := range out {
		if w.Sub != who || !overlaps(w) {
			kept = append(kept, w)
			continue
		}
		if w.From < c.From {
			v := w
			v.To = c.From
			kept = append(kept, v)
		}
		if c.To < w.To {
			v := w
			v.From = c.To
			kept = append(kept, v)
		}
	}
	if c.Down {
		why := c.Why
		if why == "" {
			why = "set by hand (twin script set)"
		}
		kept = append(kept, Window{Sub: who, From: c.From, To: c.To, Status: c.Status, Outcome: OutcomeOf(c.Status), Why: why})
	}
	sort.SliceStable(kept, func(i, j int) bool {
		if kept[i].From != kept[j].From {
			return kept[i].From < kept[j].From
		}
		return kept[i].Sub < kept[j].Sub
	})
	s.Windows = kept
	return c, nil
}

// OutcomeOf is Event Grid's word for a handler's answer (0: none — a timeout).
func OutcomeOf(status int) string {
	switch status {
	case 0:
		return "TimedOut"
	case 400:
		return "BadRequest"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 404:
		return "NotFound"
	case 413:
		return "PayloadTooLarge"
	case 429:
		return "TooManyRequests"
	case 500:
		return "InternalServerError"
	case 503:
		return "Busy"
	}
	return fmt.Sprintf("HTTP%d", status)
}

// topError is the error with the most failed attempts (ties: the first in name order; "" for none).
func topError(by map[string]int64) string {
	top, n := "", int64(0)
	for _, k := range slices.Sorted(maps.Keys(by)) {
		if by[k] > n {
			top, n = k, by[k]
		}
	}
	return top
}

// Down is the window a subscription's handler (or the replay) is down in at offset t (nil: up).
func (s Script) Down(who string, t time.Duration) *Window { return s.down(who, t) }

// Failure is what a failing handler's deliveries met, as the evidence tells it: the HTTP status (0: none, a
// timeout) and Event Grid's word for the outcome.
type Failure struct {
	Status  int
	Outcome string
}

// statusOf is the HTTP status Event Grid's outcome word stands for (OutcomeOf's inverse; ok false for a word
// that names none).
func statusOf(outcome string) (int, bool) {
	for _, st := range []int{0, 400, 401, 403, 404, 413, 429, 500, 503} {
		if strings.EqualFold(OutcomeOf(st), outcome) {
			return st, true
		}
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(strings.ToUpper(outcome), "HTTP")); err == nil && len(outcome) == 7 && n >= 100 && n <= 599 {
		return n, true // OutcomeOf's own word for any other status: HTTP502
	}
	return 0, false
}

// Infer is the script the evidence of a container implies, for a twin of it: every subscription found (its
// events published no more — the twin rehearses what the container holds), each down until further notice when
// it is failing — by Event Grid's metrics when a witness gave a verdict on it, else by its readiness (a dead
// letter inside the last TTL) — and up when not; the replay running. A handler down fails as the evidence says it
// did: with the error Event Grid's metrics counted most, else as its newest dead letter's last delivery ended
// (met), else 503 Busy.
func Infer(subs []string, ready []rules.Readiness, wit rules.WitnessReport, met map[string]Failure) Script {
	s := Script{Name: "snapshot", Windows: []Window{}, Poison: []Poison{}}
	failing := map[string]string{}
	for _, r := range ready {
		if r.Failing {
			failing[r.Subscription] = fmt.Sprintf("readiness: %d dead-letter blob(s) in the TTL before the snapshot", r.LastWindow)
		}
	}
	seen := map[string]bool{}
	for _, name := range subs {
		if name == "" || seen[name] || name == AllHandlers || strings.EqualFold(name, ReplayFunction) {
			continue
		}
		seen[name] = true
		s.Subs = append(s.Subs, Sub{Name: name})
		why, down := failing[name]
		f, known := met[name]
		if h, ok := wit.HandlerOf(name); ok && h.Verdict > rules.HandlerNoDeliveries {
			down = h.Verdict == rules.HandlerFailing
			why = "Event Grid's metrics: its handler is " + h.Verdict.String()
			if top := topError(h.FailedBy); top != "" {
				f, known = Failure{Status: 500, Outcome: top}, true
				if st, ok := statusOf(top); ok {
					f.Status = st
				}
			}
		}
		// (Probation is Event Grid skipping attempts, not an answer of the handler's: no evidence of how it fails.)
		if !known || f.Outcome == "" || strings.EqualFold(f.Outcome, "Probation") {
			f = Failure{Status: 503, Outcome: OutcomeOf(503)}
		}
		if down {
			s.Windows = append(s.Windows, Window{Sub: name, From: 0, To: UntilFurtherNotice, Status: f.Status, Outcome: f.Outcome, Why: why})
		}
	}
	return s
}
