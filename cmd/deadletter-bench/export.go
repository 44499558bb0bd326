package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The scale phase's commands at a million, run as an operator runs them: the deadletter binary, built once, in a
// child process of its own whose peak RSS is read from /proc while it runs (watchRSS), over the scale directory.

// commandFigures is one run of the binary: how long, its peak RSS, and what went wrong (the row then says so).
type commandFigures struct {
	Took  time.Duration
	RSSMB float64
	Lines int // lines on stdout
	Err   string
}

// scaleCommands measures export --all of the directory into a directory of its own (removed after) and
// ls --jsonl through it, and returns their rows.
func scaleCommands(dir string, n int) []row {
	work, err := os.MkdirTemp("", "deadletter-bench-commands-")
	must(err)
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "deadletter")
	build := exec.Command("go", "build", "-o", bin, "./cmd/deadletter")
	build.Dir = moduleRoot()
	if out, err := build.CombinedOutput(); err != nil {
		fail("go build ./cmd/deadletter: %v\n%s", err, out)
	}
	fmt.Fprintf(os.Stderr, "export --all of %s…\n", dir)
	ex := runCommand(bin, "--dir", dir, "export", "--all", "--to", filepath.Join(work, "export"))
	os.RemoveAll(filepath.Join(work, "export"))
	ls := runCommand(bin, "--dir", dir, "ls", "--jsonl", "--timeout", "0")
	if ls.Err == "" && ls.Lines != n && *scaleFrom == "" {
		ls.Err = fmt.Sprintf("listed %d of %d blobs", ls.Lines, n)
	}
	return []row{
		commandRow(fmt.Sprintf("export --all dir %d blobs: time", n), ex, secs(ex.Took), ex.Took.Seconds(), exportTimeLimit, "s"),
		commandRow(fmt.Sprintf("export --all dir %d blobs: peak RSS", n), ex, fmt.Sprintf("%.0f MB", ex.RSSMB), ex.RSSMB, 512, "MB"),
		commandRow(fmt.Sprintf("ls --jsonl dir %d blobs: peak RSS", n), ls, fmt.Sprintf("%.0f MB", ls.RSSMB), ls.RSSMB, 40, "MB"),
	}
}

// exportTimeLimit: minutes, not the hours a sync per file took (about 100 files a second on the reference disk).
const exportTimeLimit = 1200

// runCommand runs the binary, its stdout counted (not kept), and reports its time and peak RSS.
func runCommand(bin string, args ...string) commandFigures {
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = dieWithParent()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	must(err)
	start := time.Now()
	must(cmd.Start())
	rss := watchRSS(cmd.Process.Pid) // (read while it runs, from before it exits)
	var f commandFigures
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		f.Lines++
	}
	f.RSSMB = rss() // (before Wait: the process's /proc entry is read, not yet reaped)
	err = cmd.Wait()
	f.Took = time.Since(start)
	if err != nil {
		f.Err = fmt.Sprintf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return f
}

// commandRow is a figure against its limit, or what stopped the command (a missed target, never a crash of the
// bench).
func commandRow(name string, f commandFigures, ours string, value, limit float64, unit string) row {
	r := row{name: name, ours: ours, value: value, limit: limit, unit: unit}
	if f.Err != "" {
		r.ours, r.failed = "failed: "+f.Err, true
	}
	return r
}
