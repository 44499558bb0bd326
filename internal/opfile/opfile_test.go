package opfile

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestWriteNewNeverWritesOver(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "payload.json")
	if err := WriteNew(p, []byte("[1]")); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
		}
	}
	if err := WriteNew(p, []byte("[2]")); !errors.Is(err, ErrExists) {
		t.Fatalf("second write: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "[1]" {
		t.Fatalf("overwritten: %q", b)
	}
	// A link at the path is refused, and what it points at stays untouched.
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err == nil {
		if err := WriteNew(link, []byte("x")); !errors.Is(err, ErrExists) {
			t.Fatalf("through a link: %v", err)
		}
		if b, _ := os.ReadFile(target); string(b) != "keep" {
			t.Fatalf("link target written: %q", b)
		}
	}
}

func TestKeepNamesAFreeSafeFile(t *testing.T) {
	t.Chdir(t.TempDir())
	a, err := Keep("quarantine/SUB/2026/1/2/3/\x1b[31m../evil.json", []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Keep("quarantine/SUB/2026/1/2/3/\x1b[31m../evil.json", []byte("b"))
	if err != nil || a == b {
		t.Fatalf("%q %q %v", a, b, err)
	}
	if filepath.Base(a) != "evil.edit.json" || filepath.Base(b) != "evil.edit-2.json" {
		t.Fatalf("names %q %q", a, b)
	}
	if got := safeBase("S/\x1b]52;c;x\a"); got != "__52_c_x_" {
		t.Fatalf("safeBase %q", got)
	}
}

// A stream that fails half way leaves the file as it was and no temporary file beside it; one that succeeds
// replaces it whole with the mode asked for.
func TestReplaceWithIsWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.bin")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := errors.New("the source went away")
	err := ReplaceWith(path, 0o600, func(w *bufio.Writer) error {
		w.WriteString(strings.Repeat("new", 200_000)) // more than the buffer: part of it reached the disk
		return broken
	})
	if !errors.Is(err, broken) {
		t.Fatalf("err = %v, want the writer's own", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("a failed replace changed the file: %.20q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("a failed replace left %d entries, want only the file", len(ents))
	}

	if err := ReplaceWith(path, 0o600, func(w *bufio.Writer) error { _, err := w.WriteString("new"); return err }); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(b) != "new" {
		t.Fatalf("file = %q, want new", b)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, want 0600", fi.Mode().Perm())
	}
}
