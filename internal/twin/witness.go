package twin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
)

// The twin is Event Grid, so it knows every delivery attempt: it counts them per subscription per minute of its
// clock as Azure Monitor would (DeliverySuccessCount, DeliveryAttemptFailCount by Error, DeadLetteredCount,
// DroppedEventCount), keeps the last witnessKeep of them in its state, and serves them as the second witness
// (replay.Witness) over its directory — the same interface, the same verdicts (replay.Judge) as Azure's.

// witnessKeep bounds the minutes a twin keeps: a longer --witness-window reads what there is.
const witnessKeep = 3 * time.Hour

// WitnessSource names the twin's witness in what the front ends print.
const WitnessSource = "Event Grid metrics (the twin's simulation)"

// The twin's Azure resources, as the witness names them: the application topic, the storage account's system
// topic the storage-ledger subscription is on, and the dead-letter account's system topic the replay's trigger
// subscription is on.
const (
	estateIDs         = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/estate/providers/Microsoft.EventGrid/"
	AppTopicID        = estateIDs + "topics/estate-events"
	AssetsTopicID     = estateIDs + "systemTopics/estateassets"
	DeadLetterTopicID = estateIDs + "systemTopics/estatedeadletter"
	// ReplaySubscription is the replay trigger's event subscription, as Event Grid's metrics name it.
	ReplaySubscription = "DEADLETTER-REPLAY"
)

// Minute is one subscription's counts for one minute of the twin's clock (At is its start).
type Minute struct {
	At           time.Time        `json:"at"`
	Succeeded    int64            `json:"succeeded,omitempty"`
	Failed       int64            `json:"failed,omitempty"`
	FailedBy     map[string]int64 `json:"failedBy,omitempty"` // by Event Grid's word for the outcome (Busy, NotFound…)
	DeadLettered int64            `json:"deadLettered,omitempty"`
	Dropped      int64            `json:"dropped,omitempty"`
}

// count adds to the minute of the twin's clock of a subscription (the twin's name for it: ReplayFunction for the
// trigger's), and lets go of every subscription's minutes older than witnessKeep.
func (tw *Twin) count(sub string, add func(*Minute)) {
	if tw.st.Metrics == nil {
		tw.st.Metrics = map[string][]Minute{}
	}
	at := tw.st.Now.UTC().Truncate(time.Minute)
	ms := tw.st.Metrics[sub]
	if n := len(ms); n == 0 || !ms[n-1].At.Equal(at) {
		ms = append(ms, Minute{At: at})
	}
	add(&ms[len(ms)-1])
	tw.st.Metrics[sub] = ms
	keep := at.Add(-witnessKeep)
	for s, ms := range tw.st.Metrics { // (every subscription's: a quiet one's old minutes go too)
		if len(ms) == 0 || !ms[0].At.Before(keep) {
			continue
		}
		i := 0
		for i < len(ms) && ms[i].At.Before(keep) {
			i++
		}
		if i == len(ms) {
			delete(tw.st.Metrics, s)
		} else {
			tw.st.Metrics[s] = ms[i:] // (a window sliding over its array: the next append that grows it lets the head go)
		}
	}
}

// countAttempt counts one delivery attempt: delivered, or failed with Event Grid's word for why.
func (tw *Twin) countAttempt(sub string, ok bool, status int, outcome string) {
	tw.count(sub, func(m *Minute) {
		if ok {
			m.Succeeded++
			return
		}
		m.Failed++
		why := outcome
		if why == "" {
			why = fmt.Sprintf("HTTP %d", status)
		}
		if m.FailedBy == nil {
			m.FailedBy = map[string]int64{}
		}
		m.FailedBy[why]++
	})
}

func (tw *Twin) countDeadLettered(sub string) { tw.count(sub, func(m *Minute) { m.DeadLettered++ }) }

// countDropped counts a trigger Event Grid has given up on: at its first scheduled attempt past its hour, untried
// (the time-to-live is checked only then). Its blob has been stranded by its age since the hour ended: the drop
// confirms it.
func (tw *Twin) countDropped(sub string) { tw.count(sub, func(m *Minute) { m.Dropped++ }) }

