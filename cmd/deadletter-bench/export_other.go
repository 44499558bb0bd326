//go:build !linux

package main

import "os"

// childRSSMB: only Linux's rusage is read (elsewhere its unit differs or it is missing); 0 there.
func childRSSMB(*os.ProcessState) float64 { return 0 }
