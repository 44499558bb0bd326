package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/deadletter/deadletter/internal/opfile"
	"github.com/deadletter/deadletter/internal/textfmt"
)

// readOperatorFile reads a file the operator named (opfile.ReadOperatorFile).
func readOperatorFile(flag, path string) ([]byte, error) { return opfile.ReadOperatorFile(flag, path) }

// fileKind names what a mode that is not a regular file is.
func fileKind(m fs.FileMode) string { return opfile.FileKind(m) }

// writeOperatorFile writes a file the operator named (--register-out): only over nothing or a regular file,
// never through a FIFO or device, by a temporary file renamed into place.
func writeOperatorFile(flag, path string, b []byte) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s %s is %s, not a regular file: refusing to write to it", flag, textfmt.Printable(path), fileKind(fi.Mode()))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return opfile.Replace(path, b, 0o644)
}

// overlap reports whether one of two directories is, or lies inside, the other — through symbolic links too; a
// path that does not exist yet is judged by its nearest existing parent. A copy from one into the other would
// write into its own source: a twin's or an export's files would show up in the container as blobs.
func overlap(a, b string) bool {
	ra, rb := realPath(a), realPath(b)
	return within(ra, rb) || within(rb, ra)
}

// within reports whether path is dir or lies under it (both absolute and clean).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// realPath is path made absolute with every symbolic link of its existing part resolved.
func realPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	var rest []string
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		if filepath.Dir(p) == p {
			return abs
		}
		rest = append([]string{filepath.Base(p)}, rest...)
	}
}
