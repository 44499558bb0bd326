//go:build linux

package hook

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func shell(command string) *exec.Cmd { return exec.Command("sh", "-c", command) }

var hardenOnce sync.Once

// harden makes deadletter, once, the subreaper of what its hooks start (an orphan — a setsid child whose parent
// exited — is reparented to it rather than to init, so it stays within reach), and non-dumpable, so a hook (the
// operator's uid) cannot read its /proc/PID/environ — the connection string. (Its cmdline stays readable to every
// process on the machine: a secret given as a flag is warned about.)
func harden() {
	hardenOnce.Do(func() {
		unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
		unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	})
}

// group is the command's process group, and every process carrying its run's mark: a child that called setsid
// leaves the group but not the mark.
type group struct {
	pgid    int
	mark    []byte
	orphans map[int]bool // marked processes reparented to deadletter: waited for once killed, so none is a zombie
}

// live are the hooks now running, their process groups and marks: a child of deadletter that leads (or sits in)
// another hook's group, or carries another hook's mark (a worker it detached with setsid), is that hook's, not an
// orphan of this one.
var live = struct {
	sync.Mutex
	marks map[int][]byte // by process group
}{marks: map[int][]byte{}}

func start(cmd *exec.Cmd, mark string) (*group, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	live.Lock()
	defer live.Unlock()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &group{pgid: cmd.Process.Pid, mark: []byte(markVar + "=" + mark), orphans: map[int]bool{}}
	live.marks[g.pgid] = g.mark
	return g, nil
}

// another reports whether a process of group pgid, its environment env, belongs to a hook other than g that is
// still running: it sits in that hook's group, or carries its mark.
func (g *group) another(pgid int, env []byte) bool {
	live.Lock()
	defer live.Unlock()
	if _, ok := live.marks[pgid]; ok && pgid != g.pgid {
		return true
	}
	for p, m := range live.marks {
		if p != g.pgid && hasMark(env, m) {
			return true
		}
	}
	return false
}

// marked are the processes of the run that left its group: those whose environment holds the run's mark, and —
// since deadletter is their subreaper — every orphan reparented to it and everything those started, found by the
// process tree: a child that double-forks, calls setsid and clears its environment takes no mark with it, but it
// cannot leave the tree.
func (g *group) marked() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self, own := os.Getpid(), syscall.Getpgrp()
	parent := map[int]int{}
	in := map[int]bool{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		pp, pg := parentAndGroup(pid)
		parent[pid] = pp
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		// An orphan of a hook, reparented to deadletter (its subreaper) — but not a child deadletter started in
		// its own group (the Azure CLI a credential runs; a test's build), nor another running hook's: its main
		// process, what sits in its group, a worker it detached (its mark). One that detached and cleared its
		// environment while two hooks ran is taken by the first reap to see it.
		if pp == self && pid != g.pgid && pg != own && !g.another(pg, env) {
			in[pid] = true
			g.orphans[pid] = true
			continue
		}
		if hasMark(env, g.mark) {
			in[pid] = true
			if pp == self {
				g.orphans[pid] = true
			}
		}
	}
	for grew := true; grew; { // and what those started, at any depth
		grew = false
		for pid, pp := range parent {
			if !in[pid] && in[pp] {
				in[pid], grew = true, true
			}
		}
	}
	out := make([]int, 0, len(in))
	for pid := range in {
		out = append(out, pid)
	}
	return out
}

// hasMark reports whether an environment (NUL-separated) holds the run's mark.
func hasMark(env, mark []byte) bool {
	if !bytes.Contains(env, mark) {
		return false
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if bytes.Equal(kv, mark) {
			return true
		}
	}
	return false
}

// parentAndGroup are a process's parent and process group (0 when they cannot be read).
func parentAndGroup(pid int) (ppid, pgrp int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+4 < len(b) {
		// after the command: state, ppid, pgrp, …
		if f := bytes.Fields(b[i+2:]); len(f) > 2 {
			ppid, _ = strconv.Atoi(string(f[1]))
			pgrp, _ = strconv.Atoi(string(f[2]))
		}
	}
	return ppid, pgrp
}

// alive reports whether any process of the group, or any marked one, is left.
func (g *group) alive() bool {
	g.waitOrphans()
	return syscall.Kill(-g.pgid, 0) == nil || len(g.marked()) > 0
}

// reap gives what the main process left behind the grace to finish, then kills it.
func (g *group) reap(ctx context.Context, grace time.Duration) { reapGroup(ctx, g, grace) }

func (g *group) kill() {
	syscall.Kill(-g.pgid, syscall.SIGKILL)
	for _, pid := range g.marked() {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	g.waitOrphans()
}

// waitOrphans collects the exit of the marked orphans that ended (only those: another child's status is not
// deadletter's to take).
func (g *group) waitOrphans() {
	for pid := range g.orphans {
		var ws syscall.WaitStatus
		if n, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); n == pid || err == syscall.ECHILD {
			delete(g.orphans, pid)
		}
	}
}

func (g *group) close() {
	live.Lock()
	delete(live.marks, g.pgid)
	live.Unlock()
	for deadline := time.Now().Add(time.Second); len(g.orphans) > 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		g.waitOrphans()
	}
}
