package dirstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/deadletter/deadletter/store"
)

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
// is a refusal, a file on the way errNotFolder; with create, missing folders are made (0777 less the umask; 0700 for a private Dir).
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
			if err = cur.Mkdir(seg, d.folderPerm()); err == nil || errors.Is(err, fs.ErrExist) {
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

// blob is the entry's file when it is a blob: store.ErrNotFound when nothing (or only a folder) has the name,
// store.ErrRefused for a link, FIFO, socket or device, which is never read, overwritten or removed.
func (e entry) blob(name string) (fs.FileInfo, error) {
	switch {
	case e.fi == nil:
		return nil, store.ErrNotFound
	case e.fi.IsDir():
		// No blob has the name, but a folder holds it: it cannot be written either (ErrNameTaken tells a restore
		// looking for a free name to move on).
		return nil, errors.Join(store.ErrNotFound, store.ErrNameTaken)
	case !e.fi.Mode().IsRegular():
		return nil, &refusal{name, refusedWhy(e.fi.Mode())}
	}
	return e.fi, nil
}

// openRegular opens a file of a verified folder for reading, only if it is the regular file fi described:
// O_NONBLOCK so a FIFO swapped in cannot block the open, then the descriptor's own fstat decides.
func openRegular(r *os.Root, base, path string, fi fs.FileInfo) (*os.File, fs.FileInfo, error) {
	f, err := r.OpenFile(base, os.O_RDONLY|openNoFollow, 0)
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
