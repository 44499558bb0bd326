package rules

import "strings"

// Canaries are one blob per subscription of what a drain takes — the first in the plan's order, the oldest dead
// letter — to drain first and watch; the rest wait for their canary's word on the handler: an event has two
// lives, and a drain into a handler that still fails spends one of each event's.
func (p *DrainPlan) Canaries() []Item {
	var canaries []Item
	seen := map[string]bool{}
	for _, it := range p.Taken {
		if sub := strings.ToUpper(it.Parsed.Subscription); !seen[sub] {
			seen[sub] = true
			canaries = append(canaries, it)
		}
	}
	return canaries
}

// CanaryWord is what a canary told of its subscription's handler.
type CanaryWord uint8

// The words.
const (
	// CanaryWaiting: nothing yet — the replay has not taken it, or nothing has reported on its events since.
	CanaryWaiting CanaryWord = iota
	// CanaryDelivered: its republished events were delivered (Event Grid says so), or — the container's word —
	// none dead-lettered again within the TTL and Event Grid's dead-letter delay.
	CanaryDelivered
	// CanaryFailing: the handler failed them again (Event Grid says so), or they dead-lettered again.
	CanaryFailing
	// CanaryNotTried: the replay refused every event of it (quarantined): the handler was not tried, and the rest
	// go on as an unpaced drain would.
	CanaryNotTried
)

// Going says the subscription's other blobs may be drained on this word.
func (w CanaryWord) Going() bool { return w == CanaryDelivered || w == CanaryNotTried }
