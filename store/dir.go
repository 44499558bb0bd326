package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// stateDir holds what a directory container keeps beside the blobs: a lock file, metadata side files and
// temporary files (on the same file system, so a rename into place is atomic). No blob may be named under it.
const stateDir = ".deadletter"

// Dir is a container backed by a local directory: each blob is a file whose path is the blob name ("/" makes
// folders), Last-Modified is the file's mtime, and content type and metadata live in side files under
// .deadletter/meta. Writes land atomically (temp file + rename) and all operations take a file lock, so ETag
// conditions hold against concurrent writers in this and other processes.
type Dir struct {
	root string
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
	return &Dir{root: abs}, nil
}

// CreateDir opens a directory container, creating the directory when it does not exist (seed, demo).
func CreateDir(root string) (*Dir, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("container directory %q: %w", root, err)
	}
	return OpenDir(root)
}

// Describe implements Container.
func (d *Dir) Describe() string { return "dir:" + d.root }

// Root is the directory holding the blobs.
func (d *Dir) Root() string { return d.root }

type dirMeta struct {
	ContentType string            `json:"contentType,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
}

// ValidateName refuses names a directory cannot hold faithfully or that would escape its root.
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
	for i, seg := range strings.Split(name, "/") {
		switch {
		case seg == "":
			return bad("empty path segment")
		case seg == "." || seg == "..":
			return bad("path segment " + seg)
		case len(seg) > 255:
			return bad("a path segment is longer than 255 bytes")
		case i == 0 && seg == stateDir:
			return bad(stateDir + "/ is reserved for the directory container's own state")
		}
	}
	return nil
}

func (d *Dir) path(name string) string { return filepath.Join(d.root, filepath.FromSlash(name)) }
func (d *Dir) metaPath(name string) string {
	return filepath.Join(d.root, stateDir, "meta", filepath.FromSlash(name)+".json")
}

// lock takes the container-wide file lock: shared for reads, exclusive for writes and deletes. A directory no
// writer has used yet has no lock file, and a read then needs none.
func (d *Dir) lock(exclusive bool) (func(), error) {
	path := filepath.Join(d.root, stateDir, "lock")
	var f *os.File
	var err error
	if exclusive {
		if err = os.MkdirAll(filepath.Join(d.root, stateDir, "tmp"), 0o755); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	} else if f, err = os.Open(path); errors.Is(err, fs.ErrNotExist) {
		return func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
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

func (d *Dir) info(name string, fi fs.FileInfo) BlobInfo {
	bi := BlobInfo{Name: name, Size: fi.Size(), ETag: etagOf(fi), LastModified: fi.ModTime().UTC()}
	if b, err := os.ReadFile(d.metaPath(name)); err == nil {
		var m dirMeta
		if json.Unmarshal(b, &m) == nil {
			bi.ContentType, bi.Metadata, bi.Tags = m.ContentType, m.Metadata, m.Tags
		}
	}
	return bi
}

// List implements Container: the directory walked in name order, handed over in pages. Symbolic links, FIFOs
// and other entries that are not regular files are listed as refused, never followed and never skipped.
func (d *Dir) List(ctx context.Context, prefix string, visit func(Page) error) error {
	unlock, err := d.lock(false)
	if err != nil {
		return fmt.Errorf("list %s: %w", d.Describe(), err)
	}
	defer unlock()
	var page []BlobInfo
	flush := func() error {
		if len(page) == 0 {
			return nil
		}
		p := Page{Blobs: page, ServiceTime: time.Now().UTC()}
		page = nil
		return visit(p)
	}
	start := d.root
	if i := strings.LastIndexByte(prefix, '/'); i > 0 && ValidateName(prefix[:i]) == nil {
		start = d.path(prefix[:i]) // only the folder the prefix can be in
	}
	err = filepath.WalkDir(start, func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == start && start != d.root {
			return filepath.SkipAll
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, _ := filepath.Rel(d.root, p)
		if rel == "." {
			return nil
		}
		if e.IsDir() {
			if rel == stateDir {
				return filepath.SkipDir
			}
			return nil
		}
		name := filepath.ToSlash(rel)
		if !strings.HasPrefix(name, prefix) {
			return nil
		}
		if !e.Type().IsRegular() {
			page = append(page, BlobInfo{Name: name, Refused: refusedWhy(e.Type())})
		} else {
			fi, err := e.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			page = append(page, d.info(name, fi))
		}
		if len(page) == dirPageSize {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", d.Describe(), err)
	}
	return nil
}

// dirPageSize matches Azure's page, so both backends exercise the same paging.
const dirPageSize = 5000

func refusedWhy(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link: deadletter never follows links out of the container directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO, not a file"
	case m&fs.ModeSocket != 0:
		return "a socket, not a file"
	case m&fs.ModeDevice != 0:
		return "a device, not a file"
	}
	return "not a regular file"
}

func (d *Dir) statLocked(name string) (BlobInfo, error) {
	if err := ValidateName(name); err != nil {
		return BlobInfo{}, err
	}
	fi, err := os.Lstat(d.path(name))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || (err == nil && !fi.Mode().IsRegular()) {
		return BlobInfo{}, opError("stat", name, ErrNotFound)
	}
	if err != nil {
		return BlobInfo{}, opError("stat", name, err)
	}
	return d.info(name, fi), nil
}

// Stat implements Container.
func (d *Dir) Stat(ctx context.Context, name string) (BlobInfo, error) {
	unlock, err := d.lock(false)
	if err != nil {
		return BlobInfo{}, opError("stat", name, err)
	}
	defer unlock()
	return d.statLocked(name)
}

// Read implements Container.
func (d *Dir) Read(ctx context.Context, name string, max int64) (Blob, error) {
	unlock, err := d.lock(false)
	if err != nil {
		return Blob{}, opError("read", name, err)
	}
	defer unlock()
	bi, err := d.statLocked(name)
	if err != nil {
		return Blob{}, err
	}
	if bi.Size > max {
		return Blob{BlobInfo: bi}, opError("read", name, fmt.Errorf("%w: %d bytes, over the %d-byte limit", ErrTooLarge, bi.Size, max))
	}
	f, err := os.Open(d.path(name))
	if err != nil {
		return Blob{}, opError("read", name, err)
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return Blob{}, opError("read", name, err)
	}
	if int64(len(body)) > max {
		return Blob{BlobInfo: bi}, opError("read", name, fmt.Errorf("%w: over the %d-byte limit", ErrTooLarge, max))
	}
	return Blob{BlobInfo: bi, Body: body, ServiceTime: time.Now().UTC()}, nil
}

// Write implements Container.
func (d *Dir) Write(ctx context.Context, name string, body []byte, opts WriteOptions) (BlobInfo, error) {
	if err := ValidateName(name); err != nil {
		return BlobInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return BlobInfo{}, opError("write", name, err)
	}
	unlock, err := d.lock(true)
	if err != nil {
		return BlobInfo{}, opError("write", name, err)
	}
	defer unlock()
	cur, err := d.statLocked(name)
	exists := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return BlobInfo{}, err
	}
	if opts.IfNoneMatchAny && exists {
		return BlobInfo{}, opError("write", name, ErrAlreadyExists)
	}
	if opts.IfMatch != "" && (!exists || cur.ETag != opts.IfMatch) {
		return BlobInfo{}, opError("write", name, ErrConditionFailed)
	}
	p := d.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return BlobInfo{}, opError("write", name, fmt.Errorf("cannot hold this name in a directory (a blob is named like a folder on its path): %w", err))
	}
	tmp, err := os.CreateTemp(filepath.Join(d.root, stateDir, "tmp"), "w-*")
	if err != nil {
		return BlobInfo{}, opError("write", name, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(body); err != nil {
		tmp.Close()
		return BlobInfo{}, opError("write", name, err)
	}
	if err := tmp.Close(); err != nil {
		return BlobInfo{}, opError("write", name, err)
	}
	if err := d.writeMeta(name, dirMeta{ContentType: opts.ContentType, Metadata: opts.Metadata}); err != nil {
		return BlobInfo{}, err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return BlobInfo{}, opError("write", name, fmt.Errorf("cannot hold this name in a directory: %w", err))
	}
	return d.statLocked(name)
}

// Delete implements Container.
func (d *Dir) Delete(ctx context.Context, name string, ifMatch string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	unlock, err := d.lock(true)
	if err != nil {
		return opError("delete", name, err)
	}
	defer unlock()
	cur, err := d.statLocked(name)
	if errors.Is(err, ErrNotFound) && ifMatch != "" {
		return opError("delete", name, ErrConditionFailed)
	}
	if err != nil {
		return err
	}
	if ifMatch != "" && cur.ETag != ifMatch {
		return opError("delete", name, ErrConditionFailed)
	}
	if err := os.Remove(d.path(name)); err != nil {
		return opError("delete", name, err)
	}
	os.Remove(d.metaPath(name))
	// Folders are only how a directory spells "/": drop the ones this delete emptied, as Azure has none.
	for dir := filepath.Dir(d.path(name)); dir != d.root && strings.HasPrefix(dir, d.root); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break
		}
	}
	return nil
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
	unlock, err := d.lock(true)
	if err != nil {
		return err
	}
	defer unlock()
	return os.Chtimes(d.path(name), t, t)
}

// SetTags implements Tagger: the tags live in the blob's side file, so the blob's own file — its mtime
// (Last-Modified) and identity (ETag) — is not touched.
func (d *Dir) SetTags(ctx context.Context, name string, tags map[string]string, ifMatch string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	unlock, err := d.lock(true)
	if err != nil {
		return opError("set tags of", name, err)
	}
	defer unlock()
	cur, err := d.statLocked(name)
	if err != nil {
		if ifMatch != "" && errors.Is(err, ErrNotFound) {
			return opError("set tags of", name, ErrConditionFailed)
		}
		return err
	}
	if ifMatch != "" && cur.ETag != ifMatch {
		return opError("set tags of", name, ErrConditionFailed)
	}
	if len(tags) == 0 {
		tags = nil
	}
	return d.writeMeta(name, dirMeta{ContentType: cur.ContentType, Metadata: cur.Metadata, Tags: tags})
}

func (d *Dir) writeMeta(name string, m dirMeta) error {
	mb, _ := json.Marshal(m)
	mp := d.metaPath(name)
	if err := os.MkdirAll(filepath.Dir(mp), 0o755); err != nil {
		return opError("write", name, err)
	}
	if err := os.WriteFile(mp+".tmp", mb, 0o644); err != nil {
		return opError("write", name, err)
	}
	if err := os.Rename(mp+".tmp", mp); err != nil {
		return opError("write", name, err)
	}
	return nil
}

// DirRegisterPath is where a directory container keeps the handler register a seed wrote beside its blobs (in the
// directory's own state folder, which no blob can be named under).
func DirRegisterPath(root string) string { return DirStateFile(root, "handlers.json") }

// DirStateFile is a file of the tool's own in a directory container's state folder (never listed as a blob).
func DirStateFile(root, name string) string { return filepath.Join(root, stateDir, name) }
