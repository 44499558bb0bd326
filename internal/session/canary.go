package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// CanaryPlan is a drain canary first, planned from one listing (PlanCanary, in the caller's own time: a screen
// in Update): the canaries' drain, and the drain of the rest of each subscription, to run if its canary was
// delivered. RunCanary carries it out without the listing, so a screen's snapshot is never read off its goroutine.
type CanaryPlan struct {
	Canaries *DrainPreview
	// Rest is the drain of each subscription's other blobs (in capitals, as Event Grid names the folders).
	Rest map[string]*DrainPreview
	// Left are the results of the blobs the drain leaves whatever the canaries say (crash, handled, young…).
	Left []rules.Result
	subs []string // Rest's subscriptions, in the plan's order
}

// PlanCanary plans drain p canary first: one blob per subscription (rules.DrainPlan.Canaries), then the rest.
func (s *Session) PlanCanary(snap *rules.Snapshot, p *DrainPreview, force present.Force) *CanaryPlan {
	canaries := p.Canaries()
	first := map[string]bool{}
	for _, c := range canaries {
		first[c.Name] = true
	}
	bySub := map[string][]rules.Item{}
	cp := &CanaryPlan{Rest: map[string]*DrainPreview{}, Left: p.Left}
	for _, it := range p.Taken {
		if first[it.Name] {
			continue
		}
		sub := strings.ToUpper(it.Parsed.Subscription)
		if bySub[sub] == nil {
			cp.subs = append(cp.subs, sub)
		}
		bySub[sub] = append(bySub[sub], it)
	}
	cp.Canaries = s.PreviewDrain(snap, canaries, p.Options, p.Witness, force)
	for sub, items := range bySub {
		cp.Rest[sub] = s.PreviewDrain(snap, items, p.Options, p.Witness, force)
	}
	return cp
}

// RunCanary drains the canaries, waits (at most wait) for what each tells of its handler (AwaitCanaries, saying
// what it waits for through run.Say), then drains the rest of each subscription whose canary was delivered — or
// whose events the replay refused, so the handler was not tried — and leaves the others stranded, each result
// saying why and that the same drain resumes. A blob the replay (or anyone) took meanwhile is said handled, not
// gone. Each drain is recorded. Cancelled while it waits, it touches nothing more.
func (s *Session) RunCanary(ctx context.Context, cp *CanaryPlan, wait time.Duration, run Run) (Done, []Canary, error) {
	since := s.Now(ctx)
	done, err := s.Drain(ctx, cp.Canaries, run)
	if err != nil {
		return done, nil, err
	}
	done.Results = slices.Concat(cp.Left, done.Results)
	report(run, cp.Left)
	wctx, cancel := context.WithTimeout(ctx, wait)
	last := ""
	cs := s.AwaitCanaries(wctx, CanariesOf(done.Results), since, time.Second, func(line string) {
		if line != last && run.Say != nil {
			last = line
			run.Say(line)
		}
	})
	cancel()
	word := map[string]Canary{}
	for _, c := range cs {
		word[c.Sub] = c
		if run.Say != nil && ctx.Err() == nil {
			run.Say(fmt.Sprintf("canary %s: %s — %s", c.Sub, present.CanaryVerdict(c.Word), textfmt.Printable(c.Why))) // (its blob is in the results)
		}
	}
	for _, sub := range cp.subs {
		rest := cp.Rest[sub]
		c, heard := word[sub]
		var left []rules.Result
		switch {
		case ctx.Err() != nil: // interrupted: the rest are never touched
			left = leave(rest.Items, rules.Reason{})
		case heard && c.Word.Going():
			more, err := s.drainWhatIsLeft(ctx, rest, run)
			done.Results, done.Warnings = append(done.Results, more.Results...), append(done.Warnings, more.Warnings...)
			if err != nil {
				return done, cs, err
			}
			continue
		case heard && c.Word == rules.CanaryFailing:
			left = leave(rest.Items, rules.Reason{Kind: rules.ReasonHandlerFailing, Name: sub, Err: c.Why})
		case heard:
			left = leave(rest.Items, rules.Reason{Kind: rules.ReasonCanaryUnheard, Name: sub, Err: "nothing within " + textfmt.Duration(wait) + ": " + c.Why})
		default:
			left = leave(rest.Items, rules.Reason{Kind: rules.ReasonCanaryUnheard, Name: sub, Err: "its canary was not drained (see its result)"})
		}
		done.Results = append(done.Results, left...)
		report(run, left)
	}
	return done, cs, nil
}

// leave is the results of blobs a canary drain leaves stranded: held back for why (none: cancelled, untouched).
func leave(items []rules.Item, why rules.Reason) []rules.Result {
	out := make([]rules.Result, len(items))
	for i, it := range items {
		out[i] = rules.Result{Name: it.Name, Outcome: rules.OutcomeHeld, Reason: why}
		if why.Kind == rules.ReasonNone {
			out[i].Outcome = rules.OutcomeCancelled
		}
	}
	return out
}

