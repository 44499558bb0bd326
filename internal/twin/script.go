package twin

import (
	"fmt"
	"time"
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
//   - a month ago the Function App was stopped for two hours (the budget guard): the replay was down with it, so
//     the dead letters of that first hour found no replay within their trigger's hour — stranded ever since, and
//     now a day from the lifecycle rule;
//   - two days ago the storage ledger timed out for two hours: its dead letters are quarantined (no function
//     claims storage's event type);
//   - yesterday evening the Function App was stopped again, for three hours: more stranded dead letters, of
//     every subscription;
//   - since it came back the webhook handler answers 404 (its URL changed) and the push-notification service is
//     busy; a buggy publisher sent a thread reply the schema refuses and one nested too deep to serialize.
//
// replayStopped adds the replay being stopped again just after the rehearsal opens: what STALLED looks like,
// and then stranded.
func incident(replayStopped bool) Script {
	const day = 24 * time.Hour
	opens := 29*day + 2*time.Hour
	at := func(d time.Duration) time.Duration { return opens + d } // offsets from where the rehearsal opens
	s := Script{Name: "incident", Opens: opens,
		Subs: []Sub{
			{Name: "push-notifications", EventType: "ProcessPushNotification", Rate: 12},
			{Name: "friend-requests", EventType: "ProcessFriendRequest", Rate: 8},
			{Name: "thread-replies", EventType: "ProcessThreadReply", Rate: 6},
			{Name: "webhooks", EventType: "ProcessWebhook", Rate: 3},
			{Name: "blob-deletions", EventType: "ProcessBlobDeletion", Rate: 4},
			{Name: "storage-ledger", EventType: "Microsoft.Storage.BlobCreated", System: true, Rate: 2},
		},
		Windows: []Window{
			{Sub: AllHandlers, From: 0, To: 2 * time.Hour, Status: 503, Outcome: "Busy", Why: "the budget guard stopped the Function App"},
			{Sub: ReplayFunction, From: 0, To: 2 * time.Hour, Status: 503, Outcome: "Busy", Why: "the budget guard stopped the Function App"},
			{Sub: "storage-ledger", From: at(-2 * day), To: at(-2*day + 2*time.Hour), Outcome: "TimedOut", Why: "the ledger's table timed out"},
			{Sub: AllHandlers, From: at(-8 * time.Hour), To: at(-5 * time.Hour), Outcome: "TimedOut", Why: "the budget guard stopped the Function App again"},
			{Sub: ReplayFunction, From: at(-8 * time.Hour), To: at(-5 * time.Hour), Outcome: "TimedOut", Why: "the budget guard stopped the Function App again"},
			{Sub: "webhooks", From: at(-3 * time.Hour), To: at(2 * time.Hour), Status: 404, Outcome: "NotFound", Why: "the webhook endpoint's URL changed"},
			{Sub: "push-notifications", From: at(-40 * time.Minute), To: at(20 * time.Minute), Status: 503, Outcome: "Busy", Why: "the push service is throttling"},
		},
		Poison: []Poison{
			{Sub: "thread-replies", At: at(-3 * time.Hour), Kind: "schema"},
			{Sub: "thread-replies", At: at(-2 * time.Hour), Kind: "deep"},
		},
	}
	if replayStopped {
		s.Name = "replay-stopped"
		s.Windows = append(s.Windows, Window{Sub: ReplayFunction, From: at(5 * time.Minute), To: at(3 * time.Hour), Status: 503, Outcome: "Busy",
			Why: "the replay function was stopped (a bad deploy)"})
	}
	return s
}
