package session

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/deadletter/deadletter/internal/azmonitor"
	"github.com/deadletter/deadletter/internal/opfile"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/store/azureblob"
	"go.yaml.in/yaml/v3"
)

// The config file: named contexts, each a container and its settings, and the current one (kubectl's habit).
// Secrets never live in it: a context names the environment variable that holds a connection string.
//
//	current-context: prod
//	contexts:
//	  - name: dev
//	    dir: /var/tmp/deadletter-dev
//	  - name: prod
//	    account-url: https://estateprod.blob.core.windows.net
//	    container: deadletter
//	    handlers: /etc/deadletter/handlers.json
//	    read-only: true
//	    event-grid-topics:
//	      - /subscriptions/…/resourceGroups/estate/providers/Microsoft.EventGrid/topics/estate-events
//	    replay-system-topic: /subscriptions/…/providers/Microsoft.EventGrid/systemTopics/estate-storage

// ContextKeys are the keys a context may hold: each sets the global flag of the same name, except name and
// connection-string-env (the variable whose value is the connection string).
var ContextKeys = []string{"name", "dir", "account-url", "connection-string-env", "connection-string-file", "container", "handlers", "ttl", "live-grace",
	"retention", "expiring-within", "max-replays", "max-ack", "read-only", "id-separator", "node-stack-depth",
	"event-grid-topics", "replay-system-topic", "witness-window", "audit-container", "function-app"}

// NamedContext is one context of the file: its values by key (as written), and the line of each. Err is what is
// wrong with it: a context that is wrong stops only the commands that run in it.
type NamedContext struct {
	Name   string
	Values map[string]string
	Lines  map[string]int
	Line   int
	Err    error
}

// ConfigFile is a parsed config file.
type ConfigFile struct {
	Path     string
	Current  string
	Contexts []NamedContext
	// Views are the saved views (views.go).
	Views []View
	doc   yaml.Node
	raw   []byte
	// currentErr: current-context names no context (an error only for the commands that would run in it).
	currentErr error
	// viewsErr: what is wrong with the views (an error only for the commands that use one).
	viewsErr error
}

// configError is an error in the file, where it is.
func configError(path string, line int, key, format string, args ...any) error {
	where := textfmt.Printable(path)
	if line > 0 {
		where += fmt.Sprintf(":%d", line)
	}
	if key != "" {
		where += ": " + key
	}
	return Inputf("config %s: %s", where, azureblob.Scrub(fmt.Sprintf(format, args...)))
}

// DefaultConfigPath is the config file when neither --config nor DEADLETTER_CONFIG names one.
func DefaultConfigPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "deadletter", "config.yaml")
}

// ReadConfig reads and checks a config file (check takes each context value the way its flag would): every key known, every value of its type, names unique, a
// context naming one container only, the current context one of them.
func ReadConfig(path string, check func(key, value string) error) (*ConfigFile, error) {
	b, err := opfile.ReadOperatorFile("config", path)
	if err != nil {
		return nil, err
	}
	if err := configPermissions(path); err != nil {
		return nil, err
	}
	return parseConfig(path, b, check)
}

// parseConfig reads a config file's bytes (ReadConfig's checks of each value and of the whole).
func parseConfig(path string, b []byte, check func(key, value string) error) (*ConfigFile, error) {
	cf := &ConfigFile{Path: path, raw: b}
	if err := yaml.Unmarshal(b, &cf.doc); err != nil {
		return nil, configError(path, 0, "", "%v", err)
	}
	if len(cf.doc.Content) == 0 {
		return cf, nil // an empty file: no contexts
	}
	root := cf.doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, configError(path, root.Line, "", "want a mapping with current-context and contexts")
	}
	seen := map[string]bool{}
	var views *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if seen[k.Value] {
			return nil, configError(path, k.Line, k.Value, "given twice")
		}
		seen[k.Value] = true
		switch k.Value {
		case "current-context":
			if v.Kind != yaml.ScalarNode {
				return nil, configError(path, v.Line, k.Value, "want a context's name")
			}
			cf.Current = v.Value
		case "contexts":
			if err := cf.readContexts(v, check); err != nil {
				return nil, err
			}
		case "views":
			views = v
		default:
			return nil, configError(path, k.Line, k.Value, "not a config key (want current-context, contexts, views)")
		}
	}
	if views != nil { // (after the contexts: a view names one)
		if err := cf.readViews(views); err != nil {
			cf.viewsErr, cf.Views = err, nil
		}
	}
	if cf.Current != "" && cf.Find(cf.Current) == nil {
		cf.currentErr = configError(path, keyLine(root, "current-context"), "current-context", "%q is not one of the contexts", cf.Current)
	}
	cf.resolveRelative()
	return cf, nil
}