// checkMetrics is parseState's check of the counts: known subscriptions, times in range, in order, none negative,
// no more than witnessKeep of them.
func (st *State) checkMetrics(script Script) error {
	subs := map[string]bool{ReplayFunction: true}
	for _, s := range script.Subs {
		subs[s.Name] = true
	}
	for sub, ms := range st.Metrics {
		if !subs[sub] {
			return fmt.Errorf("metrics[%q]: not a subscription of %s", sub, script.Name)
		}
		if len(ms) > int(witnessKeep/time.Minute)+1 {
			return fmt.Errorf("metrics[%q]: %d minutes, want at most %d", sub, len(ms), int(witnessKeep/time.Minute)+1)
		}
		for i, m := range ms {
			field := fmt.Sprintf("metrics[%q][%d]", sub, i)
			if err := inRange(field+".at", m.At); err != nil {
				return err
			}
			if m.At.After(st.Now) {
				return fmt.Errorf("%s.at %s: after now %s", field, m.At.Format(time.RFC3339), st.Now.Format(time.RFC3339))
			}
			if i > 0 && !m.At.After(ms[i-1].At) {
				return fmt.Errorf("%s.at %s: not after the minute before it", field, m.At.Format(time.RFC3339))
			}
			if m.Succeeded < 0 || m.Failed < 0 || m.DeadLettered < 0 || m.Dropped < 0 {
				return fmt.Errorf("%s: a count below 0", field)
			}
			for k, n := range m.FailedBy {
				if n < 0 {
					return fmt.Errorf("%s.failedBy[%q]: %d, want ≥ 0", field, k, n)
				}
			}
		}
	}
	return nil
}

// Witness is what Event Grid's metrics say of the twin's subscriptions over the window's complete minutes, as of
// the latest complete minute at the twin's clock: every subscription of the script (named in capitals, as the
// metrics and the dead-letter folders name them), the replay trigger's apart. A window longer than the minutes
// the twin keeps reads what it keeps.
func (tw *Twin) Witness(window time.Duration) rules.WitnessReport {
	window = min(max(window.Truncate(time.Minute), time.Minute), witnessKeep)
	asOf := tw.st.Now.UTC().Truncate(time.Minute)
	start := asOf.Add(-window)
	judge := func(name, sub, topic string) rules.HandlerHealth {
		var ms []rules.MinuteCounts
		for _, m := range tw.st.Metrics[sub] {
			if m.At.Before(start) || !m.At.Before(asOf) {
				continue
			}
			by := map[string]int64{}
			for k, n := range m.FailedBy {
				by[k] = n
			}
			ms = append(ms, rules.MinuteCounts{At: m.At, Succeeded: m.Succeeded, Failed: m.Failed, DeadLettered: m.DeadLettered,
				Dropped: m.Dropped, FailedBy: by})
		}
		return rules.Judge(name, topic, ms, asOf)
	}
	rep := rules.WitnessReport{Source: WitnessSource, AsOf: asOf, Window: window}
	for _, s := range tw.script.Subs {
		topic := AppTopicID
		if s.System {
			topic = AssetsTopicID
		}
		rep.Handlers = append(rep.Handlers, judge(strings.ToUpper(s.Name), s.Name, topic))
	}
	rep.Replay = []rules.HandlerHealth{judge(ReplaySubscription, ReplayFunction, DeadLetterTopicID)}
	rep.App = tw.ActivityLog()
	return rep
}

// FunctionAppID is the twin's Function App, as its activity log names it.
const FunctionAppID = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/estate/providers/Microsoft.Web/sites/estate-functions"

// ActivityLog is the twin's answer to Azure's activity log: the newest start or restart of its Function App, at
// or before its clock (a scale-out is no operation, and the log leaves it out, as Azure's does). The twin keeps
// its newest starts only, so Since is the oldest it remembers when it forgot any.
func (tw *Twin) ActivityLog() rules.AppStarts {
	a := rules.AppStarts{Resource: FunctionAppID, Since: tw.st.Start}
	if len(tw.st.Starts) >= maxStarts {
		a.Since = tw.st.Starts[0].At
	}
	for _, at := range tw.OperatedStarts() {
		if !at.After(tw.st.Now) && at.After(a.Last) {
			a.Last = at
		}
	}
	return a
}

// DirWitness is the twin's witness over its directory: every read takes the twin as it stands (without its
// lock, as twin status does while a demo runs it), so any command given the directory — and the demo's
// dashboard, whose runner saves every step — reads Event Grid's metrics as the twin counted them.
type DirWitness struct {
	root   string
	window time.Duration
}

// NewDirWitness is the witness of the twin a directory holds, over window.
func NewDirWitness(root string, window time.Duration) DirWitness {
	return DirWitness{root: root, window: window}
}

// Witness reads the twin's counts; the now it is given is the caller's wall clock, and the twin's clock is what
// counts. A twin it cannot read is a problem said, never a guess.
func (w DirWitness) Witness(ctx context.Context, _ time.Time) rules.WitnessReport {
	if err := ctx.Err(); err != nil {
		return rules.WitnessReport{Source: WitnessSource, Problems: []rules.WitnessProblem{{Topic: AppTopicID, Err: err.Error()}}}
	}
	tw, err := peekLight(w.root)
	if err != nil {
		return rules.WitnessReport{Source: WitnessSource, Problems: []rules.WitnessProblem{{Topic: AppTopicID, Err: err.Error()}}}
	}
	return tw.Witness(w.window)
}
