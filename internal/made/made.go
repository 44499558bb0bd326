// Package made is what deadletter keeps for itself about a directory container it made — a seed's, a twin's, the
// demo's — and where: in the operator's state directory, outside the container's namespace, where no blob and no
// copy of a container can put it. A container is data, never configuration: a file found in a directory (its
// .deadletter folder included, which a copy of an Azure container holding a blob named ".deadletter/…" fills) is
// never obeyed. What deadletter obeys about a directory — a twin's clock and state, a register, "the demo may
// clear this" — comes only from a record here that names the directory and that the directory answers to.
//
// The layout (docs/twin.md):
//
//	<state>/dirs/<key>/record.json   {"format", "kind", "id", "dir", "created"}; key: a hash of the directory's path
//	<state>/dirs/<key>/handlers.json the register the seed or twin implies
//	<state>/dirs/<key>/clock.json    a twin's clock (dirstore.Clock)
//	<state>/dirs/<key>/state.json    a twin's state (internal/twin)
//	<state>/dirs/<key>/lock          held by the one process running the twin; holder says who
//	<dir>/.deadletter/made           the record's id: the directory at that path is still the one made
//
// A record is trusted only when the directory at the path it names holds its id: a directory removed and made
// again at the same path (a real snapshot copied there) is not the one deadletter made, and a copy of a made
// directory elsewhere has no record. Folders are 0700 and files 0600: a twin may hold production payloads.
package made

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/deadletter/deadletter/internal/opfile"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/deadletter/deadletter/store/dirstore"
)

// Format is the version of the layout and of the files in it. A record of a newer format is refused, never
// half-read.
const Format = 1

// Kind says what made a directory.
type Kind string

const (
	Seed Kind = "seed" // deadletter seed --dir: its register applies to the directory
	Twin Kind = "twin" // deadletter twin start: a twin, its clock the directory's service time
	Demo Kind = "demo" // deadletter demo: a twin the next demo may clear
)

// IsTwin reports whether a kind of directory is a twin (a clock, a state).
func (k Kind) IsTwin() bool { return k == Twin || k == Demo }

// marker is the file in the directory's own state folder that holds the record's id.
const marker = "made"

// Record is what deadletter remembers of a directory it made.
type Record struct {
	Format  int       `json:"format"`
	Kind    Kind      `json:"kind"`
	ID      string    `json:"id"`
	Dir     string    `json:"dir"`
	Created time.Time `json:"created"`
}

// Place is a directory's record and the folder that holds it and the files kept for it.
type Place struct {
	Record
	folder string
}

// File is the path of a file kept for the directory (clock.json, state.json, handlers.json).
func (p *Place) File(name string) string { return filepath.Join(p.folder, name) }

// Register is the handler register kept for the directory (a seed's or a twin's): every command given the
// directory reads it when --handlers names none.
func (p *Place) Register() string { return p.File("handlers.json") }

// Folder is where the directory's files are kept.
func (p *Place) Folder() string { return p.folder }

// StateDir is the operator's state directory: $XDG_STATE_HOME/deadletter when set (on every system, so tests
// and sandboxes can move it), else ~/.local/state/deadletter on Linux and other Unix systems, the user's
// configuration directory's deadletter/state on macOS and Windows (%AppData%\deadletter\state).
func StateDir() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "deadletter"), nil
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		c, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("no state directory for deadletter: %w", err)
		}
		return filepath.Join(c, "deadletter", "state"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory for deadletter (set XDG_STATE_HOME): %w", err)
	}
	return filepath.Join(home, ".local", "state", "deadletter"), nil
}

// canonical is the directory's path as its record names it: absolute, links resolved (two spellings of one
// directory share a record).
func canonical(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return filepath.Clean(abs), nil
}

// folderOf is where the record of the directory at path abs lives.
func folderOf(abs string) (string, error) {
	state, err := StateDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(state, "dirs", hex.EncodeToString(sum[:16])), nil
}

// NotMade says why a directory is not one deadletter made (no record, or a record the directory does not
// answer to).
type NotMade struct {
	Dir    string
	Reason string
}

func (e *NotMade) Error() string { return e.Dir + " " + e.Reason }

