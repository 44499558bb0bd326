package record

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/opfile"
)

// The local log's bounds: a file per day, a new one within the day past MaxFileBytes, and at most MaxFiles kept
// (the oldest go as a new one starts).
const (
	MaxFileBytes = 8 << 20
	MaxFiles     = 120
)

// Dir is the local log: JSON lines in files named by the UTC day (2026-12-02.jsonl, then 2026-12-02.1.jsonl…
// once one passes MaxFileBytes) in a folder of the operator's state directory, 0600 in a 0700 folder. Each line
// is one write to a file opened for appending, so concurrent writers on one machine never interleave one.
type Dir struct {
	path string
	now  func() time.Time
	// maxBytes and maxFiles bound the log (MaxFileBytes and MaxFiles; tests lower them).
	maxBytes int64
	maxFiles int
	mu       sync.Mutex
}

// LocalDir is the local log in the operator's state directory (internal/made's StateDir: XDG_STATE_HOME, or the
// platform's state place).
func LocalDir() (*Dir, error) {
	s, err := made.StateDir()
	if err != nil {
		return nil, err
	}
	return OpenDir(filepath.Join(s, "record")), nil
}

// OpenDir is a log kept in path (made on the first append).
func OpenDir(path string) *Dir {
	return &Dir{path: path, now: time.Now, maxBytes: MaxFileBytes, maxFiles: MaxFiles}
}

// Describe implements Sink.
func (d *Dir) Describe() string { return d.path }

// Path is the folder the log is kept in.
func (d *Dir) Path() string { return d.path }

// fileName is the name of a day's file n (0: the first).
func fileName(day string, n int) string {
	if n == 0 {
		return day + ".jsonl"
	}
	return day + "." + strconv.Itoa(n) + ".jsonl"
}

// Append implements Sink: the day's latest file with room for the line (a new one past MaxFileBytes).
func (d *Dir) Append(_ context.Context, line []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := os.MkdirAll(d.path, 0o700); err != nil {
		return err
	}
	if fi, err := os.Lstat(d.path); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", d.path)
	}
	day := d.now().UTC().Format("2006-01-02")
	for n := 0; n < 1000; n++ {
		p := filepath.Join(d.path, fileName(day, n))
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := d.prune(); err != nil {
				return err
			}
		case err != nil:
			return err
		case !fi.Mode().IsRegular():
			return &opfile.NotRegularError{Path: p, Mode: fi.Mode()}
		case fi.Size()+int64(len(line)) > d.maxBytes:
			continue
		}
		return appendLine(p, line)
	}
	return fmt.Errorf("%s: too many record files for %s", d.path, day)
}

func appendLine(p string, line []byte) error {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_APPEND|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return err
	}
	// A file whose last line was cut short (a crash mid-write) would glue this line onto it and lose both: start
	// on a line of its own. The cut line stays, and reading skips it, naming it.
	var last [1]byte
	var size int64
	if fi, serr := f.Stat(); serr == nil && fi.Size() > 0 {
		size = fi.Size()
		if _, rerr := f.ReadAt(last[:], fi.Size()-1); rerr == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	n, err := f.Write(line) // one write: O_APPEND places it whole at the end
	if err == nil && n < len(line) {
		err = fmt.Errorf("%s: short write", p)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil && n > 0 {
		// A write that did not land whole (a full disk) leaves no part of its line behind: the file is cut back
		// to where it was, so the next line and every reader find it as it was.
		if terr := f.Truncate(size); terr == nil {
			f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// files lists the log's files, oldest first.
func (d *Dir) files() ([]string, error) {
	ents, err := os.ReadDir(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type f struct {
		name, day string
		n         int
	}
	var fs []f
	for _, e := range ents {
		name := e.Name()
		base, ok := strings.CutSuffix(name, ".jsonl")
		if !ok {
			continue
		}
		day, num, _ := strings.Cut(base, ".")
		if _, err := time.Parse("2006-01-02", day); err != nil {
			continue
		}
		n := 0
		if num != "" {
			if n, err = strconv.Atoi(num); err != nil {
				continue
			}
		}
		fs = append(fs, f{name, day, n})
	}
	slices.SortFunc(fs, func(a, b f) int {
		if c := strings.Compare(a.day, b.day); c != 0 {
			return c
		}
		return a.n - b.n
	})
	out := make([]string, len(fs))
	for i, x := range fs {
		out[i] = x.name
	}
	return out, nil
}

// prune removes the files written longest ago so that, with the one about to start, at most MaxFiles are kept.
// They go by when they were last written, not by the day in their names: a file named for a day to come (a clock
// that was ahead, a file put there) must not outlive today's, nor push today's out first.
func (d *Dir) prune() error {
	names, err := d.files()
	if err != nil {
		return err
	}
	if len(names) <= d.maxFiles-1 {
		return nil
	}
	written := make(map[string]time.Time, len(names))
	for _, n := range names {
		if fi, err := os.Lstat(filepath.Join(d.path, n)); err == nil {
			written[n] = fi.ModTime()
		}
	}
	slices.SortStableFunc(names, func(a, b string) int { return written[a].Compare(written[b]) })
	for i := 0; i < len(names)-(d.maxFiles-1); i++ {
		if err := os.Remove(filepath.Join(d.path, names[i])); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Read implements Sink: every file, oldest first, each bounded (a file grown past twice the rotation size by
// someone else is refused, not read into memory).
func (d *Dir) Read(ctx context.Context) ([]Source, error) {
	var out []Source
	err := d.Each(ctx, func(s Source) error { out = append(out, s); return nil })
	return out, err
}

// Each implements SourcesEach: Read's files, one in memory at a time.
func (d *Dir) Each(_ context.Context, visit func(Source) error) error {
	names, err := d.files()
	if err != nil {
		return err
	}
	for _, n := range names {
		p := filepath.Join(d.path, n)
		src := Source{Name: p}
		if b, err := opfile.ReadRegular(p, 2*max(d.maxBytes, MaxFileBytes)); err != nil {
			src.Err = "not read: " + err.Error()
		} else {
			src.Data = b
		}
		if err := visit(src); err != nil {
			return err
		}
	}
	return nil
}
