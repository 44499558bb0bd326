// Package opfile is the files deadletter writes on the operator's own machine — a payload saved with get or the
// dashboard's s, an edit waiting for its editor, an edit kept after a refused repair — and the editor and pager
// it hands them to. Payloads are production data on a laptop: every file is readable by the operator only (0600)
// and nothing is ever written over. Replace is the one exception, for files deadletter rewrites whole (a twin's
// state, the config's current context, a register the operator asked for): never half written.
package opfile

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// ErrExists is a path that already holds something: deadletter never writes over it.
var ErrExists = errors.New("already exists: not written over (name a new file, or move that one away)")

// Replace writes b to path whole or not at all: a temporary file beside it, synced, given mode perm, renamed into
// place (the old file, if any, stays until the rename).
func Replace(path string, b []byte, perm fs.FileMode) error {
	return ReplaceWith(path, perm, func(w *bufio.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// ReplaceWith is Replace for a file written as a stream — a twin's million-entry files are never one []byte:
// write fills a buffered writer over the temporary file, and only when it and the flush, the sync and the close
// all succeed is the file given perm and renamed into place. On any failure the temporary file is removed and
// path is as it was.
func ReplaceWith(path string, perm fs.FileMode, write func(*bufio.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(tmp, 256<<10)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), perm)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// WriteNew writes b to a new file at path, readable and writable by the operator only, synced before it returns.
// Anything already at path — a file, a link, a FIFO — is refused (ErrExists), never followed or replaced; a
// write that fails leaves no partial file behind.
func WriteNew(path string, b []byte) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s %w", path, ErrExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) // O_EXCL: never through a link planted since
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s %w", path, ErrExists)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// Temp writes b to a new temporary file (0600, in the system's temporary folder) named after pattern as
// os.CreateTemp names it, and returns its path; the caller removes it.
func Temp(pattern string, b []byte) (string, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o600) // (CreateTemp makes it 0600 already; said here, where it matters)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// Editor is the command that edits path: $VISUAL, else $EDITOR, else vi (notepad on Windows) — run through the
// shell on Unix, as git runs it, so "code --wait" works. It returns the command and the editor's name as set.
func Editor(path string) (*exec.Cmd, string) {
	ed := os.Getenv("VISUAL")
	if ed == "" {
		ed = os.Getenv("EDITOR")
	}
	if ed == "" {
		ed = "vi"
		if runtime.GOOS == "windows" {
			ed = "notepad"
		}
	}
	return shellCommand(ed, path), ed
}

// Pager is the command that pages path: $PAGER, else less (more on Windows).
func Pager(path string) (*exec.Cmd, string) {
	p := os.Getenv("PAGER")
	if p == "" {
		p = "less"
		if runtime.GOOS == "windows" {
			p = "more"
		}
	}
	return shellCommand(p, path), p
}

func shellCommand(prog, path string) *exec.Cmd {
	if runtime.GOOS == "windows" {
		f := strings.Fields(prog)
		return exec.Command(f[0], append(f[1:], path)...)
	}
	return exec.Command("/bin/sh", "-c", prog+` "$@"`, prog, path)
}

// Keep writes b to a new file named after the blob's last path segment (only its letters, digits, dots and
// dashes) in the working folder — else, where that cannot be written, the temporary folder — and returns its
// absolute path: an edit that was not written into the container is never lost.
func Keep(blobName string, b []byte) (string, error) {
	base := safeBase(blobName)
	var lastErr error
	for _, dir := range []string{".", os.TempDir()} {
		for n := 1; n < 100; n++ {
			p := filepath.Join(dir, base+".edit.json")
			if n > 1 {
				p = filepath.Join(dir, fmt.Sprintf("%s.edit-%d.json", base, n))
			}
			err := WriteNew(p, b)
			if errors.Is(err, ErrExists) {
				continue
			}
			if err != nil {
				lastErr = err
				break // this folder cannot hold it: the next one
			}
			if abs, err := filepath.Abs(p); err == nil {
				return abs, nil
			}
			return p, nil
		}
	}
	return "", lastErr
}

// safeBase is a file name made of the blob name's last segment, without its .json: characters a file system or a
// shell could misread become _, and it is at most 64 bytes.
func safeBase(blobName string) string {
	seg := blobName[strings.LastIndexByte(blobName, '/')+1:]
	seg = strings.TrimSuffix(seg, ".json")
	var b strings.Builder
	for _, r := range seg {
		switch {
		case b.Len() >= 64:
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.' && b.Len() > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "payload"
	}
	return b.String()
}
