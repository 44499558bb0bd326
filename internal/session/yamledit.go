package session

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/deadletter/deadletter/internal/opfile"
	"go.yaml.in/yaml/v3"
)

// Edits of the config file that keep every byte they do not change — comments, line endings, a byte-order mark,
// the file's mode — as context use does: an item added at the end of a top-level block list (contexts, views), or
// taken out of it.

// rootList is the value of a top-level key of the file (nil when absent).
func rootList(cf *ConfigFile, key string) *yaml.Node {
	if len(cf.doc.Content) == 0 {
		return nil
	}
	root := cf.doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			return root.Content[i+1]
		}
	}
	return nil
}

// dashLine is the line (0-based) of a sequence item's "-": the item's first key may sit on it or below it.
func dashLine(lines [][]byte, at int) int {
	for i := at; i >= 0; i-- {
		t := bytes.TrimSpace(lines[i])
		if bytes.HasPrefix(t, []byte("-")) {
			return i
		}
		if len(t) > 0 && i != at {
			break
		}
	}
	return at
}

// itemEnd is the line (0-based, exclusive) an item of the top-level list key ends before: the next item of the
// list, the next key of the file, or the file's end — trailing blank and comment lines left to what follows.
func itemEnd(cf *ConfigFile, key string, item *yaml.Node) int {
	lines := bytes.SplitAfter(cf.raw, []byte("\n"))
	root := cf.doc.Content[0]
	next := len(lines)
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != key {
			continue
		}
		items := root.Content[i+1].Content
		for j, it := range items {
			if it == item && j+1 < len(items) {
				return dashLine(lines, items[j+1].Line-1)
			}
		}
		if i+2 < len(root.Content) {
			next = root.Content[i+2].Line - 1
		}
	}
	for next > item.Line && next-1 < len(lines) {
		t := bytes.TrimSpace(lines[next-1])
		if len(t) > 0 && t[0] != '#' {
			break
		}
		next--
	}
	return next
}

// withListItem is the file's bytes with an item added at the end of the top-level block list key (the list added
// at the file's end when there is none). item writes the item's lines at an indent, in the file's line ending.
func withListItem(cf *ConfigFile, key string, item func(indent, eol string) string) ([]byte, error) {
	raw := cf.raw
	eol := "\n"
	if bytes.Contains(raw, []byte("\r\n")) {
		eol = "\r\n"
	}
	if len(raw) > 0 && !bytes.HasSuffix(raw, []byte("\n")) {
		raw = append(slices.Clone(raw), eol...)
	}
	list := rootList(cf, key)
	switch {
	case list == nil:
		return slices.Concat(raw, []byte(key+":"+eol+item("  ", eol))), nil
	case list.Kind == yaml.ScalarNode && list.Tag == "!!null" && lastKey(cf) == key: // key: with nothing under it, last
		return slices.Concat(raw, []byte(item("  ", eol))), nil
	case list.Kind != yaml.SequenceNode || list.Style&yaml.FlowStyle != 0 || len(list.Content) == 0:
		return nil, fmt.Errorf("its %s is not a block list the tool can add to", key)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	last := list.Content[len(list.Content)-1]
	end := itemEnd(cf, key, last)
	first := lines[dashLine(lines, list.Content[0].Line-1)]
	indent := string(first[:len(first)-len(bytes.TrimLeft(first, " "))])
	return slices.Concat(bytes.Join(lines[:end], nil), []byte(item(indent, eol)), bytes.Join(lines[end:], nil)), nil
}

// lastKey is the file's last top-level key.
func lastKey(cf *ConfigFile) string {
	root := cf.doc.Content[0]
	if len(root.Content) < 2 {
		return ""
	}
	return root.Content[len(root.Content)-2].Value
}

// writeConfig writes the config file's new bytes: in place (its mode kept, through a link) when it exists, else a
// new private file in a private folder.
func writeConfig(cf *ConfigFile, out []byte) error {
	if cf.raw != nil {
		return rewriteInPlace(cf.Path, out)
	}
	if err := os.MkdirAll(filepath.Dir(cf.Path), 0o700); err != nil {
		return err
	}
	return opfile.Replace(cf.Path, out, 0o600)
}
