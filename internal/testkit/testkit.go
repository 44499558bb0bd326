// Package testkit holds what the tests of several packages share: a buffer goroutines write while a test reads
// it, and the Node harness the reference tests run JavaScript's own answers through. Only tests import it.
package testkit

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// LockedBuffer is an io.Writer a test reads (String) while goroutines write to it: a watch's output, a hook's.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is what was written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Node finds node, the reference implementation: its absence fails the test in CI and skips it elsewhere.
func Node(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node is the reference implementation and must be on PATH in CI: %v", err)
		}
		t.Skipf("node not on PATH (%v); set CI to make this a failure", err)
	}
	return node
}

// RunNode runs script in one node process as `node SCRIPT IN OUT ARGS...`, IN a file holding in, and returns the
// lines the script wrote to OUT (each up to 256 MiB). A script that fails fails the test, with its stderr.
func RunNode(t testing.TB, script string, in []byte, args ...string) []string {
	t.Helper()
	node := Node(t)
	dir := t.TempDir()
	js, inPath, outPath := filepath.Join(dir, "script.js"), filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	if err := os.WriteFile(js, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inPath, in, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, append([]string{js, inPath, outPath}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	f, err := os.Open(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 256<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}
