//go:build !linux

package main

import "syscall"

// dieWithParent: only Linux can tie a child's life to its parent's; elsewhere the tool stops its Azurites itself.
func dieWithParent() *syscall.SysProcAttr { return nil }
