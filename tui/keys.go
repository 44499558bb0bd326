package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/deadletter/deadletter/internal/textfmt"
)

// binding is one key of one scope, as data: its keys and help (bubbles/key), whether the footer lists it, why it
// does nothing where the operator is (off), and what it does — a method of the component the scope belongs to.
// The footer and help are generated from the focused scope, so they never list a key that does nothing there,
// and a key that is off says why when pressed (lazygit's GetDisabledReason).
type binding struct {
	key.Binding
	// short: listed in the key line (when it applies).
	short bool
	// off says why the binding does nothing now, or "" when it applies.
	off func() string
	// do acts.
	do func() tea.Cmd
}

// bind makes a binding: its keys, the label the key line shows, what help says it does, and the method it runs.
func bind(keys []string, label, desc string, do func() tea.Cmd) binding {
	return binding{Binding: key.NewBinding(key.WithKeys(keys...), key.WithHelp(label, desc)), do: do}
}

// footer lists the binding in the key line.
func (b binding) footer() binding { b.short = true; return b }

// when gives the binding a reason to be off.
func (b binding) when(off func() string) binding { b.off = off; return b }

// reason is why b is off now ("" when it applies).
func (b binding) reason() string {
	if b.off == nil {
		return ""
	}
	return b.off()
}

// matches reports whether the key press is one of b's keys.
func (b binding) matches(k tea.KeyPressMsg) bool {
	s := k.String()
	for _, want := range b.Keys() {
		if s == want {
			return true
		}
	}
	return false
}

// scope is the keys of one focus.
type scope struct {
	name     string
	bindings []binding
	// modal: the root's keys (help, refresh, views) do not reach through.
	modal bool
	// typing: keys no binding takes are text for the component (its Update gets them).
	typing bool
}

// find is the binding a key press is for.
func (s *scope) find(k tea.KeyPressMsg) (binding, bool) {
	for _, b := range s.bindings {
		if b.matches(k) {
			return b, true
		}
	}
	return binding{}, false
}

// hint is one entry of the key line: a key and the first word of what it does.
type hint struct{ key, word string }

// hints are the short bindings that apply now.
func (s *scope) hints() []hint {
	var out []hint
	for _, b := range s.bindings {
		if !b.short || b.reason() != "" {
			continue
		}
		h := b.Help()
		desc := h.Desc // the key line says the first word; help says the rest
		if i := strings.IndexAny(desc, " :(,"); i > 0 {
			desc = desc[:i]
		}
		out = append(out, hint{h.Key, desc})
	}
	return out
}

// keyLine draws hints in w columns: as many as fit, in order; when some do not, "? help" says "? more" (or "…"
// where help does not reach), and the tail (help, quit) is always kept.
func keyLine(st *Styles, pm memo, hs, tail []hint, w int) string {
	draw := func(h hint) string { return pm.paint(&st.Key, h.key) + " " + pm.paint(&st.Dim, h.word) }
	wid := func(h hint) int { return textfmt.Width(h.key) + 1 + textfmt.Width(h.word) }
	used, help := 0, -1
	for i, h := range tail {
		used += wid(h) + 2
		if h.key == "?" {
			help = i
		}
	}
	var parts []string
	for _, h := range hs {
		if used+wid(h)+2 > w {
			// What does not fit is in help: "? help" says "? more" then; where help does not reach, "…".
			if help >= 0 {
				tail = append([]hint(nil), tail...)
				tail[help].word = "more"
			} else {
				parts = append(parts, pm.paint(&st.Dim, "…"))
			}
			break
		}
		parts, used = append(parts, draw(h)), used+wid(h)+2
	}
	for _, h := range tail {
		parts = append(parts, draw(h))
	}
	return strings.Join(parts, "  ")
}
