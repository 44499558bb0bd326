package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

// help is the key reference for where the operator is: every key of the focused scope and the root's keys that
// reach it — the ones that do not apply marked off, with the reason — then the filter syntax and the legends.
type help struct {
	e     *env
	text  pager
	under *scope
	root  *scope
	w, h  int
	keys  *scope
}

// keyColumn is where a key's description starts in help ("  %-12s "): its continuation lines start there too.
const keyColumn = 15

func newHelp(e *env, under, root *scope) *help {
	hp := &help{e: e, text: newPager(e.st), under: under, root: root}
	hp.keys = &scope{name: "help", modal: true, bindings: []binding{
		// q closes the help, as in less, htop and gh-dash: a reader leaving the help does not mean to quit.
		bind([]string{"esc", "?", "q"}, "esc", "close help (q and ? too)", func() tea.Cmd { return hp.e.send(closeMsg{}) }).footer(),
		bind([]string{"up", "k"}, "↑/k", "scroll up", func() tea.Cmd { hp.text.scroll(-1); return nil }),
		bind([]string{"down", "j"}, "↓/j", "scroll down", func() tea.Cmd { hp.text.scroll(1); return nil }),
		bind([]string{"pgup"}, "pgup", "page up", func() tea.Cmd { hp.text.scroll(-hp.text.h); return nil }),
		bind([]string{"pgdown", "space"}, "pgdn", "page down", func() tea.Cmd { hp.text.scroll(hp.text.h); return nil }),
		bind([]string{"ctrl+c"}, "ctrl+c", "quit", func() tea.Cmd { return hp.e.send(quitMsg{}) }).footer(),
	}}
	return hp
}

// build writes the reference from the scopes as they stand (a key's disabled reason is read now).
func (hp *help) build() {
	st := hp.e.st
	out := []string{st.Title.Render("keys: "+hp.under.name) + st.Dim.Render("   esc closes · ↑↓ pgup pgdn scroll"), ""}
	for _, s := range []*scope{hp.under, hp.root} {
		if s == nil {
			continue // (the contexts summary: no root's keys reach it)
		}
		for _, b := range s.bindings {
			h := b.Help()
			line := fmt.Sprintf("  %-12s %s", h.Key, h.Desc)
			if why := b.reason(); why != "" {
				line = st.Disabled.Render(line) + st.Dim.Render(" — off: "+why)
			}
			if hp.w > 0 { // wrapped here, under the description rather than under the key
				out = append(out, textfmt.Hang(line, hp.w, keyColumn, " |")...)
				continue
			}
			out = append(out, line)
		}
	}
	if hp.root == nil {
		out = append(out, "", st.Dim.Render("Each row is a check of one context of the config file, again every --interval; a context that cannot be read says why in its row, and holds up no other."))
		hp.text.setLines(out)
		return
	}
	legends := [][2]string{
		{"filter", rules.QuerySyntax},
		{"row codes", present.RowCodes(hp.e.cfg)},
		{"verdicts", "R replay · C cap · N notIdempotent · U unroutable · ? unknown (needs --handlers) · ∞ an uncountable id · MALFORMED · CRASH (nested past what the replay can serialize) · " + present.LegendDerived},
		{"reasons", present.ReasonLegend(nil)},
		{"marks", "▸ cursor · * selected · H handled by the replay (its copy exists; drain skips it) · A acknowledged (dimmed)"},
		{"alerts", "!AGE a live blob past the grace: the replay is not consuming · !DELETE IN stranded or quarantined, about to be lost"},
		{"badges", "the line under the header counts findings, one voice per blob: ▲STRANDED counts the stranded blobs a drain is for, so it can be less than the Stranded tab, which counts the pane — the blobs the replay throws on (▲CRASH), can never be triggered (▲UNTRIGGERABLE) or already handled (the H count; ▲START REPEATS when a worker start would republish them) are counted under their own names, not again."},
		{"actions", "d, r and a take the selected rows, else the row under the cursor; ctrl+a selects every row the filter shows, so ctrl+a then d drains them all. Every question names the blobs it takes and why."},
		{"handler", "the overview's HANDLER column: how long ago the container last got a dead letter of each subscription (marked while that is within the TTL: drained now, its events would most likely dead-letter again) — " + present.ContainerWitness(hp.e.cfg.TTL)},
	}
	out = append(out, "")
	for _, l := range legends {
		line := st.Header.Render(l[0]) + "  " + l[1]
		if hp.w > 0 { // a legend's wrapped lines sit under its text, not under its name
			out = append(out, textfmt.Hang(line, hp.w, len(l[0])+2, " |")...) // (a | list breaks between its words)
			continue
		}
		out = append(out, line)
	}
	hp.text.setLines(out)
}

func (hp *help) SetSize(w, h int) { hp.w, hp.h = w, h; hp.text.SetSize(w, h) }

func (hp *help) Update(tea.Msg) (component, tea.Cmd) { return hp, nil }

func (hp *help) Scope() *scope { return hp.keys }

func (hp *help) View() string {
	off := hp.text.vp.YOffset()
	hp.build()
	hp.text.vp.SetYOffset(off)
	return hp.text.View()
}

func (hp *help) mouse(msg tea.MouseMsg, _ int) tea.Cmd {
	hp.text.scroll(wheel(msg))
	return nil
}
