package tui

import (
	"errors"
	"fmt"

	"github.com/aymanbagabas/go-osc52/v2"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/store"
)

type copiedMsg struct{ text string }

// copyText puts text on the operator's clipboard with OSC 52, which the terminal carries — over SSH and tmux
// too — so the blob's name can be pasted into show, a ticket or a chat.
func (m *Model) copyText(what, text string) tea.Cmd {
	out := m.opt.Clipboard
	return func() tea.Msg {
		seq := osc52.New(text)
		if _, err := seq.WriteTo(out); err != nil {
			return copiedMsg{m.st.Error.Render("could not copy: " + err.Error())}
		}
		return copiedMsg{fmt.Sprintf("copied the %s (%s) to the clipboard (OSC 52)", what, textfmt.Bytes(int64(len(text))))}
	}
}

// maxCopy bounds what Y sends through the terminal: OSC 52 carries base64 in one escape sequence, which terminals
// and tmux cap (often near 100 KiB) and which, tens of MiB long, would stall the screen it shares the output with.
const maxCopy = 256 << 10

// copyBlob reads a blob and copies its raw JSON.
func (m *Model) copyBlob(name string) tea.Cmd {
	c, ctx, out := m.opt.Session.Container(), m.ctx, m.opt.Clipboard
	return func() tea.Msg {
		b, err := c.Read(ctx, name, maxCopy)
		if errors.Is(err, store.ErrTooLarge) {
			return copiedMsg{m.st.Error.Render(fmt.Sprintf("not copied: the payload is over %s, more than a terminal's clipboard carries; download it with your storage tools", textfmt.Bytes(maxCopy)))}
		}
		if err != nil {
			return copiedMsg{m.st.Error.Render("could not copy: " + textfmt.Printable(err.Error()))}
		}
		if _, err := osc52.New(string(b.Body)).WriteTo(out); err != nil {
			return copiedMsg{m.st.Error.Render("could not copy: " + err.Error())}
		}
		return copiedMsg{fmt.Sprintf("copied the raw JSON (%s) to the clipboard (OSC 52)", textfmt.Bytes(int64(len(b.Body))))}
	}
}
