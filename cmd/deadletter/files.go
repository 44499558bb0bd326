package main

import (
	"errors"
	"fmt"
	"github.com/deadletter/deadletter/internal/opfile"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/deadletter/deadletter/internal/textfmt"
)

// maxOperatorFile bounds a file the operator names (--handlers, --config, --register-out's old contents): these
// are small JSON or YAML documents; anything larger is a mistake (--handlers /dev/zero) that must not fill memory.
const maxOperatorFile = 1 << 20

// readOperatorFile reads a file the operator named: opened without blocking (a FIFO cannot hang the command),
// only a regular file, at most maxOperatorFile bytes — each refusal said with the path. A missing file is
// fs.ErrNotExist.
func readOperatorFile(flag, path string) ([]byte, error) {
	b, err := opfile.ReadRegular(path, maxOperatorFile)
	var nr *opfile.NotRegularError
	switch {
	case errors.As(err, &nr):
		return nil, fmt.Errorf("%s %s is %s, not a regular file", flag, textfmt.Printable(path), opfile.FileKind(nr.Mode))
	case errors.Is(err, opfile.ErrTooLarge):
		return nil, fmt.Errorf("%s %s is over %s: not the file deadletter expects there", flag, textfmt.Printable(path), textfmt.Bytes(maxOperatorFile))
	}
	return b, err
}

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
