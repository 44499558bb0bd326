package dirstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"time"
)

type dirMeta struct {
	ContentType string            `json:"contentType,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	// Lease is the blob's lease while an action holds it (store.Leaser).
	Lease *dirLease `json:"lease,omitempty"`
}

// dirLease is a held lease: its id, and until when (the wall clock: a lease bounds a process, not a rehearsal's
// time).
type dirLease struct {
	ID    string    `json:"id"`
	Until time.Time `json:"until"`
}

// held reports whether the lease is in force at now.
func (l *dirLease) held(now time.Time) bool { return l != nil && now.Before(l.Until) }

func (m dirMeta) empty() bool {
	return m.ContentType == "" && len(m.Metadata) == 0 && len(m.Tags) == 0 && m.Lease == nil
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
	if metaFault != nil {
		if err := metaFault(side); err != nil {
			return err
		}
	}
	c, err := d.metaFolder(segs, side)
	if err != nil {
		return err
	}
	defer c.close()
	mb, _ := json.Marshal(m)
	tmpName, fi, err := writeTemp(h, "m-", mb, d.filePerm(), noStamp, d.synced()) // (a side file's own time is never read)
	if err != nil {
		return err
	}
	if _, err := d.publish(tmpName, fi, c, path.Join(append(segs, side)...), side); err != nil {
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

// metaFault, set by tests only, fails the writing of a side file: what a disk that fills between a blob's body and
// its side file does.
var metaFault func(side string) error
