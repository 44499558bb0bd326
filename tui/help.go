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
}

func (m *Model) openHelp() {
	m.help = &help{under: m.focusScope()}
	m.layout()
}

// SetSize implements the component contract.
func (hp *help) SetSize(w, h int) { hp.w, hp.h = w, max(1, h) }

func (hp *help) build(m *Model) {
	var out []string
	add := func(s string) { out = append(out, strings.Split(ansi.Wrap(s, hp.w, " "), "\n")...) }
	add(m.st.Title.Render("keys: "+hp.under.name) + m.st.Dim.Render("   esc closes · ↑↓ pgup pgdn scroll"))
	add("")
	scopes := []*scope{hp.under}
	if !hp.under.modal {
		scopes = append(scopes, globalScope)
	}
	for _, s := range scopes {
		for _, b := range s.bindings {
			h := b.Help()
			line := fmt.Sprintf("  %-12s %s", h.Key, h.Desc)
			if why := b.reason(m); why != "" {
				line = m.st.Disabled.Render(fmt.Sprintf("  %-12s %s", h.Key, h.Desc)) + m.st.Dim.Render(" — off: "+why)
			}
			add(line)
		}
	}
	add("")
	add(m.st.Header.Render("filter") + "  " + filterSyntax)
	add(m.st.Header.Render("verdicts") + "  R replay · C cap · N notIdempotent · U unroutable · ? unknown (needs --handlers) · ∞ an uncountable id · MALFORMED · CRASH (nested past what the replay can serialize)")
	add(m.st.Header.Render("marks") + "  ▸ cursor · * selected · H handled by the replay (its copy exists; drain skips it) · A acknowledged (dimmed; raises nothing)")
	add(m.st.Header.Render("alerts") + "  !AGE a live blob past the grace: the replay is not consuming · !DELETE IN stranded or quarantined, about to be lost")
	add(m.st.Header.Render("actions") + "  drain and restore take the selected rows, else every row the filter shows; ack takes the selected rows, else the row under the cursor (on a blob already acknowledged it offers to clear the ack); the confirmation says which")
	hp.lines = out
}

func (hp *help) scroll(n int) {
	hp.offset = max(0, min(hp.offset+n, len(hp.lines)-hp.h))
}

// View renders exactly the help's size.
func (hp *help) View(m *Model) string {
	hp.build(m)
	hp.scroll(0)
	end := min(len(hp.lines), hp.offset+hp.h)
	return fit(strings.Join(hp.lines[hp.offset:end], "\n"), hp.w, hp.h)
}
