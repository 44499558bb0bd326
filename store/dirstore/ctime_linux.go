package dirstore

import "syscall"

// changeTime is the inode's change time, in nanoseconds.
func changeTime(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }
