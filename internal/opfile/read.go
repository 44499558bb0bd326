package opfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/deadletter/deadletter/internal/textfmt"
)

// ErrTooLarge is a file over the limit its reader set.
var ErrTooLarge = errors.New("over the size limit")

// NotRegularError is a path that holds something other than a regular file (a FIFO, a device, a directory).
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return e.Path + " is " + FileKind(e.Mode) + ", not a regular file"
}

// ReadRegular reads a file the operator or deadletter keeps: opened without blocking (a FIFO cannot hang the
// command), a regular file only (*NotRegularError), at most limit bytes (ErrTooLarge) — read so, memory never
// holds more than limit+1 bytes of it.
func ReadRegular(path string, limit int64) ([]byte, error) { return readRegular(path, limit, 0) }

// ReadRegularNoFollow is ReadRegular for a file deadletter made itself (an edit's temporary file): a symbolic link
// left in its place — by an editor, or by someone who can write its folder — is refused, never followed to
// whatever file it names (*NotRegularError with the link's mode).
func ReadRegularNoFollow(path string, limit int64) ([]byte, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	b, err := readRegular(path, limit, openNoFollow)
	if err != nil && errors.Is(err, syscall.ELOOP) { // (a link put there between the look and the open)
		return nil, &NotRegularError{Path: path, Mode: fs.ModeSymlink}
	}
	return b, err
}

func readRegular(path string, limit int64, flags int) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlocking|flags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w", path, ErrTooLarge)
	}
	return b, nil
}

// FileKind names what a mode that is not a regular file is ("a FIFO", "a directory").
func FileKind(m fs.FileMode) string {
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

// MaxOperatorFile bounds a file the operator names (--handlers, --config, a connection string's file): these are
// small JSON, YAML or text documents; anything larger is a mistake (--handlers /dev/zero) that must not fill
// memory.
const MaxOperatorFile = 1 << 20

// ReadOperatorFile reads a file the operator named with flag: opened without blocking (a FIFO cannot hang the
// command), only a regular file, at most MaxOperatorFile bytes — each refusal said with the flag and the path. A
// missing file is fs.ErrNotExist.
func ReadOperatorFile(flag, path string) ([]byte, error) {
	b, err := ReadRegular(path, MaxOperatorFile)
	var nr *NotRegularError
	switch {
	case errors.As(err, &nr):
		return nil, fmt.Errorf("%s %s is %s, not a regular file", flag, textfmt.Printable(path), FileKind(nr.Mode))
	case errors.Is(err, ErrTooLarge):
		return nil, fmt.Errorf("%s %s is over %s: not the file deadletter expects there", flag, textfmt.Printable(path), textfmt.Bytes(MaxOperatorFile))
	}
	return b, err
}
