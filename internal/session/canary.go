package session

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// Canary is one blob drained first for its subscription, and what it told of the handler.
type Canary struct {
	// Sub is the subscription (in capitals, as its folder), Blob the canary's name.
	Sub, Blob string
	Word      rules.CanaryWord
	// Why says the word with its source and clock.
	Why string
	// TakenAt is when the replay took it (zero while it waits at the root).
	TakenAt time.Time
	ids     []string // its events' original ids, once read (the container's word)
}

// CanariesOf are the canaries of drained blobs (the results of a canary drain): the ones drained, to watch.
func CanariesOf(res []rules.Result) []Canary {
	var out []Canary
	for _, r := range res {
		if r.Outcome == rules.OutcomeDrained {
			out = append(out, Canary{Sub: strings.ToUpper(rules.ParseBlobName(r.Name).Subscription), Blob: r.Name})
		}
	}
	return out
}

// AwaitCanaries watches drained canaries until each has told, or ctx ends (those still waiting come back so).
// The replay takes a canary (it leaves the root for its archived/ copy); then Event Grid's witness says whether
// the handler delivered or failed since; with no witness for its subscription, the container says it once the
// TTL and Event Grid's dead-letter delay have passed: a dead letter of its events again, or none. It looks every
// poll (the service's clock decides the waits: on a twin whose clock runs fast, seconds) and says, each time,
// what it waits for.
func (s *Session) AwaitCanaries(ctx context.Context, cs []Canary, since time.Time, poll time.Duration, say func(string)) []Canary {
	for {
		now := s.Now(ctx)
		rep := s.ReadWitness(ctx, now)
		var waiting []string
		for i := range cs {
			if c := &cs[i]; c.Word == rules.CanaryWaiting {
				s.lookAt(ctx, c, rep, now, since)
				if c.Word == rules.CanaryWaiting {
					waiting = append(waiting, c.Sub+": "+c.Why)
				}
			}
		}
		if len(waiting) == 0 || ctx.Err() != nil {
			return cs
		}
		if say != nil {
			say("waiting for the canaries — " + strings.Join(waiting, " · "))
		}
		select {
		case <-ctx.Done():
			return cs
		case <-time.After(poll):
		}
	}
}

// lookAt asks what one canary tells now.
func (s *Session) lookAt(ctx context.Context, c *Canary, rep rules.WitnessReport, now, since time.Time) {
	if c.TakenAt.IsZero() {
		w, err := replay.WhereIs(ctx, s.Container(), store.BlobInfo{Name: c.Blob, LastModified: since}, since)
		switch {
		case err != nil:
			c.Why = "could not look at it: " + err.Error()
			return
		case w.Kind == replay.WhereArchived:
			c.TakenAt = w.At
		case w.Kind == replay.WhereQuarantined:
			c.Word, c.Why = rules.CanaryNotTried, "the replay quarantined every event of it at "+textfmt.Time(w.At)+": the handler was not tried"
			return
		case w.Kind == replay.WhereDeleted:
			c.Why = "it is gone (deleted by hand?): nothing to tell"
			return
		default:
			c.Why = "waiting for the replay to take it"
			return
		}
	}
	from := c.TakenAt.Truncate(time.Minute)
	for _, h := range rep.Handlers {
		if !strings.EqualFold(h.Subscription, c.Sub) || rep.None != "" {
			continue
		}
		switch {
		case h.Verdict == rules.HandlerFailing && !h.LastFailure.Before(from):
			c.Word, c.Why = rules.CanaryFailing, fmt.Sprintf("%s: %d failed attempt(s), none delivered since %s", rep.Source, h.Failed, textfmt.Time(h.LastFailure))
		case !h.LastSuccess.IsZero() && !h.LastSuccess.Before(from) && !h.LastFailure.After(h.LastSuccess):
			c.Word, c.Why = rules.CanaryDelivered, fmt.Sprintf("%s: delivered since %s (%d delivered in its window)", rep.Source, textfmt.Time(from), h.Succeeded)
		default:
			c.Why = fmt.Sprintf("taken by the replay at %s; %s has counted nothing of it yet (its metrics are a few minutes late)", textfmt.Time(c.TakenAt), rep.Source)
		}
		return
	}
	s.containerWord(ctx, c, now)
}

// containerWord is what the container tells of a canary taken by the replay, without a witness: its events
// dead-lettered again (failing), or none did within the TTL and Event Grid's dead-letter delay (delivered, as far
// as the container can tell).
func (s *Session) containerWord(ctx context.Context, c *Canary, now time.Time) {
	cfg := s.Config()
	if c.ids == nil {
		a, _ := rules.Twins(c.Blob)
		b, err := s.Container().Read(ctx, a, store.MaxBlobBytes)
		if err != nil {
			c.Why = "could not read its archived copy: " + err.Error()
			return
		}
		for _, ev := range rules.ParsePayload(b.Body).Events {
			c.ids = append(c.ids, rules.EventOf(ev.ID, cfg.Separator))
		}
	}
	snap, err := s.List(ctx)
	if err != nil {
		c.Why = "could not list the container: " + err.Error()
		return
	}
	js, _, err := s.Loader().PlanTrace(snap, c.ids).Run(ctx, nil)
	if err != nil {
		c.Why = "could not follow its events: " + err.Error()
		return
	}
	for _, j := range js {
		for _, p := range j.Passes {
			if p.Blob != c.Blob && p.DeadLettered.After(c.TakenAt) {
				c.Word, c.Why = rules.CanaryFailing, "its events dead-lettered again at "+textfmt.Time(p.DeadLettered)+" in "+textfmt.Printable(p.Blob)
				return
			}
		}
	}
	until := c.TakenAt.Add(cfg.TTL + rules.DeadLetterDelay)
	if !now.Before(until) {
		c.Word, c.Why = rules.CanaryDelivered, "none of its events dead-lettered again within the TTL and Event Grid's five minutes (the container's word: presumed delivered)"
		return
	}
	c.Why = fmt.Sprintf("no Event Grid witness for it: the container can tell at %s (in %s), the TTL and Event Grid's five minutes after the replay took it",
		textfmt.Time(until), textfmt.Duration(until.Sub(now)))
}
