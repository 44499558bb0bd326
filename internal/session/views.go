package session

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
	"go.yaml.in/yaml/v3"
)

// Saved views: named filters (and a sort for the dashboard) in the config file, for every context or for one.
//
//	views:
//	  - name: stranded-webhooks
//	    filter: "sub:=WEBHOOKS is:root"
//	  - name: big-first
//	    filter: "is:root"
//	    sort: events desc
//	    context: prod

// ViewKeys are the keys a view may hold.
var ViewKeys = []string{"name", "filter", "sort", "context"}

// View is one saved view.
type View struct {
	Name, Filter string
	// Sort is a dashboard column and, optionally, asc or desc ("events desc"); "" keeps the dashboard's own.
	Sort string
	// Context is the context the view belongs to; "" is every context.
	Context string
	Line    int
	// item is the view's node in the file (for rm).
	item *yaml.Node
}

// readViews reads the file's views: each a mapping of known keys, a name, a filter that parses, names unique in
// their scope, a context that is one of the file's.
func (cf *ConfigFile) readViews(v *yaml.Node) error {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return nil // views: with nothing under it
	}
	if v.Kind != yaml.SequenceNode {
		return configError(cf.Path, v.Line, "views", "want a list of views (name: …, filter: …)")
	}
	for _, n := range v.Content {
		vw, err := cf.readView(n)
		if err != nil {
			return err
		}
		for _, other := range cf.Views {
			if other.Name == vw.Name && other.Context == vw.Context {
				return configError(cf.Path, vw.Line, "views", "%q names two views (the other at line %d)", textfmt.Printable(vw.Name), other.Line)
			}
		}
		cf.Views = append(cf.Views, vw)
	}
	return nil
}

func (cf *ConfigFile) readView(n *yaml.Node) (View, error) {
	vw := View{Line: n.Line, item: n}
	if n.Kind != yaml.MappingNode {
		return vw, configError(cf.Path, n.Line, "views", "each view is a mapping (name: …, filter: …)")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(ViewKeys, k.Value) {
			return vw, configError(cf.Path, k.Line, k.Value, "not a view key (want %s)", strings.Join(ViewKeys, ", "))
		}
		if seen[k.Value] || v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return vw, configError(cf.Path, k.Line, k.Value, "want one value")
		}
		seen[k.Value] = true
		switch k.Value {
		case "name":
			vw.Name = v.Value
		case "filter":
			vw.Filter = v.Value
		case "sort":
			vw.Sort = v.Value
		case "context":
			vw.Context = v.Value
		}
	}
	return vw, CheckView(vw, cf)
}

// CheckView says what is wrong with a view (nil: nothing): a name, a filter that parses, a sort of one column and
// a direction, a context of the file.
func CheckView(vw View, cf *ConfigFile) error {
	path := ""
	if cf != nil {
		path = cf.Path
	}
	switch {
	case strings.TrimSpace(vw.Name) == "" || strings.ContainsAny(vw.Name, " \t\r\n") || textfmt.Printable(vw.Name) != vw.Name:
		return configError(path, vw.Line, "name", "a view needs a name without spaces or control characters")
	case strings.TrimSpace(vw.Filter) == "":
		return configError(path, vw.Line, "filter", "view %q needs a filter", vw.Name)
	}
	if _, err := rules.ParseFilter(vw.Filter); err != nil {
		return configError(path, vw.Line, "filter", "view %q: %v", vw.Name, err)
	}
	if f := strings.Fields(vw.Sort); len(f) > 2 || len(f) == 2 && f[1] != "asc" && f[1] != "desc" ||
		len(f) > 0 && !slices.ContainsFunc(present.SortColumns(), func(c string) bool { return strings.EqualFold(c, f[0]) }) {
		return configError(path, vw.Line, "sort", "view %q: want one of %s and, optionally, asc or desc (events desc)", vw.Name, strings.Join(present.SortColumns(), ", "))
	}
	if vw.Context != "" && cf != nil && cf.Find(vw.Context) == nil {
		return configError(path, vw.Line, "context", "view %q: %q is not one of the contexts", vw.Name, textfmt.Printable(vw.Context))
	}
	return nil
}

// ViewsErr is what is wrong with the file's views (an error only for the commands that use a view).
func (cf *ConfigFile) ViewsErr() error {
	if cf == nil {
		return nil
	}
	return cf.viewsErr
}

