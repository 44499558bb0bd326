//go:build unix

package opfile

import "syscall"

// openNonBlocking opens a FIFO without waiting for a writer: it is then refused as not a regular file.
const openNonBlocking = syscall.O_NONBLOCK

// openNoFollow refuses a symbolic link as the last part of the path (ELOOP).
const openNoFollow = syscall.O_NOFOLLOW
