package main

import (
	"errors"
	"fmt"
	"github.com/deadletter/deadletter/internal/opfile"
	"io"
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
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlocking, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %s is %s, not a regular file", flag, textfmt.Printable(path), fileKind(fi.Mode()))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxOperatorFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxOperatorFile {
		return nil, fmt.Errorf("%s %s is over %s: not the file deadletter expects there", flag, textfmt.Printable(path), textfmt.Bytes(maxOperatorFile))
	}
	return b, nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

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