// report tells a run's progress of results decided without a write.
func report(run Run, rs []rules.Result) {
	for _, r := range rs {
		if run.Progress != nil {
			run.Progress(r)
		}
	}
}

// drainWhatIsLeft drains a subscription's rest once its canary was heard: planned before the wait, so a blob the
// replay (or another drain, or a worker start) took meanwhile is said handled by its copy — not gone — and is not
// asked of the container again.
func (s *Session) drainWhatIsLeft(ctx context.Context, rest *DrainPreview, run Run) (Done, error) {
	var taken []rules.Result
	keep := rest.Items[:0:0]
	for _, it := range rest.Items {
		if _, err := s.Container().Stat(ctx, it.Name); errors.Is(err, store.ErrNotFound) {
			if w, werr := replay.WhereIs(ctx, s.Container(), it.Info, time.Time{}); werr == nil && w.Kind != replay.WhereDeleted && w.Kind != replay.WhereHere {
				taken = append(taken, rules.HandledResult(rules.Result{Name: it.Name}, w.Name))
				continue
			}
		}
		keep = append(keep, it)
	}
	report(run, taken)
	if len(keep) == 0 {
		return Done{Results: taken}, nil
	}
	p := rest
	if len(keep) < len(rest.Items) {
		p = &DrainPreview{DrainPlan: rest.DrainPlan.Only(keep), Witness: rest.Witness, Said: rest.Said}
	}
	d, err := s.Drain(ctx, p, run)
	d.Results = append(taken, d.Results...)
	return d, err
}

// WaitingPrefix begins what AwaitCanaries says it waits for (a screen shows the latest alone).
const WaitingPrefix = "waiting for the canaries — "

// Canary is one blob drained first for its subscription, and what it told of the handler.
type Canary struct {
	// Sub is the subscription (in capitals, as its folder), Blob the canary's name.
	Sub, Blob string
	Word      rules.CanaryWord
	// Why says the word with its source and clock.
	Why string
	// TakenAt is when the replay took it (zero while it waits at the root).
	TakenAt time.Time
	ids     []string  // its events' original ids, once read (the container's word)
	looked  time.Time // when the container was last listed for its word (service time)
}

// containerLook is how often, on the estate's clock, a canary with no witness lists the container for its
// word: a listing of a million blobs is not a once-a-second thing, and a dead letter comes a TTL late anyway.
const containerLook = time.Minute

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
	first, polls := s.Now(ctx), 0
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
			line := WaitingPrefix + strings.Join(waiting, " · ")
			if polls++; polls > 5 && now.Equal(first) {
				line += " · the estate's clock stands still at " + textfmt.Time(now) + " (a paused rehearsal: nothing moves until it runs)"
			}
			say(line)
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
	// Event Grid counts per minute: a failure in the very minute the replay took the canary may be the handler's
	// last one before it (a handler just brought back, its subscription still on probation) — so a failure tells
	// only from the next minute on, when it is surely the canary's (a failing handler is retried within a minute;
	// one whose error Event Grid does not retry is never told, and the canary ends unheard: held, never drained).
	from := c.TakenAt.Truncate(time.Minute)
	for _, h := range rep.Handlers {
		if !strings.EqualFold(h.Subscription, c.Sub) || rep.None != "" {
			continue
		}
		switch {
		case h.Verdict == rules.HandlerFailing && h.LastFailure.After(from):
			c.Word, c.Why = rules.CanaryFailing, fmt.Sprintf("%s: %d failed attempt(s), none delivered since %s", rep.Source, h.Failed, textfmt.Time(h.LastFailure))
		case h.Verdict == rules.HandlerFailing && h.LastFailure.Equal(from):
			c.Why = fmt.Sprintf("taken by the replay at %s; %s counts a failure in that minute, which may be from before it: waiting for the next minute's", textfmt.Time(c.TakenAt), rep.Source)
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
	until := c.TakenAt.Add(cfg.TTL + rules.DeadLetterDelay)
	if !c.looked.IsZero() && now.Before(c.looked.Add(containerLook)) && now.Before(until) {
		return // (its Why stands from the last look)
	}
	c.looked = now
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
	if !now.Before(until) {
		c.Word, c.Why = rules.CanaryDelivered, "none of its events dead-lettered again within the TTL and Event Grid's five minutes (the container's word: presumed delivered)"
		return
	}
	c.Why = fmt.Sprintf("no Event Grid witness for it: the container can tell at %s (in %s), the TTL and Event Grid's five minutes after the replay took it",
		textfmt.Time(until), textfmt.Duration(until.Sub(now)))
}
