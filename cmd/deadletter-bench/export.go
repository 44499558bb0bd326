package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
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
func scaleCommands(dir string, n int, twinDir string, twinMade bool) []row {
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
	rows := []row{
		commandRow(fmt.Sprintf("export --all dir %d blobs: time", n), ex, secs(ex.Took), ex.Took.Seconds(), exportTimeLimit, "s"),
		commandRow(fmt.Sprintf("export --all dir %d blobs: peak RSS", n), ex, fmt.Sprintf("%.0f MB", ex.RSSMB), ex.RSSMB, 512, "MB"),
		commandRow(fmt.Sprintf("ls --jsonl dir %d blobs: peak RSS", n), ls, fmt.Sprintf("%.0f MB", ls.RSSMB), ls.RSSMB, 40, "MB"),
	}
	rows = append(rows, everyCommand(bin, dir, n, ls)...)
	rows = append(rows, logRows(bin, dir, n, work)...)
	return append(rows, twinRows(bin, n, twinDir, twinMade)...)
}

// logRows: log over the record of a drain of every blob of the directory (written in parts, as a drain of a
// backlog is: twenty thousand blobs a line), each blob followed to where it is now — its peak RSS and time.
func logRows(bin, dir string, n int, work string) []row {
	state := filepath.Join(work, "log-state")
	writeDrainRecord(dir, filepath.Join(state, "deadletter", "record"))
	f := runCommandEnv(bin, 0, []string{"XDG_STATE_HOME=" + state}, "--dir", dir, "--timeout", "0", "log")
	if f.Err == "" && f.Lines < n {
		f.Err = fmt.Sprintf("log said %d lines of a drain of %d blobs: it did not read the record as this estate's", f.Lines, n)
	}
	name := fmt.Sprintf("log of a %d-blob drain", n)
	return []row{
		commandRow(name+": peak RSS", f, fmt.Sprintf("%.0f MB", f.RSSMB), f.RSSMB, 512, "MB"),
		commandRow(name+": time", f, secs(f.Took), 0, 0, "s"),
	}
}

// writeDrainRecord writes the record of a drain of every root blob of dir into the local log at path, through
// the recorder a drain uses.
func writeDrainRecord(dir, path string) {
	d, err := dirstore.Open(dir)
	must(err)
	var blobs, done []record.Blob
	must(d.List(context.Background(), "", func(p store.Page) error {
		for _, b := range p.Blobs {
			if rules.IsRoot(b.Name) {
				blobs = append(blobs, record.Blob{Name: b.Name, ETag: b.ETag})
				done = append(done, record.Blob{Name: b.Name, ETag: b.ETag, ETagAfter: b.ETag, Outcome: "drained"})
			}
		}
		return nil
	}))
	r := &record.Recorder{Local: record.OpenDir(path), Who: record.Who{User: "bench", Host: "bench"}, Estate: record.EstateOf("", d.Describe())}
	act, err := r.Begin(context.Background(), record.ActDrain, "deadletter drain --yes", time.Now(), blobs, "")
	must(err)
	must(act.End(context.Background(), time.Now(), done, nil))
}

// twinRows: twin advance --by 1h and twin diff on the twin made --from the directory (by -twin-from-child).
func twinRows(bin string, n int, twinDir string, made bool) []row {
	var rows []row
	env := []string{"XDG_STATE_HOME=" + filepath.Join(twinDir, "state")}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"twin advance --by 1h", []string{"twin", "advance", "--by", "1h"}},
		{"twin diff", []string{"twin", "diff"}},
	} {
		f := commandFigures{Err: "no twin: twin start --from failed"}
		if made {
			f = runCommandEnv(bin, 0, env, append(append([]string{}, c.args...), "--dir", filepath.Join(twinDir, "twin"))...)
		}
		name := fmt.Sprintf("%s, a twin of %d blobs", c.name, n)
		rows = append(rows, commandRow(name+": peak RSS", f, fmt.Sprintf("%.0f MB", f.RSSMB), f.RSSMB, 512, "MB"),
			commandRow(name+": time", f, secs(f.Took), 0, 0, "s"))
	}
	return rows
}

