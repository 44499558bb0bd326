//go:build unix

package dirstore

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow is added to every open of a file inside the container: never through a symbolic link (the name
// was checked with Lstat, and a link swapped in since must fail the open), and never blocking (a FIFO swapped in
// cannot hang the open; the descriptor's own fstat then refuses it).
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// lockFile takes the container lock on the lock file: flock, shared or exclusive. flock locks hold between
// processes on one machine (and on NFSv4); docs/guarantees.md says where they do not.
func lockFile(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// etagOf derives an ETag from the file's identity: every write renames a fresh inode into place while the old
// one still exists, and backdating changes the mtime, so any change gives a new ETag — and the change time, which
// the kernel sets from its own clock at every write and rename: under a twin's stopped clock every write has the
// same mtime, and the file system reuses the inode number a rewrite freed, so without it a blob rewritten twice
// could give its first ETag again (and an If-Match held since would pass).
func etagOf(fi fs.FileInfo) string {
	var ino uint64
	var ctime int64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino, ctime = uint64(st.Ino), changeTime(st)
	}
	return fmt.Sprintf(`"%x-%x-%x-%x"`, ino, ctime, fi.ModTime().UnixNano(), fi.Size())
}
