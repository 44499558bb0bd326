//go:build !unix

package storetest

import "testing"

// Mkfifo skips the test: this platform has no FIFOs to put in a directory container.
func Mkfifo(t testing.TB, path string) {
	t.Helper()
	t.Skip("no FIFOs on this platform")
}
