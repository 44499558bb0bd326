package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"
)

// A process's peak RSS is read from /proc (Linux); where there is none it reads 0.

// watchRSS follows a running child's peak RSS (VmHWM in /proc/PID/status, which only grows) until stop is called,
// and stop returns the last read. The kernel's rusage for a child is no measure here: Linux carries the peak of
// the memory a child had before exec over into it, and a child of Go's os/exec shares the bench's own memory until
// its exec — so every child read as the bench's 371 MB.
func watchRSS(pid int) (stop func() float64) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	done := make(chan struct{})
	last := make(chan float64, 1)
	go func() {
		peak := 0.0
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if kb := vmHWM(path); kb > peak {
				peak = kb
			}
			select {
			case <-done:
				last <- peak / 1024
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 {
		close(done)
		return max(<-last, vmHWM(path)/1024) // one read more: the end of a run may fall between two ticks
	}
}

// peakRSSMB is the bench's own peak RSS, in MB.
func peakRSSMB() float64 { return vmHWM("/proc/self/status") / 1024 }

// vmHWM is a process's peak RSS in kilobytes (0 once it has gone, or where there is no /proc).
func vmHWM(path string) float64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return kb
		}
	}
	return 0
}
