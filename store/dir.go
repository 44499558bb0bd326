package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
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
// are listed as refused and every operation on a name behind them fails with ErrRefused.
type Dir struct {
	root string

	rootMu   sync.Mutex
	r        atomic.Pointer[os.Root] // the directory root names, opened
	rootInfo fs.FileInfo             // what r is (guarded by rootMu)

	folders folderCache

	sweepMu sync.Mutex
	sweptAt time.Time // when this Dir last swept crash leftovers (zero: not yet)
}

// OpenDir opens an existing directory as a container. A missing directory is an error, never an empty
// container: a check of a mistyped path must not come back healthy. Reading writes nothing, so a snapshot on
// read-only media opens too.
func OpenDir(root string) (*Dir, error) {
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
		return fmt.Errorf("%w: directory %s: %w", ErrContainerNotFound, d.root, err)
	}
	d.rootMu.Lock()
	defer d.rootMu.Unlock()
	if os.SameFile(fi, d.rootInfo) {
		return nil
	}
	r, err := os.OpenRoot(d.root)
	if err != nil {
		return fmt.Errorf("%w: directory %s: %w", ErrContainerNotFound, d.root, err)
	}
	if fi, err = r.Stat("."); err != nil {
		r.Close()
		return fmt.Errorf("%w: directory %s: %w", ErrContainerNotFound, d.root, err)
	}
	// The old root is left to its finalizer: operations begun on it may still be running.
	d.r.Store(r)
	d.rootInfo = fi
	d.folders.flush()
	return nil
}

// CreateDir opens a directory container, creating the directory when it does not exist (seed, demo). Like
// every folder the container makes, it is created 0777 less the umask, as other tools would.
func CreateDir(root string) (*Dir, error) {
	if err := os.MkdirAll(root, 0o777); err != nil {
		return nil, fmt.Errorf("container directory %q: %w", root, err)
	}
	return OpenDir(root)
}

// Describe implements Container.
func (d *Dir) Describe() string { return "dir:" + d.root }

// Root is the directory holding the blobs.
func (d *Dir) Root() string { return d.root }

// ValidateName implements NameValidator: the directory's own limits (ValidateName, the function).
func (d *Dir) ValidateName(name string) error { return ValidateName(name) }

