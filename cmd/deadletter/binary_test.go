package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary is the real deadletter binary, built once per test run, for the tests that need a process: signals, a
// terminal (tmux), a prompt.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end to end with the real binary: runs without -short (./test.sh, CI)")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "deadletter-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "deadletter")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			buildErr = &buildFailure{err, string(out)}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

type buildFailure struct {
	err error
	out string
}

func (b *buildFailure) Error() string { return "build: " + b.err.Error() + "\n" + b.out }
