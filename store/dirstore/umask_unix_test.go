//go:build unix

package dirstore_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/deadletter/deadletter/store"
)

// New blobs, side files and folders honour the umask like any other tool's: 0644 and 0755 under 022.
func TestDirPermissionsFollowTheUmask(t *testing.T) { // (not parallel: the umask is the whole process's)
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	root := t.TempDir()
	d := dirOpen(t, root)
	if _, err := d.Write(context.Background(), "new/folder/x.json", []byte("[]"), store.WriteOptions{ContentType: "application/json"}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]fs.FileMode{
		"new/folder/x.json": 0o644, "new": fs.ModeDir | 0o755, "new/folder": fs.ModeDir | 0o755,
		".deadletter/meta/new/folder/x.json.json": 0o644, ".deadletter/meta/new/folder": fs.ModeDir | 0o755,
	} {
		fi, err := os.Stat(filepath.Join(root, p))
		if err != nil || fi.Mode() != want {
			t.Errorf("%s: %v %v, want %v", p, fi.Mode(), err, want)
		}
	}
}