type dirMeta struct {
	ContentType string            `json:"contentType,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
}

func (m dirMeta) empty() bool { return m.ContentType == "" && len(m.Metadata) == 0 && len(m.Tags) == 0 }

// ValidateName refuses names a directory cannot hold faithfully or that would escape its root. The file system
// limits each path segment to 255 bytes, and the blob's side file adds ".json" to the last one, so a name that
// passes here can always be stored — a write must not fail halfway, with the blob written and its metadata not.
func ValidateName(name string) error {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrInvalidName, name, why) }
	switch {
	case name == "":
		return bad("empty")
	case len(name) > 1024:
		return bad("longer than 1,024 characters")
	case !utf8.ValidString(name):
		return bad("not valid UTF-8")
	case strings.ContainsRune(name, 0):
		return bad("contains NUL")
	case strings.Contains(name, `\`):
		return bad("contains a backslash")
	case strings.HasPrefix(name, "/"):
		return bad("absolute path")
	}
	segs := strings.Split(name, "/")
	for i, seg := range segs {
		switch {
		case seg == "":
			return bad("empty path segment")
		case seg == "." || seg == "..":
			return bad("path segment " + seg)
		case len(seg) > maxSegment:
			return bad(fmt.Sprintf("a path segment is %d bytes, over the %d-byte limit of a file name", len(seg), maxSegment))
		case i == 0 && seg == stateDir:
			return bad(stateDir + "/ is reserved for the directory container's own state")
		}
	}
	if last := segs[len(segs)-1]; len(last)+len(metaSuffix) > maxSegment {
		return bad(fmt.Sprintf("the last path segment is %d bytes, over the %d-byte limit of a file name once its side file adds %q (at most %d bytes)",
			len(last), maxSegment, metaSuffix, maxSegment-len(metaSuffix)))
	}
	return nil
}

// splitName cuts a valid name into its folders and its last segment.
func splitName(name string) (dirs []string, base string) {
	segs := strings.Split(name, "/")
	return segs[:len(segs)-1], segs[len(segs)-1]
}

// metaSegs are the folders of a blob's side file: its own folders under .deadletter/meta.
func metaSegs(dirs []string) []string {
	return append([]string{stateDir, metaDir}, dirs...)
}

// refusal is an entry deadletter will not go through or read: a symbolic link, FIFO, socket or device, or a
// folder that changed into something else while it was being opened. It is ErrRefused to errors.Is.
type refusal struct {
	path string // the entry, relative to the container directory
	why  string
}

func (r *refusal) Error() string        { return fmt.Sprintf("%v: %q is %s", ErrRefused, r.path, r.why) }
func (r *refusal) Is(target error) bool { return target == ErrRefused }

func refusedWhy(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link: deadletter never follows links in a container directory, wherever they point"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO, not a file"
	case m&fs.ModeSocket != 0:
		return "a socket, not a file"
	case m&fs.ModeDevice != 0:
		return "a device, not a file"
	}
	return "not a regular file"
}

const whyChanged = "replaced while it was being opened (by a link?), so it is not used"

// errNotFolder: an entry on a name's path is a file, not a folder, so the name cannot exist (and cannot be
// written, since a directory cannot hold a blob named like a folder on another blob's path).
var errNotFolder = errors.New("a blob is named like a folder on its path")

// missing reports whether err from a lookup means only that nothing has the name.
func missing(err error) bool { return errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotFolder) }

// chain is a folder reached from the container root one segment at a time, each a real directory opened
// without following a link: roots[0] is the container, roots[i] the folder of segs[i-1].
type chain struct {
	cache *folderCache
	roots []*os.Root
	infos []fs.FileInfo // infos[i]: how the parent saw roots[i] (nil for the container)
	from  []*folder     // from[i]: the cache entry roots[i] is borrowed from; nil when the chain owns it
	made  []bool        // made[i]: a folder was created in roots[i], whose entry must be synced to be durable
}

func (c *chain) leaf() *os.Root { return c.roots[len(c.roots)-1] }

func (c *chain) push(r *os.Root, fi fs.FileInfo, from *folder) {
	c.roots = append(c.roots, r)
	c.infos = append(c.infos, fi)
	c.from = append(c.from, from)
}

func (c *chain) close() {
	if c == nil {
		return
	}
	for i := 1; i < len(c.roots); i++ {
		if c.from[i] != nil {
			c.cache.release(c.from[i])
		} else {
			c.roots[i].Close()
		}
	}
	c.roots = nil
}

// sync makes the leaf folder's entries durable, and those of every folder a new folder was made in.
func (c *chain) sync() error {
	for i, r := range c.roots {
		if i == len(c.roots)-1 || c.made[i] {
			if err := syncFolder(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// prune removes the folders of the chain deeper than keep that are now empty, deepest first: folders are only
// how a directory spells "/", and Azure has none once their last blob is gone.
func (c *chain) prune(segs []string, keep int) {
	for i := len(segs) - 1; i >= keep; i-- {
		parent := c.roots[i]
		fi, err := parent.Lstat(segs[i])
		if err != nil || !fi.IsDir() || !os.SameFile(fi, c.infos[i+1]) || parent.Remove(segs[i]) != nil {
			return
		}
	}
}

func syncFolder(r *os.Root) error {
	f, err := r.Open(".")
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// folderCache keeps the folders operations opened lately, so that the next operation in the same folder —
// hydration reads blob after blob of one hour's folder — checks each folder on its path with one Lstat instead
// of opening it again (os.Root opens every segment of every path it is given). A cached folder is only used
// when its parent, itself checked down from the container, still shows the very same directory: the open
// descriptor pins the inode, so its number cannot be reused by a folder made since.
type folderCache struct {
	mu   sync.Mutex
	m    map[string]*folder
	tick uint64
}

// folderCacheSize bounds the cached folders (one descriptor each) per Dir.
const folderCacheSize = 256

// folder is a cached open folder. Chains borrow it (refs); evicted, it closes when the last chain lets go.
type folder struct {
	root    *os.Root
	info    fs.FileInfo
	refs    int
	used    uint64
	evicted bool
}

// get borrows the cached folder key if it is still the directory its parent shows as fi.
func (fc *folderCache) get(key string, fi fs.FileInfo) *folder {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	f := fc.m[key]
	if f == nil {
		return nil
	}
	if !os.SameFile(f.info, fi) {
		fc.evict(key, f)
		return nil
	}
	fc.tick++
	f.refs++
	f.used = fc.tick
	return f
}

// put caches a freshly opened folder, borrowed by the caller.
func (fc *folderCache) put(key string, r *os.Root, fi fs.FileInfo) *folder {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.m == nil {
		fc.m = make(map[string]*folder)
	}
	if old := fc.m[key]; old != nil {
		fc.evict(key, old)
	}
	if len(fc.m) >= folderCacheSize {
		var lruKey string
		var lru *folder
		for k, f := range fc.m {
			if lru == nil || f.used < lru.used {
				lruKey, lru = k, f
			}
		}
		fc.evict(lruKey, lru)
	}
	fc.tick++
	f := &folder{root: r, info: fi, refs: 1, used: fc.tick}
	fc.m[key] = f
	return f
}

func (fc *folderCache) evict(key string, f *folder) {
	delete(fc.m, key)
	f.evicted = true
	if f.refs == 0 {
		f.root.Close()
	}
}

// flush drops every cached folder (the container directory was replaced).
func (fc *folderCache) flush() {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	for k, f := range fc.m {
		fc.evict(k, f)
	}
}

func (fc *folderCache) release(f *folder) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	f.refs--
	if f.evicted && f.refs == 0 {
		f.root.Close()
	}
}

// descend opens the folder segs names, one segment at a time: each must be a real directory (Lstat), and the
// directory opened must be that very one (os.Root would follow a link swapped in meanwhile). A link on the way
// is a refusal, a file on the way errNotFolder; with create, missing folders are made (0777 less the umask).
// Folders come from, and go to, the Dir's cache.
func (d *Dir) descend(segs []string, create bool) (*chain, error) {
	return d.descendCached(segs, create, true)
}

// descendCached is descend; with keep false, the folders it opens are not cached (a listing reads each folder
// once, and would only push out the folders worth keeping).
func (d *Dir) descendCached(segs []string, create, keep bool) (*chain, error) {
	c := &chain{cache: &d.folders, roots: make([]*os.Root, 1, len(segs)+1), infos: make([]fs.FileInfo, 1, len(segs)+1),
		from: make([]*folder, 1, len(segs)+1), made: make([]bool, len(segs)+1)}
	c.roots[0] = d.r.Load()
	key := ""
	for i, seg := range segs {
		cur := c.leaf()
		fi, err := cur.Lstat(seg)
		if create && errors.Is(err, fs.ErrNotExist) {
			if err = cur.Mkdir(seg, 0o777); err == nil || errors.Is(err, fs.ErrExist) {
				c.made[i] = err == nil
				fi, err = cur.Lstat(seg)
			}
		}
		if i > 0 {
			key += "/"
		}
		key += seg
		switch {
		case err != nil:
			c.close()
			return nil, err
		case fi.Mode()&fs.ModeSymlink != 0 || (!fi.IsDir() && !fi.Mode().IsRegular()):
			c.close()
			return nil, &refusal{key, refusedWhy(fi.Mode())}
		case !fi.IsDir():
			c.close()
			return nil, fmt.Errorf("%w (%q is a file)", errNotFolder, key)
		}
		if f := d.folders.get(key, fi); f != nil {
			c.push(f.root, fi, f)
			continue
		}
		sub, err := openVerified(cur, seg, fi)
		if err != nil {
			c.close()
			if ref, ok := err.(*refusal); ok {
				ref.path = key
			}
			return nil, err
		}
		var from *folder
		if keep {
			from = d.folders.put(key, sub, fi)
		}
		c.push(sub, fi, from)
	}
	return c, nil
}

// entry is what a name finds: its folder (nil when a folder on its path is missing) and its own Lstat (nil
// when nothing has the name).
type entry struct {
	c    *chain
	base string
	fi   fs.FileInfo
}

func (e entry) close() { e.c.close() }

// lookup finds a valid name without following anything. Only a link or FIFO on the way is an error.
func (d *Dir) lookup(name string) (entry, error) {
	dirs, base := splitName(name)
	c, err := d.descend(dirs, false)
	if missing(err) {
		return entry{base: base}, nil
	}
	if err != nil {
		return entry{}, err
	}
	fi, err := c.leaf().Lstat(base)
	if errors.Is(err, fs.ErrNotExist) {
		return entry{c: c, base: base}, nil
	}
	if err != nil {
		c.close()
		return entry{}, err
	}
	return entry{c: c, base: base, fi: fi}, nil
}

// blob is the entry's file when it is a blob: ErrNotFound when nothing (or only a folder) has the name,
// ErrRefused for a link, FIFO, socket or device, which is never read, overwritten or removed.
func (e entry) blob(name string) (fs.FileInfo, error) {
	switch {
	case e.fi == nil || e.fi.IsDir():
		return nil, ErrNotFound
	case !e.fi.Mode().IsRegular():
		return nil, &refusal{name, refusedWhy(e.fi.Mode())}
	}
	return e.fi, nil
}

// openRegular opens a file of a verified folder for reading, only if it is the regular file fi described:
// O_NONBLOCK so a FIFO swapped in cannot block the open, then the descriptor's own fstat decides.
func openRegular(r *os.Root, base, path string, fi fs.FileInfo) (*os.File, fs.FileInfo, error) {
	f, err := r.OpenFile(base, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &refusal{path, refusedWhy(st.Mode())}
	}
	if !os.SameFile(fi, st) {
		f.Close()
		return nil, nil, &refusal{path, whyChanged}
	}
	return f, st, nil
}

// readMeta reads a side file in its verified folder; anything but a regular file of sane size reads as no
// metadata, as does a broken one (metadata is an annotation: a blob is still a blob without it).
func readMeta(r *os.Root, side string) dirMeta {
	var m dirMeta
	fi, err := r.Lstat(side)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxMetaBytes {
		return m
	}
	f, st, err := openRegular(r, side, side, fi)
	if err != nil {
		return m
	}
	defer f.Close()
	// Side files are replaced by rename, never rewritten in place, so the size fstat gave is the whole file:
	// reading exactly that spares the read that would only find the end.
	b := make([]byte, min(st.Size(), maxMetaBytes))
	if _, err := io.ReadFull(f, b); err == nil {
		json.Unmarshal(b, &m)
	}
	return m
}

// metaOf reads the side file of the blob dirs/base (no metadata when it has none).
func (d *Dir) metaOf(dirs []string, base string) dirMeta {
	c, err := d.descend(metaSegs(dirs), false)
	if err != nil {
		return dirMeta{}
	}
	defer c.close()
	return readMeta(c.leaf(), base+metaSuffix)
}

// etagOf derives an ETag from the file's identity: every write renames a fresh inode into place while the old
// one still exists, and backdating changes the mtime, so any change gives a new ETag.
func etagOf(fi fs.FileInfo) string {
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return fmt.Sprintf(`"%x-%x-%x"`, ino, fi.ModTime().UnixNano(), fi.Size())
}

func blobInfo(name string, fi fs.FileInfo, m dirMeta) BlobInfo {
	return BlobInfo{Name: name, Size: fi.Size(), ETag: etagOf(fi), LastModified: fi.ModTime().UTC(),
		ContentType: m.ContentType, Metadata: m.Metadata, Tags: m.Tags}
}

// held is a taken container lock; for a writer, also the state folder's tmp folder where writes begin.
type held struct {
	f   *os.File
	tmp *chain // .deadletter/tmp (writers only)
}

func (h held) unlock() {
	if h.f != nil {
		syscall.Flock(int(h.f.Fd()), syscall.LOCK_UN)
		h.f.Close()
	}
	h.tmp.close()
}

// lock takes the container-wide file lock: shared for reads, exclusive for writes and deletes. A directory no
// writer has used yet has no lock file, and a read then needs none — reading writes nothing, so a snapshot on
// read-only media can be read. The state folder and the lock file are reached like any blob, never through a
// link. A writer also sweeps crash leftovers, now and then, under the lock.
func (d *Dir) lock(exclusive bool) (held, error) {
	if err := d.present(); err != nil {
		return held{}, err
	}
	segs := []string{stateDir}
	if exclusive {
		segs = append(segs, tmpDir)
	}
	c, err := d.descend(segs, exclusive)
	if !exclusive && missing(err) {
		return held{}, nil
	}
	if err != nil {
		return held{}, err
	}
	state := c.roots[1]
	fi, err := state.Lstat("lock")
	switch {
	case err == nil && !fi.Mode().IsRegular():
		c.close()
		return held{}, &refusal{stateDir + "/lock", refusedWhy(fi.Mode())}
	case errors.Is(err, fs.ErrNotExist) && !exclusive:
		c.close()
		return held{}, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		c.close()
		return held{}, err
	}
	f, err := flockFile(state, fi, exclusive)
	if err != nil {
		c.close()
		return held{}, err
	}
	if !exclusive {
		c.close()
		return held{f: f}, nil
	}
	h := held{f: f, tmp: c}
	d.maybeSweep(h)
	return h, nil
}

// flockFile opens the lock file — a regular file, the one just looked at (fi; nil when it is being created), never
// through a link — and takes the lock on it.
func flockFile(state *os.Root, fi fs.FileInfo, exclusive bool) (*os.File, error) {
	flag, how := os.O_RDONLY, syscall.LOCK_SH
	if exclusive {
		flag, how = os.O_RDWR|os.O_CREATE, syscall.LOCK_EX
	}
	f, err := state.OpenFile("lock", flag|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0o666)
	if err != nil {
		return nil, err
	}
	if st, serr := f.Stat(); serr != nil || !st.Mode().IsRegular() || (fi != nil && !os.SameFile(fi, st)) {
		f.Close()
		return nil, &refusal{stateDir + "/lock", whyChanged}
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// writeTemp writes body to a new file in .deadletter/tmp and syncs it, so that the rename that publishes it
// publishes its bytes too. It is created 0666 less the umask (0644 under the usual 022), like any tool's files.
func writeTemp(h held, prefix string, body []byte) (string, fs.FileInfo, error) {
	tmp := h.tmp.leaf()
	for attempt := 0; ; attempt++ {
		name := prefix + strconv.FormatUint(rand.Uint64(), 36)
		f, err := tmp.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && attempt < 8 {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		_, err = f.Write(body)
		if err == nil {
			err = f.Sync()
		}
		var fi fs.FileInfo
		if err == nil {
			fi, err = f.Stat()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			tmp.Remove(name)
			return "", nil, err
		}
		return name, fi, nil
	}
}

// publish renames a synced temporary file to dst (a path below the container root) in the verified folder c,
// then checks that it landed there and syncs the folder, so the new name survives a crash. The rename resolves
// dst's folders by path; should one of them have been swapped for a link since c was opened, the file is not
// where c says and the write is reported as failed.
func (d *Dir) publish(tmpName string, tmpInfo fs.FileInfo, c *chain, dst, base string) error {
	if renameFault != nil {
		if err := renameFault(dst); err != nil {
			return err
		}
	}
	if err := c.roots[0].Rename(path.Join(stateDir, tmpDir, tmpName), dst); err != nil {
		return err
	}
	got, err := c.leaf().Lstat(base)
	if err != nil || !os.SameFile(got, tmpInfo) {
		return &refusal{path.Dir(dst), "a folder that changed while it was written to (replaced by a link?)"}
	}
	return c.sync()
}

// putMeta stores a blob's side file; metadata with nothing in it removes the side file instead.
func (d *Dir) putMeta(h held, dirs []string, base string, m dirMeta) error {
	segs := metaSegs(dirs)
	side := base + metaSuffix
	if m.empty() {
		c, err := d.descend(segs, false)
		if missing(err) {
			return nil
		}
		if err != nil {
			return err
		}
		defer c.close()
		switch fi, err := c.leaf().Lstat(side); {
		case errors.Is(err, fs.ErrNotExist), err == nil && !fi.Mode().IsRegular():
			return nil // no side file: nothing to remove (a folder there holds another blob's side files)
		case err != nil:
			return err
		}
		if err := c.leaf().Remove(side); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	c, err := d.metaFolder(segs, side)
	if err != nil {
		return err
	}
	defer c.close()
	mb, _ := json.Marshal(m)
	tmpName, fi, err := writeTemp(h, "m-", mb)
	if err != nil {
		return err
	}
	if err := d.publish(tmpName, fi, c, path.Join(append(segs, side)...), side); err != nil {
		h.tmp.leaf().Remove(tmpName)
		return err
	}
	return nil
}

// metaFolder opens (making it) the folder of a side file and checks that the side file's name is free for one:
// side files mirror blob names, so blob a/x's side file x.json and the folder of blob a/x.json/y's side file are
// the same path, and only one of the two can have one.
func (d *Dir) metaFolder(segs []string, side string) (*chain, error) {
	c, err := d.descend(segs, true)
	if errors.Is(err, errNotFolder) {
		return nil, fmt.Errorf("%w: another blob's metadata stands where this one's folder would be (on a directory, blob a/x and blob a/x.json/y cannot both carry metadata)", errSideFileTaken)
	}
	if err != nil {
		return nil, err
	}
	if fi, err := c.leaf().Lstat(side); err == nil && !fi.Mode().IsRegular() {
		c.close()
		return nil, fmt.Errorf("%w: the folder of another blob's metadata stands where this one's would be (on a directory, blob a/x and blob a/x.json/y cannot both carry metadata)", errSideFileTaken)
	}
	return c, nil
}

// errSideFileTaken: a blob's side file cannot be written because another blob's side files use its path.
var errSideFileTaken = errors.New("its side file's name is taken")

// Stat implements Container. A link, FIFO or device under the name is ErrRefused, not ErrNotFound: something
// is there, and it is not a blob deadletter will touch.
func (d *Dir) Stat(ctx context.Context, name string) (BlobInfo, error) {
	if err := ValidateName(name); err != nil {
		return BlobInfo{}, err
	}
	h, err := d.lock(false)
	if err != nil {
		return BlobInfo{}, opError("stat", name, err)
	}
	defer h.unlock()
	e, err := d.lookup(name)
	if err != nil {
		return BlobInfo{}, opError("stat", name, err)
	}
	defer e.close()
	fi, err := e.blob(name)
	if err != nil {
		return BlobInfo{}, opError("stat", name, err)
	}
	dirs, base := splitName(name)
	return blobInfo(name, fi, d.metaOf(dirs, base)), nil
}

// Read implements Container. Only a regular file is read: the name is looked up without following links, then
// opened without blocking (a FIFO swapped in cannot hang the read) and checked through its own descriptor.
func (d *Dir) Read(ctx context.Context, name string, max int64) (Blob, error) {
	if err := ValidateName(name); err != nil {
		return Blob{}, err
	}
	h, err := d.lock(false)
	if err != nil {
		return Blob{}, opError("read", name, err)
	}
	defer h.unlock()
	e, err := d.lookup(name)
	if err != nil {
		return Blob{}, opError("read", name, err)
	}
	defer e.close()
	fi, err := e.blob(name)
	if err != nil {
		return Blob{}, opError("read", name, err)
	}
	f, st, err := openRegular(e.c.leaf(), e.base, name, fi)
	if err != nil {
		return Blob{}, opError("read", name, err)
	}
	defer f.Close()
	dirs, base := splitName(name)
	bi := blobInfo(name, st, d.metaOf(dirs, base))
	if bi.Size > max {
		return Blob{BlobInfo: bi}, opError("read", name, fmt.Errorf("%w: %d bytes, over the %d-byte limit", ErrTooLarge, bi.Size, max))
	}
	// Blobs are replaced by rename, never rewritten in place: the size the descriptor's fstat gave is the body.
	body := make([]byte, bi.Size)
	if _, err := io.ReadFull(f, body); err != nil {
		return Blob{}, opError("read", name, err)
	}
	return Blob{BlobInfo: bi, Body: body, ServiceTime: time.Now().UTC()}, nil
}

func cannotHold(name string, why error) error {
	return opError("write", name, fmt.Errorf("cannot hold this name in a directory (%w)", why))
}

// Write implements Container. The bytes go to a synced temporary file that is renamed over the name, and the
// folder is synced before Write returns, so a caller that deletes another copy next (restore, drain) never
// loses both to a crash. A link, FIFO or device under the name is refused, never replaced.
func (d *Dir) Write(ctx context.Context, name string, body []byte, opts WriteOptions) (BlobInfo, error) {
	if err := ValidateName(name); err != nil {
		return BlobInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return BlobInfo{}, opError("write", name, err)
	}
	h, err := d.lock(true)
	if err != nil {
		return BlobInfo{}, opError("write", name, err)
	}
	defer h.unlock()
	e, err := d.lookup(name)
	if err != nil {
		return BlobInfo{}, opError("write", name, err)
	}
	defer func() { e.close() }()
	exists, err := writable(e.fi, name, opts)
	if err != nil {
		return BlobInfo{}, err
	}
	dirs, base := splitName(name)
	if e.c == nil {
		if e.c, err = d.descend(dirs, true); errors.Is(err, errNotFolder) {
			return BlobInfo{}, cannotHold(name, err)
		} else if err != nil {
			return BlobInfo{}, opError("write", name, err)
		}
	}
	m := dirMeta{ContentType: opts.ContentType, Metadata: opts.Metadata}
	if !m.empty() {
		// Where the side file will go is checked before anything lands, so a name whose side file cannot be kept
		// fails with nothing changed, not after the body was rewritten.
		mc, err := d.metaFolder(metaSegs(dirs), base+metaSuffix)
		if err != nil {
			return BlobInfo{}, cannotHold(name, err)
		}
		mc.close()
	}
	tmpName, fi, err := writeTemp(h, "w-", body)
	if err != nil {
		return BlobInfo{}, opError("write", name, err)
	}
	if exists && e.fi.Mode().Perm() != fi.Mode().Perm() {
		// A rewrite (a drain) keeps the file's permissions: a 0600 blob does not become 0644.
		if err := h.tmp.leaf().Chmod(tmpName, e.fi.Mode().Perm()); err != nil {
			h.tmp.leaf().Remove(tmpName)
			return BlobInfo{}, opError("write", name, err)
		}
	}
	// The blob first, then its side file: a write that fails (or a process killed) before the blob lands leaves
	// everything as it was — never new metadata (a drain's stamp) on the old body, which would pass for a drain
	// that happened. One that fails between the two leaves the new body with the old metadata, and says so.
	if err := d.publish(tmpName, fi, e.c, name, base); err != nil {
		h.tmp.leaf().Remove(tmpName) // gone already when the rename happened
		return BlobInfo{}, opError("write", name, err)
	}
	if err := d.putMeta(h, dirs, base, m); err != nil {
		return BlobInfo{}, opError("write", name, fmt.Errorf("the body landed but its content type and metadata did not: %w", err))
	}
	return blobInfo(name, fi, m), nil
}

// writable checks a write against what stands at its name (fi, nil when nothing): a folder or a refused entry
// cannot be written over, and the write's condition must hold. It reports whether a blob exists there.
func writable(fi fs.FileInfo, name string, opts WriteOptions) (exists bool, err error) {
	if fi != nil {
		switch {
		case fi.IsDir():
			return false, cannotHold(name, errors.New("a folder of that name holds other blobs"))
		case !fi.Mode().IsRegular():
			return false, opError("write", name, &refusal{name, refusedWhy(fi.Mode())})
		}
		exists = true
	}
	switch {
	case opts.IfNoneMatchAny && exists:
		return exists, opError("write", name, ErrAlreadyExists)
	case opts.IfMatch != "" && (!exists || etagOf(fi) != opts.IfMatch):
		return exists, opError("write", name, ErrConditionFailed)
	}
	return exists, nil
}

// Delete implements Container. Folders the delete empties are removed (Azure has no folders). A delete needs
// no sync of its own: whatever it depends on — the copy a restore wrote first — was synced by its Write.
func (d *Dir) Delete(ctx context.Context, name string, ifMatch string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	h, err := d.lock(true)
	if err != nil {
		return opError("delete", name, err)
	}
	defer h.unlock()
	e, err := d.lookup(name)
	if err != nil {
		return opError("delete", name, err)
	}
	defer e.close()
	fi, err := e.blob(name)
	if errors.Is(err, ErrNotFound) && ifMatch != "" {
		return opError("delete", name, ErrConditionFailed)
	}
	if err != nil {
		return opError("delete", name, err)
	}
	if ifMatch != "" && etagOf(fi) != ifMatch {
		return opError("delete", name, ErrConditionFailed)
	}
	if err := e.c.leaf().Remove(e.base); err != nil {
		return opError("delete", name, err)
	}
	dirs, base := splitName(name)
	d.removeMeta(dirs, base)
	e.c.prune(dirs, 0)
	return nil
}

// removeMeta removes a deleted blob's side file and the side-file folders that leaves empty.
func (d *Dir) removeMeta(dirs []string, base string) {
	segs := metaSegs(dirs)
	c, err := d.descend(segs, false)
	if err != nil {
		return
	}
	defer c.close()
	if c.leaf().Remove(base+metaSuffix) == nil {
		c.prune(segs, 2)
	}
}

// Now implements Container: a directory has no service, so the local clock is the only one.
func (d *Dir) Now(ctx context.Context) (time.Time, error) { return time.Now().UTC(), nil }

// Create implements Provisioner: the directory exists once the container is open.
func (d *Dir) Create(ctx context.Context) error { return nil }

// Backdate implements Provisioner: it sets a blob's Last-Modified, so a seeded directory can hold stranded and
// expiring blobs.
func (d *Dir) Backdate(ctx context.Context, name string, t time.Time) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	h, err := d.lock(true)
	if err != nil {
		return opError("backdate", name, err)
	}
	defer h.unlock()
	e, err := d.lookup(name)
	if err != nil {
		return opError("backdate", name, err)
	}
	defer e.close()
	if _, err := e.blob(name); err != nil {
		return opError("backdate", name, err)
	}
	if err := e.c.leaf().Chtimes(e.base, t, t); err != nil {
		return opError("backdate", name, err)
	}
	return nil
}

// SetTags implements Tagger: the tags live in the blob's side file, so the blob's own file — its mtime
// (Last-Modified) and identity (ETag) — is not touched.
func (d *Dir) SetTags(ctx context.Context, name string, tags map[string]string, ifMatch string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	h, err := d.lock(true)
	if err != nil {
		return opError("set tags of", name, err)
	}
	defer h.unlock()
	e, err := d.lookup(name)
	if err != nil {
		return opError("set tags of", name, err)
	}
	defer e.close()
	fi, err := e.blob(name)
	if err != nil {
		if ifMatch != "" && errors.Is(err, ErrNotFound) {
			return opError("set tags of", name, ErrConditionFailed)
		}
		return opError("set tags of", name, err)
	}
	if ifMatch != "" && etagOf(fi) != ifMatch {
		return opError("set tags of", name, ErrConditionFailed)
	}
	dirs, base := splitName(name)
	m := d.metaOf(dirs, base)
	m.Tags = tags
	if len(tags) == 0 {
		m.Tags = nil
	}
	if err := d.putMeta(h, dirs, base, m); err != nil {
		return opError("set tags of", name, err)
	}
	return nil
}

// maybeSweep removes what crashed writers left, at most once per sweepEvery per Dir (the first write of a
// process included): temporary files older than leftoverAge, and side files whose blob is gone. It runs under
// the exclusive lock, so no other writer is midway; errors only leave leftovers for the next sweep.
func (d *Dir) maybeSweep(h held) {
	d.sweepMu.Lock()
	defer d.sweepMu.Unlock()
	if !d.sweptAt.IsZero() && time.Since(d.sweptAt) < sweepEvery {
		return
	}
	d.sweptAt = time.Now()
	sweepOld(h.tmp.leaf())
	meta, err := d.descend([]string{stateDir, metaDir}, false)
	if err != nil {
		return
	}
	defer meta.close()
	d.sweepMeta(meta.leaf(), meta.roots[0])
}

// sweepOld removes the files of a folder older than leftoverAge.
func sweepOld(r *os.Root) {
	eachEntry(r, func(e fs.DirEntry) {
		if fi, err := e.Info(); err == nil && !fi.IsDir() && time.Since(fi.ModTime()) > leftoverAge {
			r.Remove(e.Name())
		}
	})
}

// sweepMeta removes the side files of meta whose blob in blobs (nil: the folder is gone) no longer exists,
// recursing into subfolders and removing those it empties. Anything else there that is not a side file is a
// leftover temporary file of an older deadletter, removed once old. It reads names, not stats: a side file whose
// blob's name is in the blob folder costs nothing more, so a sweep of a million side files stays cheap.
func (d *Dir) sweepMeta(meta, blobs *os.Root) {
	sw := metaSweep{d: d, meta: meta, blobs: blobs, present: blobNames(blobs)}
	eachName(meta, func(n string) bool {
		sw.entry(n)
		return true
	})
}

// metaSweep is the sweep of one side-file folder against its blob folder.
type metaSweep struct {
	d           *Dir
	meta, blobs *os.Root
	// present holds the blob folder's names; nil when there are too many to hold (then: one Lstat each).
	present map[string]bool
}

// blobNames reads the names of a blob folder, or nil when it is gone or holds more than sweepNamesMax.
func blobNames(blobs *os.Root) map[string]bool {
	if blobs == nil {
		return nil
	}
	present := map[string]bool{}
	if eachName(blobs, func(n string) bool {
		present[n] = true
		return len(present) <= sweepNamesMax
	}) != nil || len(present) > sweepNamesMax {
		return nil
	}
	return present
}

// blob looks up a name in the blob folder.
func (sw *metaSweep) blob(n string) (fs.FileInfo, bool) {
	if sw.blobs == nil || (sw.present != nil && !sw.present[n]) {
		return nil, false
	}
	fi, err := sw.blobs.Lstat(n)
	return fi, err == nil
}

// entry sweeps one name of the side-file folder.
func (sw *metaSweep) entry(n string) {
	base, isSide := strings.CutSuffix(n, metaSuffix)
	if isSide && sw.present != nil && sw.present[base] && !sw.present[n] {
		return // the side file of a blob there (a folder of its name would be unusual, but is checked)
	}
	fi, err := sw.meta.Lstat(n)
	if err != nil {
		return
	}
	switch {
	case fi.IsDir():
		sw.folder(n, fi)
	case isSide && fi.Mode().IsRegular():
		if bfi, ok := sw.blob(base); ok && !bfi.IsDir() {
			return
		}
		sw.meta.Remove(n)
	case time.Since(fi.ModTime()) > leftoverAge:
		sw.meta.Remove(n)
	}
}

// folder sweeps a side-file subfolder against the blob folder of its name, then removes it if that emptied it.
func (sw *metaSweep) folder(n string, fi fs.FileInfo) {
	sub, err := openVerified(sw.meta, n, fi)
	if err != nil {
		return
	}
	var bsub *os.Root
	if bfi, ok := sw.blob(n); ok && bfi.IsDir() {
		bsub, _ = openVerified(sw.blobs, n, bfi)
	}
	sw.d.sweepMeta(sub, bsub)
	sub.Close()
	if bsub != nil {
		bsub.Close()
	}
	if again, err := sw.meta.Lstat(n); err == nil && os.SameFile(again, fi) {
		sw.meta.Remove(n) // fails, as it should, unless the folder is now empty
	}
}

// sweepNamesMax bounds the names of one blob folder a sweep holds at once (a flat folder may hold millions).
const sweepNamesMax = 1 << 16

// eachName hands the names in r's folder to f, a batch at a time, until f returns false.
func eachName(r *os.Root, f func(string) bool) error {
	dir, err := r.Open(".")
	if err != nil {
		return err
	}
	defer dir.Close()
	for {
		names, err := dir.Readdirnames(1024)
		for _, n := range names {
			if !f(n) {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// openVerified opens the folder name of r that Lstat described as fi, refusing anything else in its place.
func openVerified(r *os.Root, name string, fi fs.FileInfo) (*os.Root, error) {
	if !fi.IsDir() {
		return nil, errNotFolder
	}
	sub, err := r.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	if st, err := sub.Stat("."); err != nil || !os.SameFile(st, fi) {
		sub.Close()
		return nil, &refusal{name, whyChanged}
	}
	return sub, nil
}

// eachEntry hands every entry of r's folder to f, a batch at a time (a folder may hold a million).
func eachEntry(r *os.Root, f func(fs.DirEntry)) error {
	dir, err := r.Open(".")
	if err != nil {
		return err
	}
	defer dir.Close()
	for {
		ents, err := dir.ReadDir(1024)
		for _, e := range ents {
			f(e)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// List implements Container. The folders are read in parallel by a bounded set of workers, and pages of up to
// 5,000 (each in name order; across folders in any order) are handed to visit as they fill, so neither time to
// the first page nor memory grows with the container. Symbolic links, FIFOs and other entries that are not
// regular files are listed as refused, never followed and never skipped; when a folder of the prefix itself is
// a link, that link is listed, as everything the prefix asks for is behind it. Nothing is opened but folders
// and side files, so a FIFO cannot block the listing.
func (d *Dir) List(ctx context.Context, prefix string, visit func(Page) error) error {
	h, err := d.lock(false)
	if err != nil {
		return fmt.Errorf("list %s: %w", d.Describe(), err)
	}
	defer h.unlock()
	var segs []string
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		// Only the folder the prefix ends in can hold its blobs; a folder no name could have holds none.
		if ValidateName(prefix[:i]) != nil {
			return nil
		}
		segs = strings.Split(prefix[:i], "/")
	}
	start, err := d.descend(segs, false)
	var ref *refusal
	switch {
	case missing(err):
		return nil
	case errors.As(err, &ref):
		var fi fs.FileInfo
		if r := d.r.Load(); r != nil {
			fi, _ = r.Lstat(ref.path)
		}
		if err := visit(Page{Blobs: []BlobInfo{refusedEntry(ref.path, ref.why, fi)}, ServiceTime: time.Now().UTC()}); err != nil {
			return fmt.Errorf("list %s: %w", d.Describe(), err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("list %s: %w", d.Describe(), err)
	}
	defer start.close()
	if err := d.walk(ctx, prefix, start, segs, visit); err != nil {
		return fmt.Errorf("list %s: %w", d.Describe(), err)
	}
	return nil
}

// listWorkers bounds the folders read at once: enough to keep a disk's queue and the CPUs busy with stats,
// few enough not to thrash a spinning disk or exhaust file descriptors.
func listWorkers() int { return min(16, max(4, 2*runtime.GOMAXPROCS(0))) }

// walker is one parallel listing: a stack of folders still to read, shared by the workers, and the page
// being filled, cut at 5,000 and handed to the caller's goroutine.
type walker struct {
	d      *Dir
	top    *os.Root // the container directory
	prefix string
	ctx    context.Context

	mu      sync.Mutex
	cond    *sync.Cond
	todo    []walkItem
	pending int // folders queued or being read
	err     error
	page    []BlobInfo

	pages chan []BlobInfo
}

// walkItem is a folder to read: rel below the container, as its parent's listing saw it (fi) and, for the
// start folder only, already open.
type walkItem struct {
	rel  string
	fi   fs.FileInfo
	root *os.Root
}

func (d *Dir) walk(ctx context.Context, prefix string, start *chain, segs []string, visit func(Page) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &walker{d: d, top: start.roots[0], prefix: prefix, ctx: ctx, pages: make(chan []BlobInfo, 2),
		todo: []walkItem{{rel: strings.Join(segs, "/"), root: start.leaf()}}, pending: 1}
	w.cond = sync.NewCond(&w.mu)
	var wg sync.WaitGroup
	for range listWorkers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.work()
		}()
	}
	go func() {
		wg.Wait()
		if w.err == nil && len(w.page) > 0 {
			w.send(w.page)
		}
		close(w.pages)
	}()
	var verr error
	for p := range w.pages {
		if verr == nil {
			if verr = visit(Page{Blobs: p, ServiceTime: time.Now().UTC()}); verr != nil {
				cancel() // stop the workers; keep draining so none is left blocked
			}
		}
	}
	switch {
	case verr != nil:
		return verr
	case w.err != nil:
		return w.err
	}
	return ctx.Err()
}

func (w *walker) work() {
	for {
		w.mu.Lock()
		for len(w.todo) == 0 && w.pending > 0 && w.err == nil {
			w.cond.Wait()
		}
		if w.err != nil || w.pending == 0 {
			w.mu.Unlock()
			return
		}
		it := w.todo[len(w.todo)-1]
		w.todo = w.todo[:len(w.todo)-1]
		w.mu.Unlock()
		err := w.ctx.Err()
		if err == nil {
			err = w.read(it)
		}
		w.mu.Lock()
		w.pending--
		if err != nil && w.err == nil {
			w.err = err
		}
		if w.pending == 0 || w.err != nil {
			w.cond.Broadcast()
		}
		w.mu.Unlock()
	}
}

// send hands a full page (sorted here, in parallel) to the caller's goroutine.
func (w *walker) send(p []BlobInfo) error {
	sortByName(p)
	select {
	case w.pages <- p:
		return nil
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

// add puts a folder's batch of entries on the page, sending every page it fills.
func (w *walker) add(batch []BlobInfo) error {
	if len(batch) == 0 {
		return nil
	}
	var full [][]BlobInfo
	w.mu.Lock()
	w.page = append(w.page, batch...)
	for len(w.page) >= dirPageSize {
		full = append(full, w.page[:dirPageSize:dirPageSize])
		w.page = append(make([]BlobInfo, 0, dirPageSize), w.page[dirPageSize:]...)
	}
	w.mu.Unlock()
	for _, p := range full {
		if err := w.send(p); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) push(it walkItem) {
	w.mu.Lock()
	w.todo = append(w.todo, it)
	w.pending++
	w.cond.Signal()
	w.mu.Unlock()
}

// wantsFolder reports whether a folder can hold names with the prefix.
func (w *walker) wantsFolder(rel string) bool {
	return strings.HasPrefix(rel+"/", w.prefix) || strings.HasPrefix(w.prefix, rel+"/")
}

// read lists one folder: its files become blobs (with their side files, read only where the side-file folder
// exists), its links and FIFOs refused entries, its folders work for the other workers.
func (w *walker) read(it walkItem) error {
	r, done, err := w.open(it)
	if r == nil || err != nil {
		return err
	}
	defer done()
	fr := &folderReader{w: w, rel: it.rel}
	if it.rel != "" {
		fr.relSegs = strings.Split(it.rel, "/")
	}
	defer func() { fr.meta.close() }()
	dir, err := r.Open(".")
	if err != nil {
		return err
	}
	defer dir.Close()
	for {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		ents, rerr := dir.ReadDir(1024)
		batch := make([]BlobInfo, 0, len(ents))
		for _, e := range ents {
			bi, ok, err := fr.entry(e)
			if err != nil {
				return err
			}
			if ok {
				batch = append(batch, bi)
			}
		}
		if err := w.add(batch); err != nil {
			return err
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// open opens the folder an item names (the top one comes open). A folder that vanished since its parent was
// read gives nil: it was emptied and removed. One replaced meanwhile (by a link out of the container, say) is
// listed as refused and gives nil too.
func (w *walker) open(it walkItem) (*os.Root, func(), error) {
	if it.root != nil {
		return it.root, func() {}, nil
	}
	r, err := w.top.OpenRoot(it.rel)
	switch {
	case missing(err) || errors.Is(err, syscall.ENOTDIR):
		return nil, nil, nil
	case errors.Is(err, fs.ErrPermission):
		return nil, nil, err
	case err != nil:
		return nil, nil, w.add([]BlobInfo{refusedEntry(it.rel, whyChanged, it.fi)})
	}
	if st, err := r.Stat("."); err != nil || !os.SameFile(st, it.fi) {
		r.Close()
		return nil, nil, w.add([]BlobInfo{refusedEntry(it.rel, whyChanged, it.fi)})
	}
	return r, func() { r.Close() }, nil
}

// folderReader turns one folder's entries into listed blobs.
type folderReader struct {
	w       *walker
	rel     string
	relSegs []string
	// meta is the side-file folder, opened at the first file; nil when there is none.
	meta      *chain
	metaTried bool
}

// entry is one entry of the folder as a listed blob (ok false: not listed — a folder, handed to the walk, or a
// name outside the prefix).
func (f *folderReader) entry(e fs.DirEntry) (bi BlobInfo, ok bool, err error) {
	n := e.Name()
	if f.rel == "" && n == stateDir {
		return bi, false, nil
	}
	rel := n
	if f.rel != "" {
		rel = f.rel + "/" + n
	}
	fi, err := e.Info()
	if missing(err) {
		return bi, false, nil
	}
	if err != nil {
		return bi, false, err
	}
	switch t := fi.Mode(); {
	case t.IsDir():
		if f.w.wantsFolder(rel) {
			f.w.push(walkItem{rel: rel, fi: fi})
		}
		return bi, false, nil
	case !strings.HasPrefix(rel, f.w.prefix):
		return bi, false, nil
	case t.IsRegular():
		return blobInfo(rel, fi, f.metaOf(n)), true, nil
	default:
		return refusedEntry(rel, refusedWhy(t), fi), true, nil
	}
}

// metaOf reads the side file of the folder's file n, if the side-file folder exists.
func (f *folderReader) metaOf(n string) dirMeta {
	if !f.metaTried {
		f.metaTried = true
		var err error
		if f.meta, err = f.w.d.descendCached(metaSegs(f.relSegs), false, false); err != nil {
			f.meta = nil
		}
	}
	if f.meta == nil {
		return dirMeta{}
	}
	return readMeta(f.meta.leaf(), n+metaSuffix)
}

// renameFault, set by tests only, fails the rename that publishes dst: what a rename across file systems
// (EXDEV, a folder that is a mount point) or a full disk does.
var renameFault func(dst string) error

// refusedEntry lists an entry that is not a readable blob, dated by the entry itself (the link, the FIFO) so that
// it has an age like every other row rather than one of 292 years.
func refusedEntry(name, why string, fi fs.FileInfo) BlobInfo {
	bi := BlobInfo{Name: name, Refused: why}
	if fi != nil {
		bi.LastModified = fi.ModTime().UTC()
	}
	return bi
}

// ReadDirState reads a file of the tool's own from a directory container's state folder (the register a seed
// left) the way every blob is read: never through a link, only a regular file, bounded. A missing file is
// fs.ErrNotExist.
func ReadDirState(root, name string) ([]byte, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for _, p := range []string{stateDir, path.Join(stateDir, name)} {
		fi, err := r.Lstat(p)
		if err != nil {
			return nil, err
		}
		if want := p == stateDir; fi.IsDir() != want || !want && !fi.Mode().IsRegular() {
			return nil, &refusal{p, refusedWhy(fi.Mode())}
		}
	}
	f, err := r.OpenFile(path.Join(stateDir, name), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, &refusal{path.Join(stateDir, name), whyChanged}
	}
	return io.ReadAll(io.LimitReader(f, maxMetaBytes))
}

// WriteDirState writes a file of the tool's own into a directory container's state folder (the register a seed
// leaves, the demo's marker) the way blobs are written: through os.Root, never through a link, to a temporary
// file synced and renamed over the name. A link or anything but a folder at the state folder is refused.
func WriteDirState(root, name string, b []byte) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.Mkdir(stateDir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if fi, err := r.Lstat(stateDir); err != nil {
		return err
	} else if !fi.IsDir() {
		return &refusal{stateDir, refusedWhy(fi.Mode())}
	}
	if fi, err := r.Lstat(path.Join(stateDir, name)); err == nil && !fi.Mode().IsRegular() {
		return &refusal{path.Join(stateDir, name), refusedWhy(fi.Mode())}
	}
	tmp := path.Join(stateDir, fmt.Sprintf(".%s.%d.tmp", name, os.Getpid()))
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o666)
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if serr := f.Sync(); werr == nil {
		werr = serr
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = r.Rename(tmp, path.Join(stateDir, name))
	}
	if werr != nil {
		r.Remove(tmp)
	}
	return werr
}

// RegisterFile is the name of the handler register a seed leaves in a directory container's state folder.
const RegisterFile = "handlers.json"

// DirRegisterPath is where a directory container keeps the handler register a seed wrote beside its blobs (in the
// directory's own state folder, which no blob can be named under).
func DirRegisterPath(root string) string { return DirStateFile(root, RegisterFile) }

// DirStateFile is a file of the tool's own in a directory container's state folder (never listed as a blob).
func DirStateFile(root, name string) string { return filepath.Join(root, stateDir, name) }
