package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// help is the key reference for where the operator is: every key of the focused scope and the global ones, the
// ones that do not apply marked off with the reason, then the filter syntax and the legends — scrollable.
type help struct {
	under  *scope // the scope help was opened from
	lines  []string
	offset int
	w, h   int
	st     Styles
}

// helpKey is one line of the reference: a key, what it does, and why it does nothing here (empty when it works).
type helpKey struct{ key, desc, off string }

func (m *Model) openHelp() {
	m.help = &help{under: m.focusScope(), st: m.st}
	m.layout()
}

// helpKeys lists the keys of the scope help was opened from, then the global ones, each with whether it works
// now: worked out by the root, which owns the state a key's disabled-reason looks at.
func (m *Model) helpKeys() []helpKey {
	scopes := []*scope{m.help.under}
	if !m.help.under.modal {
		scopes = append(scopes, globalScope)
	}
	var keys []helpKey
	for _, s := range scopes {
		for _, b := range s.bindings {
			h := b.Help()
			keys = append(keys, helpKey{key: h.Key, desc: h.Desc, off: b.reason(m)})
		}
	}
	return keys
}

// SetSize implements the component contract.
func (hp *help) SetSize(w, h int) { hp.w, hp.h = w, max(1, h) }

func (hp *help) build(keys []helpKey) {
	st := hp.st
	var out []string
	add := func(s string) { out = append(out, strings.Split(ansi.Wrap(s, hp.w, " "), "\n")...) }
	add(st.Title.Render("keys: "+hp.under.name) + st.Dim.Render("   esc closes · ↑↓ pgup pgdn scroll"))
	add("")
	for _, k := range keys {
		line := fmt.Sprintf("  %-12s %s", k.key, k.desc)
		if k.off != "" {
			line = st.Disabled.Render(line) + st.Dim.Render(" — off: "+k.off)
		}
		add(line)
	}
	add("")
	add(st.Header.Render("filter") + "  " + filterSyntax)
	add(st.Header.Render("verdicts") + "  R replay · C cap · N notIdempotent · U unroutable · ? unknown (needs --handlers) · ∞ an uncountable id · MALFORMED · CRASH (nested past what the replay can serialize)")
	add(st.Header.Render("marks") + "  ▸ cursor · * selected · H handled by the replay (its copy exists; drain skips it) · A acknowledged (dimmed; raises nothing)")
	add(st.Header.Render("alerts") + "  !AGE a live blob past the grace: the replay is not consuming · !DELETE IN stranded or quarantined, about to be lost")
	add(st.Header.Render("actions") + "  drain and restore take the selected rows, else every row the filter shows; ack takes the selected rows, else the row under the cursor (on a blob already acknowledged it offers to clear the ack); the confirmation says which")
	hp.lines = out
}

func (hp *help) scroll(n int) {
	hp.offset = max(0, min(hp.offset+n, len(hp.lines)-hp.h))
}

// View renders exactly the help's size, listing keys.
func (hp *help) View(keys []helpKey) string {
	hp.build(keys)
	hp.scroll(0)
	end := min(len(hp.lines), hp.offset+hp.h)
	return fit(strings.Join(hp.lines[hp.offset:end], "\n"), hp.w, hp.h)
}
