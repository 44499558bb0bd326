package dirstore

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/deadletter/deadletter/store"
)

// ValidateName refuses names a directory cannot hold faithfully or that would escape its root. The file system
// limits each path segment to 255 bytes, and the blob's side file adds ".json" to the last one, so a name that
// passes here can always be stored — a write must not fail halfway, with the blob written and its metadata not.
func ValidateName(name string) error {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", store.ErrInvalidName, name, why) }
	switch {
	case name == "":
		return bad("empty")
	case len(name) > 1024:
		return bad("longer than 1,024 characters")
	case !utf8.ValidString(name):
		return bad("not valid UTF-8")
	case strings.ContainsRune(name, 0):
		return bad("contains NUL")
	case strings.Contains(name, `\`):
		return bad("contains a backslash")
	case strings.HasPrefix(name, "/"):
		return bad("absolute path")
	}
	segs := strings.Split(name, "/")
	for i, seg := range segs {
		switch {
		case seg == "":
			return bad("empty path segment")
		case seg == "." || seg == "..":
			return bad("path segment " + seg)
		case len(seg) > maxSegment:
			return bad(fmt.Sprintf("a path segment is %d bytes, over the %d-byte limit of a file name", len(seg), maxSegment))
		case i == 0 && seg == stateDir:
			return bad(stateDir + "/ is reserved for the directory container's own state")
		}
	}
	if last := segs[len(segs)-1]; len(last)+len(metaSuffix) > maxSegment {
		return bad(fmt.Sprintf("the last path segment is %d bytes, over the %d-byte limit of a file name once its side file adds %q (at most %d bytes)",
			len(last), maxSegment, metaSuffix, maxSegment-len(metaSuffix)))
	}
	return nil
}

// splitName cuts a valid name into its folders and its last segment.
func splitName(name string) (dirs []string, base string) {
	segs := strings.Split(name, "/")
	return segs[:len(segs)-1], segs[len(segs)-1]
}

// metaSegs are the folders of a blob's side file: its own folders under .deadletter/meta.
func metaSegs(dirs []string) []string {
	return append([]string{stateDir, metaDir}, dirs...)
}

// refusal is an entry deadletter will not go through or read: a symbolic link, FIFO, socket or device, or a
// folder that changed into something else while it was being opened. It is store.ErrRefused to errors.Is.
type refusal struct {
	path string // the entry, relative to the container directory
	why  string
}

func (r *refusal) Error() string { return fmt.Sprintf("%v: %q is %s", store.ErrRefused, r.path, r.why) }

func (r *refusal) Is(target error) bool { return target == store.ErrRefused }

func refusedWhy(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link: deadletter never follows links in a container directory, wherever they point"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO, not a file"
	case m&fs.ModeSocket != 0:
		return "a socket, not a file"
	case m&fs.ModeDevice != 0:
		return "a device, not a file"
	}
	return "not a regular file"
}

const whyChanged = "replaced while it was being opened (by a link?), so it is not used"

// errNotFolder: an entry on a name's path is a file, not a folder, so the name cannot exist (and cannot be
// written, since a directory cannot hold a blob named like a folder on another blob's path).
var errNotFolder = errors.New("a blob is named like a folder on its path")

// missing reports whether err from a lookup means only that nothing has the name.
func missing(err error) bool { return errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotFolder) }

// PortableName is ValidateName for a directory that may lie on a case-insensitive file system (macOS, Windows),
// or be copied to one: a name whose first segment is the state folder's in another case would land in it there.
func PortableName(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if first, _, _ := strings.Cut(name, "/"); strings.EqualFold(first, stateDir) {
		return fmt.Errorf("%w %q: %s/ in any case is the directory container's own folder on a case-insensitive file system", store.ErrInvalidName, name, stateDir)
	}
	return nil
}
