package main

import (
	"os"
	"syscall"
)

// childRSSMB is the peak RSS of a child that has exited, as the kernel counted it.
func childRSSMB(ps *os.ProcessState) float64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) / 1024 // (kilobytes on Linux)
	}
	return 0
}
