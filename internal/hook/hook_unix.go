//go:build unix

package hook

import (
	"context"
	"os/exec"
	"syscall"
	"time"
)

func shell(command string) *exec.Cmd { return exec.Command("sh", "-c", command) }

// group is the command's process group: its main process leads it, and every child it forks stays in it.
type group struct{ pgid int }

func start(cmd *exec.Cmd) (*group, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &group{pgid: cmd.Process.Pid}, nil
}

// alive reports whether any process of the group is left.
func (g *group) alive() bool { return syscall.Kill(-g.pgid, 0) == nil }

// reap gives what the main process left behind the grace to finish, then kills it.
func (g *group) reap(ctx context.Context, grace time.Duration) {
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

func (g *group) kill() { syscall.Kill(-g.pgid, syscall.SIGKILL) }

func (g *group) close() {}
