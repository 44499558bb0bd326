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
type Runner struct {
	tw    *Twin
	speed float64
	tick  time.Duration

	mu     sync.Mutex
	clock  dirstore.Clock
	paused bool
	err    error
}

// NewRunner makes a runner for the twin at speed (twin seconds per wall second).
func NewRunner(tw *Twin, speed float64) *Runner {
	return &Runner{tw: tw, speed: speed, tick: 250 * time.Millisecond}
}

// Run runs the twin until ctx ends; the clock is left stopped where it got to.
func (r *Runner) Run(ctx context.Context) error {
	r.mu.Lock()
	now := time.Now()
	r.clock = dirstore.Clock{At: r.tw.st.Now, Wall: now, Speed: r.speed, Until: now.Add(lease)}
	err := r.tw.save(r.clock)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	t := time.NewTicker(r.tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.tw.save(dirstore.Clock{At: r.tw.st.Now, Wall: time.Now()})
		case <-t.C:
			if err := r.catchUp(ctx); err != nil && ctx.Err() == nil {
				r.mu.Lock()
				r.err = err
				r.mu.Unlock()
				return err
			}
		}
	}
}

// lease is how long the clock file runs on without its runner: killed, the rehearsal stops a moment later.
const lease = 3 * time.Second

// catchUp steps the twin to where its clock is now, and renews the clock's lease.
func (r *Runner) catchUp(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	to := r.clock.Now(now)
	if to.After(r.tw.st.Now) {
		if err := r.tw.step(ctx, to); err != nil {
			return err
		}
	}
	if r.paused {
		return r.tw.save(r.clock)
	}
	r.clock = dirstore.Clock{At: to, Wall: now, Speed: r.speed, Until: now.Add(lease)}
	return r.tw.save(r.clock)
}

// Toggle pauses the clock, or runs it again; it reports whether it is paused now.
func (r *Runner) Toggle() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	at := r.clock.Now(now)
	r.paused = !r.paused
	speed := r.speed
	if r.paused {
		speed = 0
	}
	r.clock = dirstore.Clock{At: at, Wall: now, Speed: speed}
	if !r.paused {
		r.clock.Until = now.Add(lease)
	}
	if err := r.tw.save(r.clock); err != nil {
		r.err = err
	}
	return r.paused
}

// Now is the twin's clock, and whether it is paused.
func (r *Runner) Now() (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.clock.Now(time.Now()), r.paused
}

// Err is what stopped the runner, if anything did.
func (r *Runner) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
