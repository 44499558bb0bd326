//go:build unix

package dirstore_test

import "syscall"

// syncAll writes the file system's dirty data back (before a listing is timed).
func syncAll() { syscall.Sync() }
