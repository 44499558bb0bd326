// Package dirstore is the dead-letter container as a local directory: offline snapshots, the demo, the rehearsal
// twin and fast tests. Each blob is a file whose path is its name; content type, metadata and tags live in side
// files; every write is a synced temporary file renamed into place under a file lock, so ETag conditions hold
// across processes; and every file-system call goes through os.Root one verified folder at a time, so nothing a
// hostile tree holds (a link, a FIFO, a device) is ever followed. docs/guarantees.md says what it promises on
// each operating system.
package dirstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deadletter/deadletter/store"
)

// stateDir holds what a directory container keeps beside the blobs: a lock file, metadata side files and
// temporary files (on the same file system, so a rename into place is atomic). No blob may be named under it.
const stateDir = ".deadletter"

const (
	metaDir = "meta" // side files: .deadletter/meta/<name>.json
	tmpDir  = "tmp"  // writes land here first, then are renamed into place
	// metaSuffix is what a blob's side file adds to the blob's last path segment.
	metaSuffix = ".json"
	// maxSegment is the longest file name Linux file systems (ext4, xfs, btrfs, tmpfs) and macOS can hold.
	maxSegment = 255
	// dirPageSize matches Azure's page, so both backends exercise the same paging.
	dirPageSize = 5000
	// leftoverAge is how old a temporary file must be before a sweep takes it for a crash's leftover. Every
	// writer holds the exclusive lock while its temporary file exists, so any found under the lock is a
	// leftover; the margin spares a writer the lock cannot see (a directory shared over a network file system,
	// where a flock may be local to each machine).
	leftoverAge = 10 * time.Minute
	// sweepEvery bounds how often one Dir walks the side-file tree for orphans: the walk reads the names of
	// every folder, too much for every write of a million-blob directory, and orphans only come from crashes
	// and blobs deleted by hand.
	sweepEvery = 10 * time.Minute
	// maxMetaBytes caps a side file read: Azure allows 8 KiB of metadata and ten tags, so anything far larger
	// is not ours and must not exhaust memory.
	maxMetaBytes = 1 << 20
)

// Dir is a container backed by a local directory: each blob is a file whose path is the blob name ("/" makes
// folders), Last-Modified is the file's mtime, and content type, metadata and tags live in side files under
// .deadletter/meta. Writes land atomically (temp file + rename, both fsynced) and all operations take a file
// lock, so ETag conditions hold against concurrent writers in this and other processes.
//
// Every file-system call inside the directory goes through an os.Root on it, one verified folder at a time
// (os.Root alone would follow a link that stays inside), so nothing a hostile tree holds — a symbolic link to a
// folder outside it or inside it, a FIFO, a device — is ever followed, read or written through: such entries
// are listed as refused and every operation on a name behind them fails with store.ErrRefused.
type Dir struct {
	root string
	// private: everything the Dir creates is its owner's only — files 0600, folders 0700 (CreatePrivate).
	private bool
	// unsynced: writes are not synced one by one (SetUnsynced, a resumable bulk copy or a rehearsal's own
	// simulation); Flush makes them durable. dirty: a write since the last Flush was left unsynced.
	unsynced, dirty atomic.Bool

	rootMu   sync.Mutex
	r        atomic.Pointer[os.Root] // the directory root names, opened
	rootInfo fs.FileInfo             // what r is (guarded by rootMu)

	folders folderCache

	sweepMu sync.Mutex
	sweptAt time.Time // when this Dir last swept crash leftovers (zero: not yet)

	// The service clock (clock.go): one set on the Dir, or a twin's clock file as last read.
	clockFn   atomic.Pointer[func() time.Time]
	clockMu   sync.Mutex
	clockPath string // a twin's clock file (UseClockFile); "" for the local clock
	clock     Clock
	hasClock  bool
	clockStat fs.FileInfo // the clock file as last read
	clockErr  error       // why the clock file could not be read, as last tried
}

