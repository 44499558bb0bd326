package testkit

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Hygiene is what a test run must leave as it found it: the package folder's entries, and no process of its own
// still running. Take it before m.Run and call Leftovers after: nothing a test starts may outlive it (a demo in a
// tmux server, a binary it signalled, a file an action kept in the working folder).
type Hygiene struct {
	entries []string
}

// TakeHygiene notes the working folder's entries.
func TakeHygiene() *Hygiene { return &Hygiene{entries: entries(".")} }

// Leftovers says what the run left behind: new entries of the working folder and, on Linux, processes descended
// from this one that still run (waited for a moment first: a killed process takes a little while to go).
func (h *Hygiene) Leftovers() []string {
	var left []string
	for _, e := range entries(".") {
		if !slices.Contains(h.entries, e) {
			left = append(left, "a file left in the package folder: "+e)
		}
	}
	var procs []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if procs = descendants(os.Getpid()); len(procs) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, p := range procs {
		left = append(left, "a process still running: "+p)
	}
	return left
}

func entries(dir string) []string {
	des, _ := os.ReadDir(dir)
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

// descendants lists the live processes below pid (Linux's /proc; elsewhere none are found). A tmux server a test
// started is its own session's leader but keeps its parent until that parent dies, so it is found here too; a
// zombie not yet reaped is not running and is not listed.
func descendants(pid int) []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	children := map[int][]int{}
	cmdline := map[int]string{}
	des, _ := os.ReadDir("/proc")
	for _, d := range des {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ")".
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
		c, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		cmdline[p] = strings.TrimSpace(strings.ReplaceAll(string(c), "\x00", " "))
	}
	var out []string
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, fmt.Sprintf("%d %s", c, cmdline[c]))
			walk(c)
		}
	}
	walk(pid)
	return out
}

// KillTmuxServers ends the tmux servers whose socket names start with prefix (in this user's tmux folder): a
// test's cleanup kills its own, this catches one whose cleanup never ran.
func KillTmuxServers(prefix string) []string {
	dir := os.Getenv("TMUX_TMPDIR")
	if dir == "" {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Getuid()))
	var killed []string
	for _, e := range entries(dir) {
		if !strings.HasPrefix(e, prefix) {
			continue
		}
		if exec.Command("tmux", "-L", e, "kill-server").Run() == nil {
			killed = append(killed, "a tmux server still running: "+e)
		}
		os.Remove(filepath.Join(dir, e))
	}
	return killed
}

// Clean runs a package's tests (from its TestMain) and fails the run if they left anything behind: a process of
// their own still running, or a new entry in the package folder. It returns the exit code for os.Exit.
func Clean(m interface{ Run() int }) int {
	h := TakeHygiene()
	code := m.Run()
	left := h.Leftovers()
	for _, l := range left {
		fmt.Fprintln(os.Stderr, "test hygiene:", l)
	}
	if len(left) > 0 && code == 0 {
		code = 1
	}
	return code
}

// WaitingParallelism raises go test's -parallel (unless it was given) for a package whose tests mostly wait — on a
// rehearsal's clock, a subprocess, the emulator — rather than compute: twice the processors, at least four. Call
// it from TestMain before m.Run.
func WaitingParallelism() {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(max(4, 2*runtime.GOMAXPROCS(0))))
	}
}
