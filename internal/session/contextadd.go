package session

import (
	"os"
	"slices"
	"strings"

	"github.com/deadletter/deadletter/internal/textfmt"
)

// AddContext writes a context into the config file at path (made, private, when there is none) — its name, then
// its values in the order given — at the end of the contexts list, every other byte as written. The context is
// checked as the file is read (each value as its flag takes it, by check; one container reached one way) before
// anything is written: a context that would be wrong is refused, and so is a name the file already has.
func AddContext(path, name string, values [][2]string, check func(key, value string) error) error {
	cf, err := readOrEmptyWith(path, check)
	if err != nil {
		return err
	}
	if cf.Find(name) != nil {
		return Inputf("a context %q is already in %s: edit it there, or pick another name", textfmt.Printable(name), textfmt.Printable(path))
	}
	for _, kv := range values {
		if !slices.Contains(ContextKeys, kv[0]) || kv[0] == "name" {
			return Inputf("%s is not a context key (want %s)", kv[0], strings.Join(ContextKeys[1:], ", "))
		}
	}
	out, err := withListItem(cf, "contexts", func(indent, eol string) string {
		var b strings.Builder
		b.WriteString(indent + "- name: " + yamlString(name) + eol)
		for _, kv := range values {
			b.WriteString(indent + "  " + kv[0] + ": " + yamlString(kv[1]) + eol)
		}
		return b.String()
	})
	if err != nil {
		return configError(path, 0, "contexts", "%v: edit it by hand", err)
	}
	after, err := parseConfig(path, out, check)
	if err != nil {
		return err
	}
	if c := after.Find(name); c == nil {
		return configError(path, 0, "contexts", "the new context %q did not read back: edit the file by hand", textfmt.Printable(name))
	} else if c.Err != nil {
		return c.Err
	}
	return writeConfig(cf, out)
}

// readOrEmptyWith reads the config file, or — when there is none — an empty one to write.
func readOrEmptyWith(path string, check func(key, value string) error) (*ConfigFile, error) {
	if _, err := os.Lstat(path); os.IsNotExist(err) {
		return &ConfigFile{Path: path}, nil
	}
	return ReadConfig(path, check)
}
