package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A twin or an export into its own source — the same directory, one inside it, or the other way round, through a
// symbolic link too — is refused before anything is written; a sibling whose name only starts the same is not.
func TestACopyNeverWritesIntoItsSource(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	src := filepath.Join(root, "src")
	mustRun(t, "twin", "start", "--dir", src)
	link := filepath.Join(root, "link")
	if err := os.Symlink(src, link); err != nil {
		t.Skip("no symbolic links here:", err) // Windows without the privilege
	}
	before := namesIn(t, src, "")
	for _, dst := range []string{src, filepath.Join(src, "sub"), filepath.Join(link, "sub2"), filepath.Join(src, "a", "b"), root} {
		_, errs, code := runCmd(t, "twin", "start", "--dir", dst, "--from", src)
		if code != exitError || !strings.Contains(errs, "overlap") {
			t.Errorf("twin start --dir %s --from %s: exit %d\n%s", dst, src, code, errs)
		}
		_, errs, code = runCmd(t, "export", "--all", "--dir", src, "--to", dst)
		if code != exitError || !strings.Contains(errs, "overlap") {
			t.Errorf("export --dir %s --to %s: exit %d\n%s", src, dst, code, errs)
		}
	}
	if after := namesIn(t, src, ""); len(after) != len(before) {
		t.Fatalf("the source holds %d blobs after, %d before", len(after), len(before))
	}
	if _, err := os.Stat(filepath.Join(src, "sub")); err == nil {
		t.Fatal("a refused copy made its directory in the source")
	}
	sibling := src + "-twin" // shares a prefix, not a parent
	if _, errs, code := runCmd(t, "twin", "start", "--dir", sibling, "--from", src); code != 0 {
		t.Fatalf("twin start --dir %s --from %s: exit %d\n%s", sibling, src, code, errs)
	}
}
