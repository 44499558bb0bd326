//go:build unix

package storetest

import (
	"syscall"
	"testing"
)

// Mkfifo makes a FIFO at path — a directory entry no blob may be — or fails the test.
func Mkfifo(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}
