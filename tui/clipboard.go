package tui

import (
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"
	"github.com/aymanbagabas/go-osc52/v2"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/store"
)

type copiedMsg struct{ text string }

// copyText puts text on the operator's clipboard with OSC 52, which the terminal carries — over SSH and tmux
// too — so the blob's name can be pasted into show, a ticket or a chat.
func (m *Model) copyText(what, text string) tea.Cmd {
	return m.clip(text, fmt.Sprintf("copied the %s (%s) to the clipboard (OSC 52)", what, textfmt.Bytes(int64(len(text)))))
}

// clip copies text — through Bubble Tea's clipboard command, which writes OSC 52 between frames, or to
// Options.Clipboard where one is given — and says so.
func (m *Model) clip(text, said string) tea.Cmd {
	done := func() tea.Msg { return copiedMsg{said} }
	out := m.opt.Clipboard
	if out == nil {
		return tea.Sequence(tea.SetClipboard(text), done)
	}
	return func() tea.Msg {
		if _, err := osc52.New(text).WriteTo(out); err != nil {
			return copiedMsg{m.st.Error.Render("could not copy: " + err.Error())}
		}
		return done()
	}
}

// copiedBlobMsg is a blob's raw JSON, read, for the clipboard.
type copiedBlobMsg struct{ text, said string }

// maxCopy bounds what Y sends through the terminal: OSC 52 carries base64 in one escape sequence, which terminals
// and tmux cap (often near 100 KiB) and which, tens of MiB long, would stall the screen it shares the output with.
const maxCopy = 256 << 10

// copyBlob reads a blob and copies its raw JSON.
func (m *Model) copyBlob(name string) tea.Cmd {
	c, ctx := m.opt.Session.Container(), m.ctx
	return func() tea.Msg {
		b, err := c.Read(ctx, name, maxCopy)
		if errors.Is(err, store.ErrTooLarge) {
			return copiedMsg{m.st.Error.Render(fmt.Sprintf("not copied: the payload is over %s, more than a terminal's clipboard carries; download it with your storage tools", textfmt.Bytes(maxCopy)))}
		}
		if err != nil {
			return copiedMsg{m.st.Error.Render("could not copy: " + textfmt.Printable(err.Error()))}
		}
		return copiedBlobMsg{string(b.Body), fmt.Sprintf("copied the raw JSON (%s) to the clipboard (OSC 52)", textfmt.Bytes(int64(len(b.Body))))}
	}
}
