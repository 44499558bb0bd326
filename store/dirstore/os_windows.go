//go:build windows

package dirstore

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// openNoFollow: Windows has no O_NOFOLLOW or FIFOs in the file system. os.Root refuses links that lead out of
// the container; links inside it are refused by the Lstat every lookup makes first and by the os.SameFile check
// of what was opened against what was looked at (docs/guarantees.md).
const openNoFollow = 0

// lockFile takes the container lock with LockFileEx over the lock file's first byte: shared or exclusive,
// between every process on the machine (and over SMB, where the server keeps byte-range locks).
func lockFile(f *os.File, exclusive bool) error {
	var flags uint32
	if exclusive {
		flags = windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := new(windows.Overlapped)
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol)
}

func unlockFile(f *os.File) {
	ol := new(windows.Overlapped)
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}

// etagOf derives an ETag from the file's times and size. Windows keeps no inode number in what Lstat returns;
// every write renames a freshly created temporary file into place, so its creation time (100 ns resolution) and
// its modification time both change, and backdating changes the latter.
func etagOf(fi fs.FileInfo) string {
	var created int64
	if a, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		created = a.CreationTime.Nanoseconds()
	}
	return fmt.Sprintf(`"%x-%x-%x"`, created, fi.ModTime().UnixNano(), fi.Size())
}
