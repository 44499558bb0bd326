//go:build unix

package hook

import (
	"context"
	"time"
)

// reapGroup waits for what a hook's main process left behind, for the grace, then kills it.
func reapGroup(ctx context.Context, g interface {
	alive() bool
	kill()
}, grace time.Duration) {
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for g.alive() {
		select {
		case <-tick.C:
		case <-deadline.C:
			g.kill()
			return
		case <-ctx.Done():
			g.kill()
			return
		}
	}
}
