//go:build unix

package record

import "syscall"

// noFollow refuses a log file that is a symbolic link (planted to make the record write elsewhere).
const noFollow = syscall.O_NOFOLLOW
