package tui

import (
	"fmt"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/deadletter/deadletter/internal/opfile"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// A payload's way out and back, from the detail and the event view: v pages it (escaped, in $PAGER), s saves its
// exact bytes to a file (asking the path), e edits it in $EDITOR and writes the edit back through the replay
// (replay.Repair), after a preview and a yes.

type (
	// pageBlobMsg, saveBlobMsg and editBlobMsg ask the root to page, save or edit a blob's payload.
	pageBlobMsg struct{ name string }
	saveBlobMsg struct{ name string }
	editBlobMsg struct{ name string }

	// pagerReadyMsg: the escaped payload is in a temporary file for the pager (or err).
	pagerReadyMsg struct {
		path string
		err  error
	}
	// pagerDoneMsg: the pager exited; its temporary file is to be removed.
	pagerDoneMsg struct {
		path string
		err  error
	}
	// editReadyMsg: the payload, as read, is in a temporary file for the editor (or err).
	editReadyMsg struct {
		orig store.Blob
		path string
		err  error
	}
	// editDoneMsg: the editor exited.
	editDoneMsg struct {
		orig store.Blob
		path string
		err  error
	}
	// repairPlannedMsg: the edit is read and judged (or err; kept is where an edit that failed was kept).
	repairPlannedMsg struct {
		plan *rules.RepairPlan
		err  error
	}
	// repairDoneMsg: the repair ran (kept: the file the edit was kept in when it was not written).
	repairDoneMsg struct {
		r      rules.Result
		kept   string
		err    error
		warned []string
	}
)

// payloadKeys are the keys that take a blob's payload out (and, with edit, back): the detail's and the event
// view's, listed by help (the key line is full). editOff says why e does nothing (nil: no e here).
func payloadKeys(e *env, name string, editOff func() string) []binding {
	keys := []binding{
		bind([]string{"v"}, "v", "view the payload in $PAGER (escaped)", func() tea.Cmd { return e.send(pageBlobMsg{name}) }),
		bind([]string{"s", "ctrl+s"}, "s", "save the payload's exact bytes to a file", func() tea.Cmd { return e.send(saveBlobMsg{name}) }),
	}
	if editOff != nil {
		keys = append(keys, bind([]string{"e"}, "e", "edit the payload in $EDITOR and send it back through the replay", func() tea.Cmd {
			return e.send(editBlobMsg{name})
		}).when(editOff))
	}
	return keys
}

// editOff says why e does nothing on this blob ("" when it applies).
func (v *detail) editOff() string {
	switch {
	case v.e.readOnly:
		return "read-only mode (--read-only): edit is off"
	case v.gone != nil:
		return "nothing to edit here: " + present.Advice(present.BlobState{Gone: v.gone})[0]
	case v.d == nil:
		return "still reading the blob"
	case v.d.ReadErr != "":
		return "the payload was not read: " + textfmt.Printable(v.d.ReadErr)
	}
	return ""
}

// estate names the container the dashboard writes to, with its context (escaped: both may come from a file).
func (m *Model) estate() string {
	d := textfmt.Printable(m.opt.Session.Container().Describe())
	if m.opt.Context != "" {
		return textfmt.Printable(m.opt.Context) + " (" + d + ")"
	}
	return d
}

// repairRequest takes what v, s and e ask, and the replies of their commands.
func (m *Model) repairRequest(msg tea.Msg) tea.Cmd {
	c, ctx := m.opt.Session.Container(), m.ctx
	switch msg := msg.(type) {
	case pageBlobMsg:
		m.status = "reading " + textfmt.Printable(msg.name) + " for the pager…"
		return func() tea.Msg {
			b, err := c.Read(ctx, msg.name, store.MaxBlobBytes)
			if err != nil {
				return pagerReadyMsg{err: err}
			}
			var text strings.Builder
			for _, l := range strings.Split(present.PrettyJSON(b.Body), "\n") {
				text.WriteString(textfmt.Printable(l)) // escaped: never a payload's raw bytes to the terminal, whatever the pager
				text.WriteByte('\n')
			}
			path, err := opfile.Temp("deadletter-view-*.json", []byte(text.String()))
			return pagerReadyMsg{path: path, err: err}
		}
	case pagerReadyMsg:
		if msg.err != nil {
			m.status = m.st.Error.Render("could not page the payload: " + textfmt.Printable(msg.err.Error()))
			return nil
		}
		cmd, _ := opfile.Pager(msg.path)
		return tea.ExecProcess(cmd, func(err error) tea.Msg { return pagerDoneMsg{path: msg.path, err: err} })
	case pagerDoneMsg:
		os.Remove(msg.path)
		m.status = ""
		if msg.err != nil {
			m.status = m.st.Error.Render("the pager: " + textfmt.Printable(msg.err.Error()))
		}
	case saveBlobMsg:
		m.push(newSaveDialog(m.env(), msg.name))
	case editBlobMsg:
		if m.opt.Session.ReadOnly() {
			m.status = m.st.Error.Render("read-only mode (--read-only): edit is off")
			return nil
		}
		m.status = "reading " + textfmt.Printable(msg.name) + " for the editor…"
		return func() tea.Msg {
			b, err := c.Read(ctx, msg.name, store.MaxBlobBytes)
			if err != nil {
				return editReadyMsg{err: err}
			}
			b.Name = msg.name
			path, err := opfile.Temp("deadletter-edit-*.json", b.Body)
			return editReadyMsg{orig: b, path: path, err: err}
		}
	case editReadyMsg:
		if msg.err != nil {
			m.status = m.st.Error.Render("could not edit: " + textfmt.Printable(msg.err.Error()))
			return nil
		}
		cmd, _ := opfile.Editor(msg.path)
		return tea.ExecProcess(cmd, func(err error) tea.Msg { return editDoneMsg{orig: msg.orig, path: msg.path, err: err} })
	case editDoneMsg:
		return m.planEdit(msg)
	case repairPlannedMsg:
		if msg.err != nil {
			m.status = m.st.Error.Render(textfmt.Printable(msg.err.Error()))
			return nil
		}
		m.status = ""
		m.push(newRepairDialog(m.env(), msg.plan, m.estate()))
	case repairDoneMsg:
		return m.repaired(msg)
	}
	return nil
}

// planEdit reads what the editor saved (removing its file) and judges it; an editor that failed writes nothing.
func (m *Model) planEdit(msg editDoneMsg) tea.Cmd {
	c, ctx, cfg, now := m.opt.Session.Container(), m.ctx, m.cfg, m.serviceNow()
	return func() tea.Msg {
		defer os.Remove(msg.path)
		if msg.err != nil {
			return repairPlannedMsg{err: fmt.Errorf("the editor did not finish (%w): nothing was written", msg.err)}
		}
		edited, err := os.ReadFile(msg.path)
		if err != nil {
			return repairPlannedMsg{err: fmt.Errorf("the edit could not be read back (%w): nothing was written", err)}
		}
		rp, err := replay.PlanRepair(ctx, c, cfg, cfg.OriginalOf(msg.orig.BlobInfo, msg.orig.Body, now), edited)
		if err != nil {
			kept, _ := opfile.Keep(msg.orig.Name, edited)
			return repairPlannedMsg{err: fmt.Errorf("could not judge the edit (%w); it is kept in %s", err, kept)}
		}
		return repairPlannedMsg{plan: &rp}
	}
}

// repaired says how the repair went; a repair that landed closes the dialog and opens the new root blob.
func (m *Model) repaired(msg repairDoneMsg) tea.Cmd {
	if msg.err != nil {
		m.status = m.st.Error.Render(textfmt.Printable(msg.err.Error()))
		return nil
	}
	line := strings.Join(present.ResultLinesFor([]rules.Result{msg.r}, false, present.ForceRepairKey), "; ")
	if msg.kept != "" {
		line += "; the edit is kept in " + textfmt.Printable(msg.kept)
	}
	for _, w := range msg.warned {
		line += "; " + textfmt.Printable(w)
	}
	m.pop()
	if !msg.r.Outcome.Done() {
		m.status = m.paint(&m.st.Warn, line)
		return nil
	}
	m.status = line
	d := newDetail(msg.r.Target, m.env(), m.readinessOf)
	m.push(d)
	return tea.Batch(d.load(), m.refresh())
}

// repairDialog shows what the replay will do with an edit beside what it would have done before, and asks.
type repairDialog struct {
	box
	plan   *rules.RepairPlan
	estate string
	force  bool
}

func newRepairDialog(e *env, rp *rules.RepairPlan, estate string) *repairDialog {
	d := &repairDialog{box: newBox(e, ""), plan: rp, estate: estate}
	d.setBody()
	return d
}

func (d *repairDialog) setBody() {
	estate := d.estate
	lines := []string{d.e.st.Header.Render("on " + textfmt.Printable(estate))}
	lines = append(lines, present.RepairLines(d.plan, d.e.cfg, present.ForceRepairKey, false)...)
	if d.force {
		lines = append(lines, "", d.e.st.Warn.Render("f: written although refused"))
	}
	d.body.setLines(lines)
	d.title = present.RepairQuestion(d.plan, estate)
}

func (d *repairDialog) off() string {
	rp := d.plan
	switch {
	case d.e.readOnly:
		return "read-only mode (--read-only): edit is off"
	case rp.Refused() && (rp.Target == "" || !rp.Refusal.Forceable):
		return "refused, even with f: " + present.Reason(rp.Refusal, present.ForceRepairKey)
	case rp.Refused() && !d.force:
		return "refused: press f to write it anyway"
	}
	return ""
}

func (d *repairDialog) Scope() *scope {
	keys := confirmKeys(&d.box, d.confirm, d.off)
	keys[1] = bind([]string{"esc", "n"}, "esc", "cancel (n too): the edit is kept in a file", d.cancel).footer()
	rp := d.plan
	keys = append(keys, bind([]string{"f"}, "f", "force: write it although refused", func() tea.Cmd {
		d.force = !d.force
		d.setBody()
		return nil
	}).footer().when(func() string {
		if !rp.Refused() || rp.Target == "" || !rp.Refusal.Forceable {
			return "nothing to force"
		}
		return ""
	}))
	return &scope{name: "repair?", modal: true, bindings: keys}
}

// cancel closes the question and keeps the edit in a file (an unchanged one is not worth a file).
func (d *repairDialog) cancel() tea.Cmd {
	rp := d.plan
	if rp.Original != nil && rp.Refusal.Kind != rules.ReasonUnchanged {
		if kept, err := opfile.Keep(rp.Original.Name, rp.Body); err == nil {
			d.e.send(statusMsg{text: "nothing written; the edit is kept in " + textfmt.Printable(kept), warn: true})
		}
	}
	return d.e.send(closeMsg{})
}

func (d *repairDialog) confirm() tea.Cmd {
	rp, s, ctx, force := d.plan, d.e.sess, d.e.ctx, d.force
	return func() tea.Msg {
		// Recorded as the command line's edit is (session.Repair): the original with its ETag, then the new blob.
		r, warned, err := s.Repair(ctx, rp, session.Repair{Force: force, Action: record.ActEdit}, session.Run{Via: "dashboard: key e"})
		kept := ""
		if err == nil && !r.Outcome.Done() && rp.Original != nil {
			kept, _ = opfile.Keep(rp.Original.Name, rp.Body)
		}
		return repairDoneMsg{r: r, kept: kept, err: err, warned: warned}
	}
}

func (d *repairDialog) Update(tea.Msg) (component, tea.Cmd) { return d, nil }
func (d *repairDialog) View() string                        { return d.render(nil, d.Scope()) }
func (d *repairDialog) overlay()                            {}

// saveDialog asks where to save a payload's exact bytes (a new file, 0600, never written over).
type saveDialog struct {
	box
	name string
	path textInput
}

func newSaveDialog(e *env, name string) *saveDialog {
	d := &saveDialog{box: newBox(e, "Save the payload to a file"), name: name, path: newTextInput("file: ", 4096)}
	d.path.SetValue(rules.FileOf(name))
	d.path.CursorEnd()
	d.path.Focus()
	d.body.setLines([]string{textfmt.Printable(name), "",
		"Its exact bytes, hostile ones included, go to a new file only you can read (0600); an existing file is never written over."})
	return d
}

func (d *saveDialog) Scope() *scope {
	return &scope{name: "save", modal: true, typing: true, bindings: []binding{
		bind([]string{"enter"}, "enter", "save", d.save).footer(),
		bind([]string{"esc"}, "esc", "cancel", func() tea.Cmd { return d.e.send(closeMsg{}) }).footer(),
		bind([]string{"ctrl+c"}, "ctrl+c", "quit", func() tea.Cmd { return d.e.send(quitMsg{}) }),
	}}
}

func (d *saveDialog) save() tea.Cmd {
	path, name, c, ctx := strings.TrimSpace(d.path.Value()), d.name, d.e.loader.Container, d.e.ctx
	d.e.send(closeMsg{})
	if path == "" {
		return d.e.status("not saved: no file named")
	}
	return func() tea.Msg {
		b, err := c.Read(ctx, name, store.MaxBlobBytes)
		if err == nil {
			err = opfile.WriteNew(path, b.Body)
		}
		if err != nil {
			return statusMsg{text: "not saved: " + textfmt.Printable(err.Error()), warn: true}
		}
		return statusMsg{text: fmt.Sprintf("saved %s (%s) to %s", textfmt.Printable(name), textfmt.Bytes(int64(len(b.Body))), textfmt.Printable(path))}
	}
}

func (d *saveDialog) Update(msg tea.Msg) (component, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		return d, d.path.update(k)
	}
	return d, nil
}

func (d *saveDialog) View() string { return d.render([]string{"", d.path.View()}, d.Scope()) }
func (d *saveDialog) overlay()     {}