// readContexts reads the contexts list: each context that is wrong keeps its error (it stops only the commands
// that run in it).
func (cf *ConfigFile) readContexts(v *yaml.Node, check func(key, value string) error) error {
	path := cf.Path
	if v.Kind != yaml.SequenceNode {
		return configError(path, v.Line, "contexts", "want a list of contexts")
	}
	for _, c := range v.Content {
		nc, err := readContext(path, c, check)
		if err != nil {
			nc.Err = err
			if nc.Name == "" {
				nc.Name = nameOf(c)
			}
		}
		for _, other := range cf.Contexts {
			if other.Name == nc.Name && nc.Err == nil {
				nc.Err = configError(path, nc.Lines["name"], "name", "%q names two contexts (the other at line %d)", nc.Name, other.Line)
			}
		}
		cf.Contexts = append(cf.Contexts, nc)
	}
	return nil
}

// nameOf is the name a context's mapping gives, if any (for a context that is wrong, to say which).
func nameOf(n *yaml.Node) string {
	for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "name" && n.Content[i+1].Kind == yaml.ScalarNode {
			return n.Content[i+1].Value
		}
	}
	return ""
}

// resolveRelative makes a context's relative dir and handlers paths relative to the config file's folder, as
// ssh and kubectl read theirs: a context means the same directory from wherever it is used.
func (cf *ConfigFile) resolveRelative() {
	base := filepath.Dir(cf.Path)
	for i := range cf.Contexts {
		for _, k := range []string{"dir", "handlers"} {
			if v, ok := cf.Contexts[i].Values[k]; ok && v != "" && !filepath.IsAbs(v) {
				cf.Contexts[i].Values[k] = filepath.Join(base, v)
			}
		}
	}
}

// problems are what is wrong in the file, each where it is (context list says them all).
func (cf *ConfigFile) Problems() []error {
	var out []error
	if cf.currentErr != nil {
		out = append(out, cf.currentErr)
	}
	for _, c := range cf.Contexts {
		if c.Err != nil {
			out = append(out, c.Err)
		}
	}
	if cf.viewsErr != nil {
		out = append(out, cf.viewsErr)
	}
	return out
}

// readContext reads one context and checks its values: each by check (the flag it sets takes it), the Event Grid
// topics as resource IDs, and the context as a whole (one container, one way in).
func readContext(path string, n *yaml.Node, check func(key, value string) error) (NamedContext, error) {
	nc := NamedContext{Values: map[string]string{}, Lines: map[string]int{}, Line: n.Line}
	if n.Kind != yaml.MappingNode {
		return nc, configError(path, n.Line, "contexts", "each context is a mapping (name: …, dir: … or account-url: …)")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if err := nc.read(path, n.Content[i], n.Content[i+1], check); err != nil {
			return nc, err
		}
	}
	nc.Name = nc.Values["name"]
	return nc, nc.whole(path, n.Line)
}

// read reads one key of a context.
func (nc *NamedContext) read(path string, k, v *yaml.Node, check func(key, value string) error) error {
	if !slices.Contains(ContextKeys, k.Value) {
		return configError(path, k.Line, k.Value, "not a context key (want %s)", strings.Join(ContextKeys, ", "))
	}
	if _, dup := nc.Values[k.Value]; dup {
		return configError(path, k.Line, k.Value, "given twice in one context")
	}
	val, err := contextValue(path, k, v)
	if err != nil {
		return err
	}
	nc.Values[k.Value], nc.Lines[k.Value] = val, k.Line
	if check != nil {
		if err := check(k.Value, val); err != nil {
			return configError(path, v.Line, k.Value, "%q: %v", val, err)
		}
	}
	if err := checkTopics(k.Value, val); err != nil {
		return configError(path, v.Line, k.Value, "%v", err)
	}
	return nil
}

// whole checks a context as a whole: a name, and one container reached one way.
func (nc *NamedContext) whole(path string, line int) error {
	v := nc.Values
	account, cs := v["account-url"] != "", v["connection-string-env"] != "" || v["connection-string-file"] != ""
	switch {
	case nc.Name == "":
		return configError(path, line, "name", "every context needs a name")
	case v["dir"] != "" && (account || cs):
		return configError(path, nc.Lines["dir"], "dir", "context %q names a directory and an account: one container a context", nc.Name)
	case account && cs:
		return configError(path, nc.Lines["account-url"], "account-url", "context %q names an account URL and a connection string: one way in", nc.Name)
	case v["connection-string-env"] != "" && v["connection-string-file"] != "":
		return configError(path, nc.Lines["connection-string-file"], "connection-string-file", "context %q names two connection strings: one way in", nc.Name)
	case v["dir"] == "" && !account && !cs:
		return configError(path, line, "", "context %q names no container (dir, account-url, connection-string-env or connection-string-file)", nc.Name)
	}
	return nil
}

