package dirstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// ReadState reads a file of the tool's own from a directory container's state folder (the register a seed
// left) the way every blob is read: never through a link, only a regular file, bounded. A missing file is
// fs.ErrNotExist.
func ReadState(root, name string) ([]byte, error) {
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
	f, err := r.OpenFile(path.Join(stateDir, name), os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, &refusal{path.Join(stateDir, name), whyChanged}
	}
	return io.ReadAll(io.LimitReader(f, maxMetaBytes))
}

// WriteState writes a file of the tool's own into a directory container's state folder (the register a seed
// leaves, the demo's marker) the way blobs are written: through os.Root, never through a link, to a temporary
// file synced and renamed over the name. A link or anything but a folder at the state folder is refused.
func WriteState(root, name string, b []byte) error {
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
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|openNoFollow, 0o666)
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

// RegisterPath is where a directory container keeps the handler register a seed wrote beside its blobs (in the
// directory's own state folder, which no blob can be named under).
func RegisterPath(root string) string { return StateFile(root, RegisterFile) }

// StateFile is a file of the tool's own in a directory container's state folder (never listed as a blob).
func StateFile(root, name string) string { return filepath.Join(root, stateDir, name) }