// everyCommand is a row pair per command an operator runs during a backlog (issue 52), each over the scale
// directory in a process of its own: its peak RSS against 512 MB, and its time beside the directory store's own
// plain listing measured in the same run — a command that reads no payload within 1.5× of it, trace within 2× of
// ls --jsonl from cold; the others' times are said, not judged.
func everyCommand(bin, dir string, n int, lsJSONL commandFigures) []row {
	plain := plainListing(dir)
	id := firstEventID(dir)
	var rows []row
	for _, c := range []struct {
		name string
		args []string
		ok   int // an exit code that is an answer, not a failure (check: 1, findings)
		vs   time.Duration
		max  float64
	}{
		{name: "ls -o name", args: []string{"ls", "-o", "name"}, vs: plain, max: 1.5},
		{name: "ls (text, sorted)", args: []string{"ls"}},
		{name: "ls --json", args: []string{"ls", "--json"}},
		{name: "check --json", args: []string{"check", "--json"}, ok: 1},
		{name: "report --format json", args: []string{"report", "--format", "json"}},
		{name: "drain --dry-run --json", args: []string{"drain", "--dry-run", "--json"}},
		{name: "restore --all --dry-run --json", args: []string{"restore", "--all", "--dry-run", "--json"}},
		{name: "trace of one event id", args: []string{"trace", id}, vs: lsJSONL.Took, max: 2},
	} {
		f := runCommandOK(bin, c.ok, append([]string{"--dir", dir, "--timeout", "0"}, c.args...)...)
		name := fmt.Sprintf("%s dir %d blobs", c.name, n)
		rows = append(rows, commandRow(name+": peak RSS", f, fmt.Sprintf("%.0f MB", f.RSSMB), f.RSSMB, 512, "MB"))
		t := commandRow(name+": time", f, secs(f.Took), 0, 0, "s")
		if c.vs > 0 {
			t.raw, t.ratio, t.target = secs(c.vs), f.Took.Seconds()/c.vs.Seconds(), c.max
		} else if t.raw == "" {
			t.raw = secs(plain) + " (list)"
		}
		rows = append(rows, t)
	}
	return rows
}

// plainListing is the directory store's own listing of dir, every page walked, timed (the floor every command
// that lists stands on).
func plainListing(dir string) time.Duration {
	d, err := dirstore.Open(dir)
	must(err)
	start := time.Now()
	must(d.List(context.Background(), "", func(store.Page) error { return nil }))
	return time.Since(start)
}

// firstEventID is the id of the first event of the first blob in dir that holds one (the trace row's).
func firstEventID(dir string) string {
	d, err := dirstore.Open(dir)
	must(err)
	id := ""
	errStop := errors.New("found")
	err = d.List(context.Background(), "", func(p store.Page) error {
		for _, bi := range p.Blobs {
			b, err := d.Read(context.Background(), bi.Name, store.MaxBlobBytes)
			if err != nil {
				continue
			}
			var evs []struct{ ID string }
			if json.Unmarshal(b.Body, &evs) == nil && len(evs) > 0 && evs[0].ID != "" {
				id = evs[0].ID
				return errStop
			}
		}
		return nil
	})
	if id == "" {
		fail("no event id in %s: %v", dir, err)
	}
	return id
}

// exportTimeLimit: minutes, not the hours a sync per file took (about 100 files a second on the reference disk).
const exportTimeLimit = 1200

// runCommand runs the binary, its stdout counted (not kept), and reports its time and peak RSS.
func runCommand(bin string, args ...string) commandFigures { return runCommandOK(bin, 0, args...) }

// runCommandOK is runCommand where exit code ok (besides 0) is an answer, not a failure.
func runCommandOK(bin string, ok int, args ...string) commandFigures {
	return runCommandEnv(bin, ok, nil, args...)
}

// runCommandEnv is runCommandOK with env added to the bench's environment.
func runCommandEnv(bin string, ok int, env []string, args ...string) commandFigures {
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
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
	if ee, is := err.(*exec.ExitError); is && ok != 0 && ee.ExitCode() == ok {
		err = nil
	}
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
