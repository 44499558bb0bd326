package dirstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/deadletter/deadletter/store"
)

// A write whose blob cannot be published (a rename across file systems fails with EXDEV) changes nothing: not
// the body, and not the side file either — new metadata on the old body would pass for a drain that happened
// (the drain recognizes its own write by the stamp in the metadata).
func TestDirFailedPublishChangesNothing(t *testing.T) {
	ctx := context.Background()
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	old, err := d.Write(ctx, "SUB/x.json", []byte("[]"), store.WriteOptions{Metadata: map[string]string{"drainCount": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	renameFault = func(dst string) error {
		if strings.HasSuffix(dst, "SUB/x.json") {
			return syscall.EXDEV
		}
		return nil
	}
	defer func() { renameFault = nil }()
	_, err = d.Write(ctx, "SUB/x.json", []byte("[ ]"), store.WriteOptions{IfMatch: old.ETag, Metadata: map[string]string{"drainCount": "2"}})
	if err == nil {
		t.Fatal("the write reported success")
	}
	renameFault = nil
	b, err := d.Read(ctx, "SUB/x.json", 1<<20)
	if err != nil || string(b.Body) != "[]" || b.ETag != old.ETag || b.Metadata["drainCount"] != "1" {
		t.Fatalf("after a failed write: %q %v %v %v", b.Body, b.ETag, b.Metadata, err)
	}
}

// A rewrite keeps the blob's permissions.
func TestDirRewriteKeepsPermissions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	old, err := d.Write(ctx, "SUB/x.json", []byte("[]"), store.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "SUB", "x.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	old, _ = d.Stat(ctx, "SUB/x.json")
	if _, err := d.Write(ctx, "SUB/x.json", []byte("[]"), store.WriteOptions{IfMatch: old.ETag}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(root, "SUB", "x.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("after a rewrite: %v %v", fi.Mode(), err)
	}
}

// In a directory only its owner may enter (a twin of production payloads, 0700), the state folder is 0700 and its
// files 0600, as the blobs beside them (found by a fresh-eyes test: 0755 and 0644).
func TestStateIsPrivateInAPrivateDirectory(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.Chmod(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteState(root, "made", []byte("id\n")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(root, stateDir)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the state folder: %v %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(root, stateDir, "made")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the state file: %v %v", fi.Mode(), err)
	}

}

// A new blob whose side file cannot be written (a disk that fills between the two) is not left as a body without
// its properties: nothing is there, and a copy into the directory again writes it whole — never "holds that name
// already" for a blob that is not the source's.
func TestANewBlobIsWholeOrNotThere(t *testing.T) {
	ctx := context.Background()
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	metaFault = func(side string) error {
		if strings.HasSuffix(side, "x.json"+metaSuffix) {
			return syscall.ENOSPC
		}
		return nil
	}
	_, err = d.Write(ctx, "SUB/x.json", []byte("[]"), store.WriteOptions{IfNoneMatchAny: true, ContentType: "application/json", Metadata: map[string]string{"k": "v"}})
	metaFault = nil
	if err == nil || !strings.Contains(err.Error(), "nothing was") {
		t.Fatalf("a write that could not keep its properties: %v", err)
	}
	if _, err := d.Stat(ctx, "SUB/x.json"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a body without its properties was left: %v", err)
	}
	b, err := d.Write(ctx, "SUB/x.json", []byte("[]"), store.WriteOptions{IfNoneMatchAny: true, ContentType: "application/json", Metadata: map[string]string{"k": "v"}})
	if err != nil || b.Metadata["k"] != "v" {
		t.Fatalf("written again: %+v %v", b, err)
	}
}
