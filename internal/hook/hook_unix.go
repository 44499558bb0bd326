//go:build unix && !linux

package hook

import (
	"context"
	"os/exec"
	"syscall"
	"time"
)

func shell(command string) *exec.Cmd { return exec.Command("sh", "-c", command) }

// harden: only Linux has a subreaper and a non-dumpable flag; elsewhere the process group is the bound.
func harden() {}

// group is the command's process group: its main process leads it, and every child it forks stays in it (a child
// that calls setsid leaves it: docs/guarantees.md says where that is caught).
type group struct{ pgid int }

func start(cmd *exec.Cmd, _ string) (*group, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &group{pgid: cmd.Process.Pid}, nil
}

// alive reports whether any process of the group is left.
func (g *group) alive() bool { return syscall.Kill(-g.pgid, 0) == nil }

// reap gives what the main process left behind the grace to finish, then kills it.
func (g *group) reap(ctx context.Context, grace time.Duration) { reapGroup(ctx, g, grace) }

func (g *group) kill() { syscall.Kill(-g.pgid, syscall.SIGKILL) }

func (g *group) close() {}