// contextValue is a context key's value as its flag takes it: a scalar, or for event-grid-topics a list of
// resource IDs (or one), joined with commas (no resource ID holds one).
func contextValue(path string, k, v *yaml.Node) (string, error) {
	if k.Value == "event-grid-topics" && v.Kind == yaml.SequenceNode && len(v.Content) > 0 {
		ids := make([]string, 0, len(v.Content))
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode || item.Tag == "!!null" || item.Value == "" || strings.Contains(item.Value, ",") {
				return "", configError(path, item.Line, k.Value, "want a list of Event Grid topics' resource IDs")
			}
			ids = append(ids, item.Value)
		}
		return strings.Join(ids, ","), nil
	}
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return "", configError(path, v.Line, k.Value, "want a value")
	}
	return v.Value, nil
}

// checkTopics checks the witness's resource IDs when the file is read, so a typo is said with its line.
func checkTopics(key, val string) error {
	if key == "function-app" {
		_, err := azmonitor.CheckFunctionAppID(strings.TrimSpace(val))
		return err
	}
	if key != "event-grid-topics" && key != "replay-system-topic" {
		return nil
	}
	for _, id := range strings.Split(val, ",") {
		if _, err := azmonitor.CheckTopicID(strings.TrimSpace(id)); err != nil {
			return err
		}
	}
	return nil
}

// keyLine is the line of key in a mapping node (0 when absent).
func keyLine(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i].Line
		}
	}
	return 0
}

func (cf *ConfigFile) Find(name string) *NamedContext {
	for i := range cf.Contexts {
		if cf.Contexts[i].Name == name {
			return &cf.Contexts[i]
		}
	}
	return nil
}

func (cf *ConfigFile) Names() []string {
	out := make([]string, len(cf.Contexts))
	for i, c := range cf.Contexts {
		out[i] = c.Name
	}
	return out
}

// configPermissions refuses a config file (the file a link leads to) that others may write: whoever can write it
// chooses the container every command acts on, as ssh refuses a config others can write. Windows keeps no such
// mode bits, and is not checked.
func configPermissions(path string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if m := fi.Mode().Perm(); m&0o022 != 0 {
		who := "others"
		if m&0o002 == 0 {
			who = "its group"
		}
		return Inputf("config %s is writable by %s (mode %04o): whoever can write it chooses your container; fix it with: chmod go-w %s",
			textfmt.Printable(path), who, m, textfmt.Printable(path))
	}
	// The folders it is reached through, as ssh's StrictModes checks them: whoever can write one can rename
	// another file — or a link — over the config (a folder with the sticky bit, /tmp's, lets nobody rename what
	// is not theirs). Both the path as given and the file a link leads to.
	dirs := []string{filepath.Dir(path)}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		dirs = append(dirs, filepath.Dir(real))
	}
	for _, d := range dirs {
		if err := safeFolders(path, d); err != nil {
			return err
		}
	}
	return nil
}

// safeFolders checks dir and every folder above it: none may be writable by its group or others without the
// sticky bit, nor owned by anyone but root or the operator.
func safeFolders(config, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for d := abs; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		m := fi.Mode()
		if m.Perm()&0o022 != 0 && m&os.ModeSticky == 0 {
			return Inputf("config %s is in %s, a folder others can write (mode %04o): anyone there could put another file or a link in its place; fix it with: chmod go-w %s",
				textfmt.Printable(config), textfmt.Printable(d), m.Perm(), textfmt.Printable(d))
		}
		if owner, ok := ownerOf(fi); ok && owner != 0 && owner != os.Getuid() {
			return Inputf("config %s is in %s, a folder owned by another user (uid %d): they could put another file in its place; keep the config in a folder of yours",
				textfmt.Printable(config), textfmt.Printable(d), owner)
		}
		if parent := filepath.Dir(d); parent == d {
			return nil
		}
	}
}

