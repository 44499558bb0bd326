package main

import "syscall"

// dieWithParent has the kernel kill a started Azurite when the benchmark tool dies, however it dies.
func dieWithParent() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
