package twin

import (
	"context"
	"sync"
	"time"

	"github.com/deadletter/deadletter/store/dirstore"
)

// Runner runs a twin on the wall clock, Speed times as fast, while a rehearsal is open: the directory's clock runs
// with it, so the dashboard and every command read the twin's time, and the twin steps every tick to catch up —
// taking in, as BlobCreated events, whatever the operator's actions wrote meanwhile.
//
// Two locks, so the dashboard never waits on the twin: step guards the twin (a step, its state written to disk);
// clockMu guards only the clock, which Now and Toggle read and set from the dashboard's Update and View without
// any I/O. The next tick writes what Toggle set.
type Runner struct {
	tw    *Twin
	speed float64
	tick  time.Duration

	step sync.Mutex

	clockMu sync.Mutex
	clock   dirstore.Clock
	paused  bool
	gen     int // bumped by Toggle: a tick that read the clock before it does not write its own over it
	err     error
	script  Script // the twin's script as last changed (control.go), read by the header without the step lock
}

// NewRunner makes a runner for the twin at speed (twin seconds per wall second).
func NewRunner(tw *Twin, speed float64) *Runner {
	return &Runner{tw: tw, speed: speed, tick: 250 * time.Millisecond, script: tw.script}
}

// lease is how long the clock file runs on without its runner: killed, the rehearsal stops a moment later.
const lease = 3 * time.Second

// StartPaused makes Run start with the clock paused (Toggle runs it): the demo opens still, so a newcomer reads
// the first screen before the estate moves. Call it before Run.
func (r *Runner) StartPaused() {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	r.paused = true
}

// Run runs the twin until ctx ends; the clock is left stopped where it got to.
func (r *Runner) Run(ctx context.Context) error {
	now := time.Now()
	r.clockMu.Lock()
	r.clock = dirstore.Clock{At: r.tw.st.Now, Wall: now}
	if !r.paused {
		r.clock.Speed, r.clock.Until = r.speed, now.Add(lease)
	}
	c := r.clock
	r.clockMu.Unlock()
	r.step.Lock()
	err := r.tw.save(c)
	r.step.Unlock()
	if err != nil {
		return err
	}
	t := time.NewTicker(r.tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			r.step.Lock()
			defer r.step.Unlock()
			return r.tw.save(dirstore.Clock{At: r.tw.st.Now, Wall: time.Now()})
		case <-t.C:
			if err := r.catchUp(ctx); err != nil && ctx.Err() == nil {
				r.clockMu.Lock()
				r.err = err
				r.clockMu.Unlock()
				return err
			}
		}
	}
}

// catchUp steps the twin to where its clock is now, renews the clock's lease and writes both.
func (r *Runner) catchUp(ctx context.Context) error {
	r.step.Lock()
	defer r.step.Unlock()
	now := time.Now()
	r.clockMu.Lock()
	c, paused, gen, speed := r.clock, r.paused, r.gen, r.speed
	r.clockMu.Unlock()
	to := c.Now(now)
	if to.After(r.tw.st.Now) {
		if err := r.tw.step(ctx, to); err != nil {
			return err
		}
	}
	if !paused {
		c = dirstore.Clock{At: to, Wall: now, Speed: speed, Until: now.Add(lease)}
		r.clockMu.Lock()
		if r.gen == gen {
			r.clock = c
		} else {
			c = r.clock // paused meanwhile: the pause is what the file says
		}
		r.clockMu.Unlock()
	}
	return r.tw.save(c)
}

// Toggle pauses the clock, or runs it again, and reports whether it is paused now. It does no I/O: the next tick
// writes the clock.
func (r *Runner) Toggle() bool {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	now := time.Now()
	at := r.clock.Now(now)
	r.paused = !r.paused
	r.gen++
	r.clock = dirstore.Clock{At: at, Wall: now}
	if !r.paused {
		r.clock.Speed, r.clock.Until = r.speed, now.Add(lease)
	}
	return r.paused
}

// Now is the twin's clock, and whether it is paused.
func (r *Runner) Now() (time.Time, bool) {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	return r.clock.Now(time.Now()), r.paused
}

// Err is what stopped the runner, if anything did.
func (r *Runner) Err() error {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	return r.err
}