// setCurrent rewrites the file's current-context and nothing else: every other byte as written — comments, every
// YAML document, line endings, a byte-order mark — and the file's mode; through a link, the file it leads to.
// What it cannot rewrite that way (a current-context that is not a plain or quoted one-line value) it refuses,
// saying so, rather than re-encoding the file.
func (cf *ConfigFile) SetCurrent(name string) error {
	c := cf.Find(name)
	if c == nil {
		return Inputf("no context %q in %s (have: %s)", textfmt.Printable(name), textfmt.Printable(cf.Path), strings.Join(cf.PrintableNames(), ", "))
	}
	if c.Err != nil {
		return c.Err
	}
	out, err := withCurrent(cf.raw, cf.doc.Content[0], name)
	if err != nil {
		return configError(cf.Path, 0, "current-context", "%v: edit it by hand", err)
	}
	if err := rewriteInPlace(cf.Path, out); err != nil {
		return err
	}
	cf.Current, cf.raw = name, out
	return nil
}

// withCurrent is the file's bytes with current-context set to name: its value replaced where it stands, or the
// key added as the first line (after a byte-order mark) in the file's own line ending.
func withCurrent(raw []byte, root *yaml.Node, name string) ([]byte, error) {
	bom := []byte{}
	body := raw
	if b, ok := bytes.CutPrefix(raw, []byte("\xef\xbb\xbf")); ok {
		bom, body = []byte("\xef\xbb\xbf"), b
	}
	value := name
	if strings.ContainsAny(name, ":#'\"{}[],&*!|>%@`\\") || strings.TrimSpace(name) != name || name == "" {
		value = strconv.Quote(name)
	}
	eol := "\n"
	if bytes.Contains(body, []byte("\r\n")) {
		eol = "\r\n"
	}
	var v *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "current-context" {
			v = root.Content[i+1]
		}
	}
	if v == nil {
		return slices.Concat(bom, []byte("current-context: "+value+eol), body), nil
	}
	if v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return nil, fmt.Errorf("its current-context is a block scalar")
	}
	lines := bytes.SplitAfter(body, []byte("\n"))
	if v.Line < 1 || v.Line > len(lines) {
		return nil, fmt.Errorf("its current-context is not where the parser says")
	}
	line := lines[v.Line-1]
	start := len(string([]rune(string(line))[:min(v.Column-1, len([]rune(string(line))))]))
	end, err := scalarEnd(line, start)
	if err != nil {
		return nil, err
	}
	lines[v.Line-1] = slices.Concat(line[:start], []byte(value), line[end:])
	return slices.Concat(bom, bytes.Join(lines, nil)), nil
}

// scalarEnd is where a one-line YAML scalar that starts at start ends: after its closing quote, or — plain —
// before a comment, a flow's separator or the line's end, its trailing spaces left out.
func scalarEnd(line []byte, start int) (int, error) {
	switch {
	case start >= len(line):
		return 0, fmt.Errorf("its current-context is not where the parser says")
	case line[start] == '"' || line[start] == '\'':
		q, end := line[start], start+1
		for end < len(line) && (line[end] != q || q == '"' && line[end-1] == '\\') {
			end++
		}
		if end >= len(line) {
			return 0, fmt.Errorf("its current-context spans lines")
		}
		return end + 1, nil
	}
	end := start
	for end < len(line) && !plainEnds(line, end) {
		end++
	}
	for end > start && line[end-1] == ' ' {
		end--
	}
	return end, nil
}

// plainEnds says a plain scalar ends at line[i]: a line end, a comment (" #"), or a flow's , or }.
func plainEnds(line []byte, i int) bool {
	switch line[i] {
	case '\r', '\n', ',', '}':
		return true
	case ' ':
		return i+1 < len(line) && line[i+1] == '#'
	}
	return false
}

// rewriteInPlace replaces a file (through a link, the file it leads to) with b, keeping its mode: a temporary file
// in the same folder, synced, renamed over it.
func rewriteInPlace(path string, b []byte) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("config %s leads to %s, not a regular file", textfmt.Printable(path), opfile.FileKind(fi.Mode()))
	}
	return opfile.Replace(real, b, fi.Mode().Perm())
}

// printableNames are the contexts' names, each escaped (a name may hold a newline or a bidi override).
func (cf *ConfigFile) PrintableNames() []string {
	out := make([]string, len(cf.Contexts))
	for i, c := range cf.Contexts {
		out[i] = strconv.Quote(c.Name)
		if textfmt.Printable(c.Name) == c.Name && !strings.ContainsAny(c.Name, " ,") {
			out[i] = c.Name
		}
	}
	return out
}

// CurrentErr is what is wrong with the file's current-context: it names no context (an error only for the
// commands that would run in it).
func (cf *ConfigFile) CurrentErr() error { return cf.currentErr }
