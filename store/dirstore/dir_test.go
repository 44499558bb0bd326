package dirstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// The hostile-directory tests: a directory container is often a snapshot someone handed over, so whatever it
// holds — links to folders or files inside or outside it, FIFOs — must be listed as refused and never be read,
// written, removed or re-dated through.

func dirOpen(t testing.TB, root string) *dirstore.Dir {
	t.Helper()
	d, err := dirstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func writeFile(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot is every entry under root (path, kind, content of regular files, mtime): what "nothing was touched"
// compares.
func snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == root {
			return nil
		}
		if err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		v := fmt.Sprintf("%v %d", fi.Mode().Type(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func listed(t testing.TB, d *dirstore.Dir, prefix string) map[string]store.BlobInfo {
	t.Helper()
	got := map[string]store.BlobInfo{}
	err := d.List(context.Background(), prefix, func(p store.Page) error {
		for _, b := range p.Blobs {
			if _, dup := got[b.Name]; dup {
				return fmt.Errorf("%q listed twice", b.Name)
			}
			got[b.Name] = b
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func wantRefused(t *testing.T, what string, err error, name string) {
	t.Helper()
	if !errors.Is(err, store.ErrRefused) || !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
		t.Errorf("%s: %v; want ErrRefused naming %q", what, err, name)
	}
}

// A folder of the container that is a symbolic link — out of the container, or to another of its folders — is
// listed as refused under its own name, and nothing goes through it: not a read, a stat, a write with or without
// a condition, a delete, tags or a backdate. Nothing outside it changes, and nothing appears there.
func TestDirSymlinkedFolder(t *testing.T) {
	t.Parallel()
	bg := context.Background()
	for _, tc := range []struct{ name, link string }{{"outside", "quarantine"}, {"inside", "inlink"}} {
		t.Run(tc.name, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			target := outside
			if tc.name == "inside" {
				target = filepath.Join(root, "real")
			}
			writeFile(t, filepath.Join(target, "victim.json"), "original")
			old := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
			os.Chtimes(filepath.Join(target, "victim.json"), old, old)
			linkTo := target // out of the container: absolute
			if tc.name == "inside" {
				linkTo = "real" // relative, the kind os.Root itself would follow
			}
			if err := os.Symlink(linkTo, filepath.Join(root, tc.link)); err != nil {
				t.Fatal(err)
			}
			d := dirOpen(t, root)
			if _, err := d.Write(bg, "ok/blob.json", []byte("[]"), store.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			before, beforeRoot := snapshot(t, outside), snapshot(t, filepath.Join(root, "real"))

			all := listed(t, d, "")
			if b, ok := all[tc.link]; !ok || b.Refused == "" || !strings.Contains(b.Refused, "symbolic link") {
				t.Fatalf("the link is not listed as refused: %+v (listing %v)", b, all)
			}
			// Dated by the link itself, so it has an age like any row (not 292 years, not "expiring").
			if lm := all[tc.link].LastModified; time.Since(lm) > time.Minute || time.Since(lm) < 0 {
				t.Errorf("the refused entry is dated %v", lm)
			}
			for n := range all {
				if strings.HasPrefix(n, tc.link+"/") {
					t.Errorf("listed %q through the link", n)
				}
			}
			if b, ok := all["ok/blob.json"]; !ok || b.Refused != "" {
				t.Errorf("an ordinary blob beside the link: %+v", b)
			}
			// A listing of the link's prefix shows the link, not an empty (healthy-looking) prefix.
			if p := listed(t, d, tc.link+"/"); len(p) != 1 || p[tc.link].Refused == "" {
				t.Errorf("listing %s/: %v", tc.link, p)
			}

			victim := tc.link + "/victim.json"
			_, err := d.Read(bg, victim, 1<<20)
			wantRefused(t, "read", err, tc.link)
			_, err = d.Stat(bg, victim)
			wantRefused(t, "stat", err, tc.link)
			_, err = d.Write(bg, victim, []byte("evil"), store.WriteOptions{ContentType: "text/plain"})
			wantRefused(t, "write over", err, tc.link)
			_, err = d.Write(bg, tc.link+"/new.json", []byte("evil"), store.WriteOptions{IfNoneMatchAny: true})
			wantRefused(t, "create", err, tc.link)
			_, err = d.Write(bg, tc.link+"/deeper/new.json", []byte("evil"), store.WriteOptions{})
			wantRefused(t, "create in a new folder", err, tc.link)
			_, err = d.Write(bg, victim, []byte("evil"), store.WriteOptions{IfMatch: `"0-0-0"`})
			wantRefused(t, "write if-match", err, tc.link)
			wantRefused(t, "delete", d.Delete(bg, victim, ""), tc.link)
			wantRefused(t, "set tags", d.SetTags(bg, victim, map[string]string{"ack": "x"}, ""), tc.link)
			wantRefused(t, "backdate", d.Backdate(bg, victim, time.Now().Add(-time.Hour)), tc.link)

			if after := snapshot(t, outside); !maps(before, after) {
				t.Errorf("outside the container changed:\nbefore %v\nafter  %v", before, after)
			}
			if after := snapshot(t, filepath.Join(root, "real")); !maps(beforeRoot, after) {
				t.Errorf("the link's target folder changed:\nbefore %v\nafter  %v", beforeRoot, after)
			}
			if fi, err := os.Lstat(filepath.Join(root, tc.link)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("the link itself was replaced: %v %v", fi, err)
			}
			if _, err := os.Lstat(filepath.Join(root, ".deadletter", "meta", tc.link)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("side files were written for names behind the link: %v", err)
			}
		})
	}
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A blob that is a symbolic link — to a file outside or inside the container — is refused: listed as such, not
// read, not replaced by a write whatever its condition, not deleted, not re-dated.
func TestDirSymlinkedFile(t *testing.T) {
	t.Parallel()
	bg := context.Background()
	root, outside := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.json"), "outside")
	writeFile(t, filepath.Join(root, "S", "real.json"), "inside")
	os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(root, "S", "out.json"))
	os.Symlink("real.json", filepath.Join(root, "S", "in.json"))
	d := dirOpen(t, root)
	real, err := d.Stat(bg, "S/real.json")
	if err != nil {
		t.Fatal(err)
	}
	before, beforeOut := snapshot(t, root), snapshot(t, outside)

	all := listed(t, d, "")
	for _, n := range []string{"S/out.json", "S/in.json"} {
		if b := all[n]; b.Refused == "" {
			t.Errorf("%s not listed as refused: %+v", n, b)
		}
		_, err := d.Read(bg, n, 1<<20)
		wantRefused(t, "read "+n, err, n)
		_, err = d.Stat(bg, n)
		wantRefused(t, "stat "+n, err, n)
		for _, o := range []store.WriteOptions{{}, {IfNoneMatchAny: true}, {IfMatch: real.ETag}} {
			_, err = d.Write(bg, n, []byte("evil"), o)
			wantRefused(t, fmt.Sprintf("write %s %+v", n, o), err, n)
		}
		wantRefused(t, "delete "+n, d.Delete(bg, n, ""), n)
		wantRefused(t, "delete if-match "+n, d.Delete(bg, n, real.ETag), n)
		wantRefused(t, "backdate "+n, d.Backdate(bg, n, time.Now().Add(-time.Hour)), n)
		wantRefused(t, "set tags "+n, d.SetTags(bg, n, map[string]string{"a": "b"}, ""), n)
	}
	if b := all["S/real.json"]; b.Refused != "" || b.ETag != real.ETag {
		t.Errorf("the link's in-container target: %+v", b)
	}
	if after := snapshot(t, outside); !maps(beforeOut, after) {
		t.Errorf("outside changed: %v", after)
	}
	after := snapshot(t, root)
	for p, v := range before {
		if after[p] != v && p != root && !strings.Contains(p, ".deadletter") { // writers make the state folder
			t.Errorf("%s changed: %q -> %q", p, v, after[p])
		}
	}
}

// A FIFO is listed as refused without the listing blocking on it, and a read refuses it without opening it for
// long; a FIFO planted as a side file does not block a listing or a stat either.
func TestDirFIFO(t *testing.T) {
	t.Parallel()
	bg := context.Background()
	root := t.TempDir()
	d := dirOpen(t, root)
	if _, err := d.Write(bg, "S/a.json", []byte("[]"), store.WriteOptions{ContentType: "application/json"}); err != nil {
		t.Fatal(err)
	}
	storetest.Mkfifo(t, filepath.Join(root, "S", "pipe.json"))
	side := filepath.Join(root, ".deadletter", "meta", "S", "a.json.json")
	os.Remove(side)
	storetest.Mkfifo(t, side)
	within := func(what string, f func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { defer close(done); f() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s blocked on a FIFO", what)
		}
	}
	within("list", func() {
		all := listed(t, d, "")
		if b := all["S/pipe.json"]; !strings.Contains(b.Refused, "FIFO") {
			t.Errorf("FIFO listed as %+v", b)
		}
		if b := all["S/a.json"]; b.Refused != "" || b.Size != 2 {
			t.Errorf("a blob whose side file is a FIFO: %+v", b)
		}
	})
	within("read", func() {
		_, err := d.Read(bg, "S/pipe.json", 1<<20)
		wantRefused(t, "read FIFO", err, "S/pipe.json")
	})
	within("stat", func() {
		if _, err := d.Stat(bg, "S/a.json"); err != nil {
			t.Errorf("stat of a blob whose side file is a FIFO: %v", err)
		}
	})
	within("write", func() {
		_, err := d.Write(bg, "S/pipe.json", []byte("x"), store.WriteOptions{})
		wantRefused(t, "write over FIFO", err, "S/pipe.json")
	})
}

// A name whose segments the file system cannot store is refused before anything is written, naming the limit:
// a segment over 255 bytes, or a last segment that would not fit once its side file adds ".json".
func TestDirRefusesSegmentsTooLongForAFileSystem(t *testing.T) {
	t.Parallel()
	bg := context.Background()
	root := t.TempDir()
	d := dirOpen(t, root)
	for _, n := range []string{"S/" + strings.Repeat("a", 256) + "/x.json", strings.Repeat("b", 256), strings.Repeat("c", 252), "S/" + strings.Repeat("d", 252)} {
		_, err := d.Write(bg, n, []byte("[]"), store.WriteOptions{ContentType: "application/json"})
		if !errors.Is(err, store.ErrInvalidName) || !strings.Contains(err.Error(), "255") {
			t.Errorf("write of a %d-byte name: %v; want ErrInvalidName naming the 255-byte limit", len(n), err)
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("refused names left entries: %v", entries)
	}
	// At the limits: a 255-byte folder, a 250-byte last segment (255 with .json).
	n := strings.Repeat("f", 255) + "/" + strings.Repeat("l", 250)
	if _, err := d.Write(bg, n, []byte("[]"), store.WriteOptions{ContentType: "application/json"}); err != nil {
		t.Fatal(err)
	}
	if b, err := d.Read(bg, n, 100); err != nil || b.ContentType != "application/json" {
		t.Fatalf("read back at the limit: %+v %v", b.BlobInfo, err)
	}
}

// What a crash leaves — an old temporary file, a side file whose blob is gone — is gone after the next write;
// a fresh temporary file (a writer of an older version may be midway) and live side files stay.
func TestDirCleansCrashLeftovers(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	oldTmp := filepath.Join(root, ".deadletter", "tmp", "w-crashed")
	freshTmp := filepath.Join(root, ".deadletter", "tmp", "w-fresh")
	orphan := filepath.Join(root, ".deadletter", "meta", "gone", "deep", "x.json.json")
	live := filepath.Join(root, ".deadletter", "meta", "kept", "y.json.json")
	writeFile(t, oldTmp, "partial")
	writeFile(t, freshTmp, "partial")
	writeFile(t, orphan, `{"contentType":"application/json"}`)
	writeFile(t, live, `{"contentType":"text/plain"}`)
	writeFile(t, filepath.Join(root, "kept", "y.json"), "[]")
	hourAgo := time.Now().Add(-time.Hour)
	os.Chtimes(oldTmp, hourAgo, hourAgo)
	d := dirOpen(t, root)
	if _, err := d.Write(context.Background(), "other.json", []byte("[]"), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{oldTmp, orphan, filepath.Dir(orphan), filepath.Join(root, ".deadletter", "meta", "gone")} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s survived the write: %v", p, err)
		}
	}
	for _, p := range []string{freshTmp, live} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if b, err := d.Stat(context.Background(), "kept/y.json"); err != nil || b.ContentType != "text/plain" {
		t.Errorf("a live side file: %+v %v", b, err)
	}
}

// Reading writes nothing: no lock file, no state folder, in a directory no writer has used.
func TestDirReadsWriteNothing(t *testing.T) {
	t.Parallel()
	bg := context.Background()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "S", "a.json"), "[]")
	d := dirOpen(t, root)
	if _, err := store.ListAll(bg, d); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Read(bg, "S/a.json", 10); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Stat(bg, "S/a.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, ".deadletter")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a read made the state folder: %v", err)
	}
	if _, err := dirstore.Open(filepath.Join(root, "missing")); err == nil {
		t.Fatal("a missing directory opened")
	}
}

// A delete removes the blob's side file and the folders it empties, as Azure has no folders.
func TestDirDeleteRemovesEmptiedFolders(t *testing.T) {
	t.Parallel()
	bg := context.Background()
	root := t.TempDir()
	d := dirOpen(t, root)
	v, err := d.Write(bg, "a/b/c.json", []byte("[]"), store.WriteOptions{ContentType: "application/json"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write(bg, "a/keep.json", []byte("[]"), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(bg, "a/b/c.json", v.ETag); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a/b", ".deadletter/meta/a/b"} {
		if _, err := os.Lstat(filepath.Join(root, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s survived: %v", p, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "a", "keep.json")); err != nil {
		t.Error(err)
	}
}

// The parallel listing: every blob of a tree of many folders exactly once, pages of at most 5,000 each in name
// order, and a prefix lists exactly its blobs — at a folder boundary or in the middle of a segment.
func TestDirParallelList(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var names []string
	for i := 0; i < 7500; i++ {
		names = append(names, fmt.Sprintf("SUB%d/2026/1/%d/%d/%05d.json", i%3, 1+i/3%12, i/36%24, i))
	}
	names = append(names, "top.json", "SUB1.json")
	// Hard links to one file: creating thousands of files is slow on a busy disk, and a listing reads names
	// and stats, which links have like any file.
	src := filepath.Join(t.TempDir(), "src.json")
	writeFile(t, src, "[]")
	made := map[string]bool{}
	for _, n := range names {
		p := filepath.Join(root, filepath.FromSlash(n))
		if dir := filepath.Dir(p); !made[dir] {
			made[dir] = true
			os.MkdirAll(dir, 0o755)
		}
		if err := os.Link(src, p); err != nil {
			t.Fatal(err)
		}
	}
	d := dirOpen(t, root)
	if _, err := d.Write(context.Background(), "SUB2/2026/1/1/0/meta.json", []byte("[1]"), store.WriteOptions{Metadata: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	names = append(names, "SUB2/2026/1/1/0/meta.json")
	for _, prefix := range []string{"", "SUB1/", "SUB1", "SUB2/2026/1/1", "SUB0/2026/1/10/", "SUB2/2026/1/1/0/me", "nothing/", "SUB0/2026/1/1/0/00000.json"} {
		var want []string
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				want = append(want, n)
			}
		}
		var got []string
		pages := 0
		err := d.List(context.Background(), prefix, func(p store.Page) error {
			pages++
			if len(p.Blobs) == 0 || len(p.Blobs) > 5000 {
				return fmt.Errorf("a page of %d", len(p.Blobs))
			}
			if !slices.IsSortedFunc(p.Blobs, func(a, b store.BlobInfo) int { return strings.Compare(a.Name, b.Name) }) {
				return errors.New("a page out of name order")
			}
			for _, b := range p.Blobs {
				if b.Refused != "" || b.ETag == "" {
					return fmt.Errorf("listed %+v", b)
				}
				if b.Name == "SUB2/2026/1/1/0/meta.json" && b.Metadata["k"] != "v" {
					return fmt.Errorf("side file not read: %+v", b)
				}
				got = append(got, b.Name)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("prefix %q: %v", prefix, err)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("prefix %q: listed %d names, want %d", prefix, len(got), len(want))
		}
		if prefix == "" && pages < 2 {
			t.Fatalf("%d blobs in %d page(s)", len(got), pages)
		}
	}
	// An error from visit stops the listing and comes back.
	stop := errors.New("stop")
	calls := 0
	err := d.List(context.Background(), "", func(store.Page) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("visit error: %v after %d calls", err, calls)
	}
}

// BenchmarkDirList lists 200,000 blobs laid out as dead letters are (subscription/yyyy/m/d/h/guid.json), with
// and without side files; ns/blob is the figure to watch.
func BenchmarkDirList(b *testing.B) {
	const n = 200_000
	for _, withMeta := range []bool{false, true} {
		root := b.TempDir()
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("SUB%d/2026/1/%d/%d/%08x-0000-4000-8000-%012x.json", i%4, 1+i/4%7, i/28%24, i, i)
			p := filepath.Join(root, filepath.FromSlash(name))
			if i < 672 {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					b.Fatal(err)
				}
			}
			if err := os.WriteFile(p, []byte(`[]`), 0o644); err != nil {
				b.Fatal(err)
			}
			if withMeta {
				mp := filepath.Join(root, ".deadletter", "meta", filepath.FromSlash(name)+".json")
				if i < 672 {
					if err := os.MkdirAll(filepath.Dir(mp), 0o755); err != nil {
						b.Fatal(err)
					}
				}
				if err := os.WriteFile(mp, []byte(`{"contentType":"application/json","metadata":{"k":"v"}}`), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
		syncAll() // a tree still being written back lists several times slower: measure the listing alone
		d := dirOpen(b, root)
		b.Run(fmt.Sprintf("blobs=%d/meta=%v", n, withMeta), func(b *testing.B) {
			for b.Loop() {
				got := 0
				err := d.List(context.Background(), "", func(p store.Page) error {
					if len(p.Blobs) > 5000 {
						return fmt.Errorf("page of %d", len(p.Blobs))
					}
					got += len(p.Blobs)
					return nil
				})
				if err != nil || got != n {
					b.Fatalf("listed %d of %d: %v", got, n, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/blob")
		})
	}
}

// BenchmarkDirRead reads one blob of a dead-letter-shaped name, with its side file: the cost per blob that
// hydration pays.
func BenchmarkDirRead(b *testing.B) {
	d := dirOpen(b, b.TempDir())
	names := make([]string, 100)
	for i := range names {
		names[i] = fmt.Sprintf("SUB/2026/1/%d/1/%d.json", i%3, i)
		if _, err := d.Write(context.Background(), names[i], []byte(`[{"id":"1"}]`), store.WriteOptions{ContentType: "application/json"}); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	for b.Loop() {
		if _, err := d.Read(context.Background(), names[i%len(names)], 1<<20); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// A container directory removed under a running Dir fails its next operation (a watch must turn unhealthy, not
// list the removed directory as empty); one made again at the path is used, as a path would be.
func TestDirContainerRemovedAndRemade(t *testing.T) {
	t.Parallel()
	bg := context.Background()
	root := filepath.Join(t.TempDir(), "c")
	d, err := dirstore.Create(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write(bg, "S/a.json", []byte("[]"), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if _, err := store.ListAll(bg, d); !errors.Is(err, store.ErrContainerNotFound) {
		t.Fatalf("list of a removed directory: %v", err)
	}
	if _, err := d.Write(bg, "S/b.json", []byte("[]"), store.WriteOptions{}); !errors.Is(err, store.ErrContainerNotFound) {
		t.Fatalf("write into a removed directory: %v", err)
	}
	writeFile(t, filepath.Join(root, "S", "c.json"), "[]")
	if _, err := d.Write(bg, "S/d.json", []byte("[]"), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if l := listed(t, d, ""); len(l) != 2 || l["S/c.json"].Name == "" || l["S/d.json"].Name == "" {
		t.Fatalf("the remade directory lists %v", l)
	}
}

// The state folder itself a link out of the container: nothing is locked, written or swept through it.
func TestDirSymlinkedStateFolder(t *testing.T) {
	t.Parallel()
	bg := context.Background()
	root, outside := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(outside, "meta", "S", "a.json.json"), `{"contentType":"x"}`)
	os.Symlink(outside, filepath.Join(root, ".deadletter"))
	writeFile(t, filepath.Join(root, "S", "b.json"), "[]")
	before := snapshot(t, outside)
	d := dirOpen(t, root)
	_, err := d.Write(bg, "S/a.json", []byte("[]"), store.WriteOptions{ContentType: "application/json"})
	wantRefused(t, "write", err, ".deadletter")
	_, err = store.ListAll(bg, d)
	wantRefused(t, "list", err, ".deadletter")
	if after := snapshot(t, outside); !maps(before, after) {
		t.Errorf("outside changed: %v", after)
	}
}

// Side files mirror blob names: blob a/x's side file and the folder of blob a/x.json/y's side files are one path.
// Whichever of the two comes second with metadata fails before anything lands — its body is not rewritten (a drain
// would otherwise re-date it without its stamp) and no blob appears.
func TestDirSideFilesThatWouldCollide(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meta := store.WriteOptions{ContentType: "application/json", Metadata: map[string]string{"drainCount": "1"}}
	for _, order := range [][2]string{{"SUB/A.json/b", "SUB/A"}, {"SUB/A", "SUB/A.json/b"}} {
		t.Run(order[0]+" first", func(t *testing.T) {
			d := dirOpen(t, t.TempDir())
			first, second := order[0], order[1]
			if _, err := d.Write(ctx, first, []byte(`[1]`), meta); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Write(ctx, second, []byte(`[0]`), store.WriteOptions{}); err != nil {
				t.Fatal(err) // without metadata there is no side file to collide
			}
			before, _ := d.Read(ctx, second, 100)
			_, err := d.Write(ctx, second, []byte(`[2]`), meta)
			if err == nil || !strings.Contains(err.Error(), "cannot both carry metadata") {
				t.Fatalf("want a refusal naming the collision, got %v", err)
			}
			after, _ := d.Read(ctx, second, 100)
			if string(after.Body) != `[0]` || !after.LastModified.Equal(before.LastModified) {
				t.Fatalf("the refused write changed the blob: %q", after.Body)
			}
			if b, err := d.Read(ctx, first, 100); err != nil || b.Metadata["drainCount"] != "1" {
				t.Fatalf("the first blob's metadata: %+v %v", b.Metadata, err)
			}
		})
	}
}

// The mark of a directory deadletter made (internal/made) is written into its state folder as
// blobs are: a link at the state folder or at the file is refused, and nothing lands where it points.
func TestDirStateWritesNeverFollowLinks(t *testing.T) {
	t.Parallel()
	root, elsewhere := t.TempDir(), t.TempDir()
	if err := dirstore.WriteState(root, "made", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := dirstore.ReadState(root, "made"); err != nil || string(b) != `{}` {
		t.Fatalf("%q %v", b, err)
	}
	linked := t.TempDir()
	os.Symlink(elsewhere, filepath.Join(linked, ".deadletter"))
	if err := dirstore.WriteState(linked, "made", []byte(`{}`)); err == nil {
		t.Fatal("wrote through a linked state folder")
	}
	os.Remove(filepath.Join(root, ".deadletter", "made"))
	os.Symlink(filepath.Join(elsewhere, "victim"), filepath.Join(root, ".deadletter", "made"))
	if err := dirstore.WriteState(root, "made", []byte(`{}`)); err == nil {
		t.Fatal("wrote over a link")
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Fatalf("something landed where a link points: %v", ents)
	}
	// RemoveState removes the file, not what a linked state folder points at; a missing one is no error.
	os.WriteFile(filepath.Join(elsewhere, "made"), []byte(`{}`), 0o600)
	if err := dirstore.RemoveState(linked, "made"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "made")); err != nil {
		t.Fatalf("removed through a linked state folder: %v", err)
	}
	fresh := t.TempDir()
	if err := dirstore.WriteState(fresh, "made", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := dirstore.RemoveState(fresh, "made"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := dirstore.ReadState(fresh, "made"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("still there after RemoveState: %v", err)
	}
}

var ctx = context.Background()

// The contract every container keeps, on a fresh directory.
func TestContract(t *testing.T) { storetest.Contract(t, storetest.Dir(t)) }

func TestDirRefusesNamesThatEscape(t *testing.T) {
	t.Parallel()
	d := storetest.Dir(t)
	for _, n := range []string{"", "../x", "a/../../x", "/abs", `a\b`, "a\x00b", "a//b", "a/", ".", "a/./b", ".deadletter/lock", strings.Repeat("x", 256)} {
		_, err := d.Write(ctx, n, []byte("x"), store.WriteOptions{})
		if !errors.Is(err, store.ErrInvalidName) || !strings.Contains(err.Error(), fmt.Sprintf("%q", n)) {
			t.Errorf("Write(%q) = %v, want ErrInvalidName naming it", n, err)
		}
	}
	l, _ := store.ListAll(ctx, d)
	if len(l.Blobs) != 0 {
		t.Fatalf("refused names left blobs: %+v", l.Blobs)
	}
}

// Two processes' worth of writers: the lock is a file lock, so separate Dir values on one directory still
// keep the conditions.
func TestDirConditionsAcrossOpeners(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	a, _ := dirstore.Open(root)
	b, _ := dirstore.Open(root)
	v, _ := a.Write(ctx, "x.json", []byte("1"), store.WriteOptions{})
	if _, err := b.Write(ctx, "x.json", []byte("2"), store.WriteOptions{IfMatch: v.ETag}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write(ctx, "x.json", []byte("3"), store.WriteOptions{IfMatch: v.ETag}); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("stale write through another opener: %v", err)
	}
}