// Open opens an existing directory as a container. A missing directory is an error, never an empty
// container: a check of a mistyped path must not come back healthy. Reading writes nothing, so a snapshot on
// read-only media opens too.
func Open(root string) (*Dir, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("container directory %q: %w", root, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("container directory %q: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("container directory %q is not a directory", root)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("container directory %q: %w", root, err)
	}
	fi, err = r.Stat(".")
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("container directory %q: %w", root, err)
	}
	d := &Dir{root: abs, rootInfo: fi}
	d.r.Store(r)
	return d, nil
}

// present checks, before every operation, that the directory the Dir has open is still the one its path
// names. A container directory removed under a running watch must fail the watch's next pass, not keep
// answering from the removed directory's descriptor (which lists as empty, and healthy); one replaced by a
// new directory is opened afresh, as a path-based tool would see it.
func (d *Dir) present() error {
	fi, err := os.Stat(d.root)
	if err == nil && !fi.IsDir() {
		err = errors.New("not a directory")
	}
	if err != nil {
		return fmt.Errorf("%w: directory %s: %w", store.ErrContainerNotFound, d.root, err)
	}
	d.rootMu.Lock()
	defer d.rootMu.Unlock()
	if os.SameFile(fi, d.rootInfo) {
		return nil
	}
	r, err := os.OpenRoot(d.root)
	if err != nil {
		return fmt.Errorf("%w: directory %s: %w", store.ErrContainerNotFound, d.root, err)
	}
	if fi, err = r.Stat("."); err != nil {
		r.Close()
		return fmt.Errorf("%w: directory %s: %w", store.ErrContainerNotFound, d.root, err)
	}
	// The old root is left to its finalizer: operations begun on it may still be running.
	d.r.Store(r)
	d.rootInfo = fi
	d.folders.flush()
	return nil
}

// Create opens a directory container, creating the directory when it does not exist (seed, demo). Like
// every folder the container makes, it is created 0777 less the umask, as other tools would.
func Create(root string) (*Dir, error) {
	if err := os.MkdirAll(root, 0o777); err != nil {
		return nil, fmt.Errorf("container directory %q: %w", root, err)
	}
	return Open(root)
}

// CreatePrivate is Create for a directory of production payloads on an operator's machine (an export): the
// directory, when it is made, and every file and folder the container writes in it are readable by their owner
// only — files 0600, folders 0700, whatever the umask.
func CreatePrivate(root string) (*Dir, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("container directory %q: %w", root, err)
	}
	d, err := Open(root)
	if err != nil {
		return nil, err
	}
	d.private = true
	return d, nil
}

// filePerm and folderPerm are what the Dir creates files and folders with (less the umask).
func (d *Dir) filePerm() fs.FileMode {
	if d.private {
		return 0o600
	}
	return 0o666
}

func (d *Dir) folderPerm() fs.FileMode {
	if d.private {
		return 0o700
	}
	return 0o777
}

// Describe implements Container.
func (d *Dir) Describe() string { return "dir:" + d.root }

// Root is the directory holding the blobs.
func (d *Dir) Root() string { return d.root }

// ValidateName implements NameValidator: the directory's own limits (ValidateName, the function).
func (d *Dir) ValidateName(name string) error { return ValidateName(name) }

func blobInfo(name string, fi fs.FileInfo, m dirMeta) store.BlobInfo {
	return store.BlobInfo{Name: name, Size: fi.Size(), ETag: etagOf(fi), LastModified: fi.ModTime().UTC(),
		ContentType: m.ContentType, Metadata: m.Metadata, Tags: m.Tags}
}

// Now implements Container: the directory's own clock when it has one (a rehearsal), else the local clock.
func (d *Dir) Now(ctx context.Context) (time.Time, error) {
	if err := d.clockFailed(); err != nil {
		return time.Time{}, err
	}
	return d.now(), nil
}

// Create implements Provisioner: the directory exists once the container is open.
func (d *Dir) Create(ctx context.Context) error { return nil }