// Find is the record of a directory deadletter made, when the directory at that path is the one it made. A
// directory it did not make is a *NotMade (errors.As), saying why; any other error is a record it could not read
// (a newer format, a damaged file) and is said as that.
func Find(dir string) (*Place, error) {
	abs, err := canonical(dir)
	if err != nil {
		return nil, err
	}
	folder, err := folderOf(abs)
	if err != nil {
		return nil, err
	}
	b, err := readSmall(filepath.Join(folder, "record.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NotMade{abs, "is not a directory deadletter made (it keeps no record of it in " + filepath.Dir(folder) + ")"}
	}
	if err != nil {
		return nil, fmt.Errorf("the record of %s: %w", abs, err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("the record of %s (%s): %w", abs, filepath.Join(folder, "record.json"), err)
	}
	switch {
	case r.Format > Format:
		return nil, fmt.Errorf("%s was made by a newer deadletter (format %d; this one reads %d): upgrade deadletter", abs, r.Format, Format)
	case r.Format < 1 || r.ID == "" || !r.Kind.known():
		return nil, fmt.Errorf("the record of %s (%s) is damaged: format %d, kind %q", abs, filepath.Join(folder, "record.json"), r.Format, r.Kind)
	case r.Dir != abs:
		return nil, &NotMade{abs, "is not a directory deadletter made (its record names " + r.Dir + ")"}
	}
	id, err := dirstore.ReadState(abs, marker)
	if err != nil || strings.TrimSpace(string(id)) != r.ID {
		return nil, &NotMade{abs, "is not the directory deadletter made there (" + string(r.Kind) + " " + r.Created.Format(time.RFC3339) + "): it was replaced since"}
	}
	return &Place{Record: r, folder: folder}, nil
}

func (k Kind) known() bool { return k == Seed || k == Twin || k == Demo }

// IsNotMade reports whether err says the directory is not one deadletter made.
func IsNotMade(err error) bool {
	var nm *NotMade
	return errors.As(err, &nm)
}

// Make records a directory (which must exist) as made now, of kind, replacing any record of that path: a new
// id, marked in the directory, and an empty folder for its files.
func Make(dir string, kind Kind) (*Place, error) {
	abs, err := canonical(dir)
	if err != nil {
		return nil, err
	}
	folder, err := folderOf(abs)
	if err != nil {
		return nil, err
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	r := Record{Format: Format, Kind: kind, ID: hex.EncodeToString(id[:]), Dir: abs, Created: time.Now().UTC()} // to the nanosecond: the record of an estate begins at it (log)
	if err := os.RemoveAll(folder); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(folder, 0o700); err != nil {
		return nil, fmt.Errorf("deadletter's state directory: %w", err)
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	if err := dirstore.WriteState(abs, marker, []byte(r.ID+"\n")); err != nil {
		return nil, fmt.Errorf("marking %s: %w", abs, err)
	}
	p := &Place{Record: r, folder: folder}
	if err := WriteFile(p.File("record.json"), append(b, '\n')); err != nil {
		return nil, err
	}
	return p, nil
}

// Forget removes a directory's record and everything kept for it (the directory itself is the caller's).
func (p *Place) Forget() error { return os.RemoveAll(p.folder) }

// maxFile bounds what is read of a file kept here: what is written is bounded by the same number (WriteFile), so
// nothing written is ever too large to read back.
const maxFile = 256 << 20

// ErrTooLarge is a file kept here that would be over maxFile.
var ErrTooLarge = fmt.Errorf("over %d MiB", maxFile>>20)

// ReadFile reads a file kept for a directory: a regular file, at most maxFile bytes.
func ReadFile(path string) ([]byte, error) { return readLimited(path, maxFile) }

func readSmall(path string) ([]byte, error) { return readLimited(path, 64<<10) }

func readLimited(path string, limit int64) ([]byte, error) {
	b, err := opfile.ReadRegular(path, limit)
	if errors.Is(err, opfile.ErrTooLarge) {
		return nil, fmt.Errorf("%s: %w", path, ErrTooLarge)
	}
	return b, err
}

// WriteFile writes a file kept for a directory whole or not at all: a temporary file, synced, renamed over the
// name, 0600. A body over maxFile is refused before anything is written, so it can always be read back.
func WriteFile(path string, b []byte) error {
	if len(b) > maxFile {
		return fmt.Errorf("%s: %w", path, ErrTooLarge)
	}
	return opfile.Replace(path, b, 0o600)
}
