package store_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// Copy carries bytes, content type, metadata, tags and Last-Modified into a private directory, never overwrites,
// and refuses names that collide by case or would land in the directory's own folder.
func TestCopyIntoAPrivateDirectory(t *testing.T) {
	ctx := context.Background()
	when := time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC)
	src := storetest.NewMem(when.Add(time.Hour))
	put := func(name, body string, meta, tags map[string]string) {
		t.Helper()
		w, err := src.Write(ctx, name, []byte(body), store.WriteOptions{ContentType: "application/json", Metadata: meta})
		if err != nil {
			t.Fatal(err)
		}
		if tags != nil {
			src.SetTags(ctx, name, tags, w.ETag)
		}
		src.Backdate(ctx, name, when)
	}
	put("S/2026/11/30/9/a.json", "[\x1b]0;x\x07]", map[string]string{"drainCount": "2"}, map[string]string{"dlAckBy": "me"})
	put("quarantine/S/2026/11/30/9/b.json", "[]", nil, nil)
	put("s/2026/11/30/9/c.json", "[1]", nil, nil)            // the folder S/ in another case
	put(".DeadLetter/meta/x.json", "[2]", nil, nil)          // the directory's own folder, in another case
	put("quarantine/S/2026/11/30/9/B.json", "[3]", nil, nil) // b.json in another case
	l, _ := store.ListAll(ctx, src)

	root := filepath.Join(t.TempDir(), "export")
	dst, err := dirstore.CreatePrivate(root)
	if err != nil {
		t.Fatal(err)
	}
	res, err := store.Copy(ctx, dst, src, l.Blobs, store.CopyOptions{FoldCase: true, Check: dirstore.PortableName})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]error{}
	for _, c := range res {
		got[c.Name] = c.Err
	}
	for name, want := range map[string]error{"S/2026/11/30/9/a.json": nil, "quarantine/S/2026/11/30/9/B.json": nil,
		"s/2026/11/30/9/c.json": store.ErrCaseCollision, ".DeadLetter/meta/x.json": store.ErrInvalidName, "quarantine/S/2026/11/30/9/b.json": store.ErrCaseCollision} {
		if e := got[name]; (want == nil) != (e == nil) || want != nil && !errors.Is(e, want) {
			t.Errorf("%s: %v, want %v", name, e, want)
		}
	}
	// (B.json sorts before b.json: the first of two names that collide is copied, the second refused.)
	for _, name := range []string{"S/2026/11/30/9/a.json"} {
		a, _ := src.Read(ctx, name, 1<<20)
		b, err := dst.Read(ctx, name, 1<<20)
		if err != nil || !bytes.Equal(a.Body, b.Body) || !maps.Equal(a.Metadata, b.Metadata) || a.ContentType != b.ContentType || !b.LastModified.Equal(when) {
			t.Fatalf("%s: %+v %v", name, b.BlobInfo, err)
		}
	}
	dl, _ := store.ListAll(ctx, dst)
	for _, b := range dl.Blobs {
		if b.Name == "S/2026/11/30/9/a.json" && b.Tags["dlAckBy"] != "me" {
			t.Fatalf("tags %v", b.Tags)
		}
	}
	// Never overwritten: a second copy finds every name taken.
	var a []store.BlobInfo
	for _, b := range l.Blobs {
		if b.Name == "S/2026/11/30/9/a.json" {
			a = append(a, b)
		}
	}
	res, _ = store.Copy(ctx, dst, src, a, store.CopyOptions{FoldCase: true})
	if !errors.Is(res[0].Err, store.ErrAlreadyExists) {
		t.Fatalf("second copy: %v", res[0].Err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		fi, _ := os.Lstat(p)
		want := fs.FileMode(0o600)
		if fi.IsDir() {
			want = fs.ModeDir | 0o700
		}
		if fi.Mode() != want {
			t.Errorf("%s: %v, want %v", p, fi.Mode(), want)
		}
		return nil
	})
}

// A link inside the destination is never followed: a blob under it is refused and nothing lands outside.
func TestCopyFollowsNoLinkOut(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	ctx := context.Background()
	src := storetest.NewMem(time.Now())
	src.Write(ctx, "S/2026/11/30/9/a.json", []byte("[]"), store.WriteOptions{})
	l, _ := store.ListAll(ctx, src)
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "S")); err != nil {
		t.Fatal(err)
	}
	dst, _ := dirstore.CreatePrivate(root)
	res, _ := store.Copy(ctx, dst, src, l.Blobs, store.CopyOptions{})
	if res[0].Err == nil {
		t.Fatal("written through a link")
	}
	if es, _ := os.ReadDir(outside); len(es) != 0 {
		t.Fatalf("something landed outside: %v", es)
	}
}
