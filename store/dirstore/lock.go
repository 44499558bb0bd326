package dirstore

import (
	"errors"
	"io/fs"
	"os"
)

// held is a taken container lock; for a writer, also the state folder's tmp folder where writes begin.
type held struct {
	f   *os.File
	tmp *chain // .deadletter/tmp (writers only)
}

func (h held) unlock() {
	if h.f != nil {
		unlockFile(h.f)
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
	f, err := flockFile(state, fi, exclusive, d.filePerm())
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
func flockFile(state *os.Root, fi fs.FileInfo, exclusive bool, perm fs.FileMode) (*os.File, error) {
	flag := os.O_RDONLY
	if exclusive {
		flag = os.O_RDWR | os.O_CREATE
	}
	f, err := state.OpenFile("lock", flag|openNoFollow, perm)
	if err != nil {
		return nil, err
	}
	if st, serr := f.Stat(); serr != nil || !st.Mode().IsRegular() || (fi != nil && !os.SameFile(fi, st)) {
		f.Close()
		return nil, &refusal{stateDir + "/lock", whyChanged}
	}
	if err := lockFile(f, exclusive); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