// ViewsIn are the views a context sees: its own, then those for every context its own do not shadow.
func (cf *ConfigFile) ViewsIn(context string) []View {
	if cf == nil {
		return nil
	}
	var own, all []View
	for _, v := range cf.Views {
		switch v.Context {
		case context:
			if context != "" {
				own = append(own, v)
			} else {
				all = append(all, v)
			}
		case "":
			all = append(all, v)
		}
	}
	for _, v := range all {
		if !slices.ContainsFunc(own, func(o View) bool { return o.Name == v.Name }) {
			own = append(own, v)
		}
	}
	return own
}

// FindView is the view of that name a context sees.
func (cf *ConfigFile) FindView(context, name string) (View, bool) {
	for _, v := range cf.ViewsIn(context) {
		if v.Name == name {
			return v, true
		}
	}
	return View{}, false
}

// ViewNames are the names of the views a context sees.
func (cf *ConfigFile) ViewNames(context string) []string {
	var out []string
	for _, v := range cf.ViewsIn(context) {
		out = append(out, v.Name)
	}
	return out
}

// AddView writes a view into the file at path (made, private, when there is none), every other byte as written:
// the view is added at the end of the views list, or a views list is added at the end of the file.
func AddView(path string, vw View) error {
	cf, err := readOrEmptyWith(path, nil)
	if err != nil {
		return err
	}
	if cf.viewsErr != nil {
		return cf.viewsErr
	}
	if err := CheckView(vw, cf); err != nil {
		return err
	}
	for _, o := range cf.Views {
		if o.Name == vw.Name && o.Context == vw.Context {
			return Inputf("a view %q is already saved (line %d of %s): remove it first (deadletter view rm %s)", vw.Name, o.Line, textfmt.Printable(path), vw.Name)
		}
	}
	out, err := withView(cf, vw)
	if err != nil {
		return configError(path, 0, "views", "%v: edit it by hand", err)
	}
	return writeConfig(cf, out)
}

// RemoveView takes out of the file the view of that name a context sees (its own first), every other byte as written.
func RemoveView(path, context, name string) (View, error) {
	cf, err := ReadConfig(path, nil)
	if err != nil {
		return View{}, err
	}
	if cf.viewsErr != nil {
		return View{}, cf.viewsErr
	}
	vw, ok := cf.FindView(context, name)
	if !ok {
		return View{}, Inputf("no view %q in %s (have: %s)", textfmt.Printable(name), textfmt.Printable(path), strings.Join(cf.ViewNames(context), ", "))
	}
	lines := bytes.SplitAfter(cf.raw, []byte("\n"))
	from, to := vw.Line-1, itemEnd(cf, "views", vw.item)
	if from < 0 || to > len(lines) || from >= to {
		return View{}, configError(path, vw.Line, "views", "the view is not where the parser says: edit it by hand")
	}
	from = dashLine(lines, from)
	out := slices.Concat(bytes.Join(lines[:from], nil), bytes.Join(lines[to:], nil))
	var check yaml.Node
	if err := yaml.Unmarshal(out, &check); err != nil {
		return View{}, configError(path, vw.Line, "views", "the file would not parse without it (%v): edit it by hand", err)
	}
	return vw, rewriteInPlace(path, out)
}

// withView is the file's bytes with the view added at the end of its views list.
func withView(cf *ConfigFile, vw View) ([]byte, error) {
	return withListItem(cf, "views", func(indent, eol string) string {
		var b strings.Builder
		b.WriteString(indent + "- name: " + yamlString(vw.Name) + eol)
		b.WriteString(indent + "  filter: " + strconv.Quote(vw.Filter) + eol)
		if vw.Sort != "" {
			b.WriteString(indent + "  sort: " + yamlString(vw.Sort) + eol)
		}
		if vw.Context != "" {
			b.WriteString(indent + "  context: " + yamlString(vw.Context) + eol)
		}
		return b.String()
	})
}

// yamlString is a value as YAML reads it back: plain when it can be, quoted otherwise.
func yamlString(s string) string {
	if s == "" || strings.ContainsAny(s, ":#'\"{}[],&*!|>%@`\\") || strings.TrimSpace(s) != s || strings.ContainsFunc(s, func(r rune) bool { return r < ' ' }) {
		return strconv.Quote(s)
	}
	return s
}
