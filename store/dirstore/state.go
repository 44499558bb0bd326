package dirstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
)

// ReadState reads a file from a directory container's state folder (the mark of a directory deadletter made:
// internal/made) the way every blob is read: never through a link, only a regular file, bounded. A missing file is
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

// WriteState writes a file into a directory container's state folder (the mark of a directory deadletter made)
// the way blobs are written: through os.Root, never through a link, to a temporary
// file synced and renamed over the name. A link or anything but a folder at the state folder is refused. In a
// directory only its owner may enter (0700: a twin of production payloads) the folder is 0700 and its files 0600,
// as the blobs beside them.
func WriteState(root, name string, b []byte) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	dirPerm, filePerm := fs.FileMode(0o777), fs.FileMode(0o666)
	if fi, err := r.Stat("."); err == nil && fi.Mode().Perm()&0o077 == 0 {
		dirPerm, filePerm = 0o700, 0o600
	}
	if err := r.Mkdir(stateDir, dirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
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
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|openNoFollow, filePerm)
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

// RemoveState removes a file from a directory container's state folder (a missing one is no error). The removal
// is not synced: what depends on it being gone must not.
func RemoveState(root, name string) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	if fi, err := r.Lstat(stateDir); err != nil || !fi.IsDir() {
		return nil // (no state folder: nothing of its to remove; a link there is never followed)
	}
	if err := r.Remove(path.Join(stateDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
