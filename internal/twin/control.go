package twin

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/store/dirstore"
)

// A running rehearsal's controls, for the dashboard's twin screen: its clock (pause, speed, jump ahead), its
// script (changed through the one place, Twin.changeScript) and a look at it all with the account. Each takes the
// step lock, so the dashboard calls them from a command, never from Update or View; FailingNow alone is for View.

// Look is the rehearsal as it stands: the clock, the script and the account of every event.
type Look struct {
	Clock   time.Time
	Speed   float64
	Paused  bool
	Start   time.Time
	Script  Script
	Account Account
	Source  string
}

// Look reads the rehearsal, its account included (which reads the container).
func (r *Runner) Look(ctx context.Context) (Look, error) {
	r.step.Lock()
	defer r.step.Unlock()
	acct, err := r.tw.Check(ctx)
	now, paused := r.Now()
	r.clockMu.Lock()
	speed := r.speed
	r.clockMu.Unlock()
	return Look{Clock: now, Speed: speed, Paused: paused, Start: r.tw.st.Start, Script: r.tw.script, Account: acct, Source: r.tw.st.Source}, err
}

// SetSpeed runs the clock at speed from now on (between 1 and dirstore.MaxSpeed), and returns it. Like Toggle it
// does no I/O and never waits on a step (at ×100000 one may take seconds): the next tick writes the clock.
func (r *Runner) SetSpeed(speed float64) float64 {
	speed = min(max(speed, 1), dirstore.MaxSpeed)
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	now := time.Now()
	r.speed = speed
	r.gen++
	r.clock = dirstore.Clock{At: r.clock.Now(now), Wall: now}
	if !r.paused {
		r.clock.Speed, r.clock.Until = speed, now.Add(lease)
	}
	return speed
}

// Jump runs the twin ahead by d at once (as twin advance does) and its clock on from there.
func (r *Runner) Jump(ctx context.Context, d time.Duration) error {
	r.step.Lock()
	defer r.step.Unlock()
	r.clockMu.Lock()
	to := r.clock.Now(time.Now()).Add(d)
	r.clockMu.Unlock()
	if err := r.tw.step(ctx, to); err != nil {
		return err
	}
	r.clockMu.Lock()
	now := time.Now()
	r.gen++
	r.clock = dirstore.Clock{At: to, Wall: now}
	if !r.paused {
		r.clock.Speed, r.clock.Until = r.speed, now.Add(lease)
	}
	c := r.clock
	r.clockMu.Unlock()
	return r.tw.save(c)
}

// Change changes the script from the clock's time now (c.From and c.To are then offsets from now; To
// UntilFurtherNotice for no end), saved at once, the clock running on.
func (r *Runner) Change(c Change) (Change, error) {
	r.step.Lock()
	defer r.step.Unlock()
	r.clockMu.Lock()
	now := r.clock.Now(time.Now())
	clock := r.clock
	r.clockMu.Unlock()
	at := now.Sub(r.tw.st.Start)
	c.From += at
	if c.To != UntilFurtherNotice {
		c.To += at
	}
	c, err := r.tw.changeScript(c, clock)
	if err == nil {
		r.clockMu.Lock()
		r.script = r.tw.script
		r.clockMu.Unlock()
	}
	return c, err
}

// FailingNow says what the script has down at the clock's time and how long each failure has left to run:
// "webhooks 404 (1h51m left), replay 503" ("" when every handler and the replay are up). It does no I/O.
func (r *Runner) FailingNow() string {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	return failingAt(&r.script, r.clock.Now(time.Now()), r.tw.st.Start)
}

func failingAt(s *Script, now, start time.Time) string {
	t := now.Sub(start)
	var out []string
	who := map[string]bool{}
	for _, w := range s.Windows {
		if t < w.From || t >= w.To {
			continue
		}
		name := w.Sub
		if name == AllHandlers {
			name = "every handler"
		}
		if who[name] {
			continue
		}
		who[name] = true
		say := name
		if w.Status != 0 {
			say += fmt.Sprintf(" %d", w.Status)
		} else {
			say += " " + w.Outcome
		}
		if w.To != UntilFurtherNotice {
			say += " (" + textfmt.Duration(start.Add(w.To).Sub(now)) + " left)" // time remaining, not how long it has failed
		}
		out = append(out, say)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// Speed is the clock's speed (twin seconds per second). It does no I/O.
func (r *Runner) Speed() float64 {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	return r.speed
}
