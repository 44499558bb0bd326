package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
)

// viewsDialog lists the saved views (deadletter view add): typing narrows them by name, tab completes the name,
// ↑↓ pick one, enter opens it — its filter on every pane, and its sort on the panes that have its column.
type viewsDialog struct {
	box
	views  []session.View
	name   textInput
	cursor int
}

type (
	// openViewMsg opens a saved view.
	openViewMsg struct{ view session.View }
	// sortSetMsg sorts a table by a column (desc: most first) when it has that column.
	sortSetMsg struct {
		col  string
		desc bool
	}
)

func newViewsDialog(e *env, views []session.View) *viewsDialog {
	d := &viewsDialog{box: newBox(e, "Saved views"), views: views, name: newTextInput("view: ", 64)}
	d.name.Focus()
	d.setLines()
	return d
}

// shown are the views whose name holds what is typed.
func (d *viewsDialog) shown() []session.View {
	typed := strings.ToLower(d.name.Value())
	var out []session.View
	for _, v := range d.views {
		if strings.Contains(strings.ToLower(v.Name), typed) {
			out = append(out, v)
		}
	}
	return out
}

func (d *viewsDialog) setLines() {
	st := d.e.st
	shown := d.shown()
	d.cursor = max(0, min(d.cursor, len(shown)-1))
	lines := []string{st.Dim.Render("Each a filter saved in the config file (deadletter view add NAME --filter QUERY); --view NAME gives the same words to ls, drain, restore, export, ack and log."), ""}
	if len(shown) == 0 {
		lines = append(lines, st.Dim.Render("no view's name holds "+textfmt.Printable(d.name.Value())))
	}
	for i, v := range shown {
		mark := "  "
		if i == d.cursor {
			mark = "▸ "
		}
		scope := ""
		if v.Context != "" {
			scope = "  (" + textfmt.Printable(v.Context) + " only)"
		}
		sort := ""
		if v.Sort != "" {
			sort = "  sort " + textfmt.Printable(v.Sort)
		}
		line := fmt.Sprintf("%s%-20s %s%s%s", mark, textfmt.Printable(v.Name), textfmt.Printable(v.Filter), sort, scope)
		if i == d.cursor {
			line = st.Cursor.Render(textfmt.Truncate(line, d.inner, "…"))
		}
		lines = append(lines, line)
	}
	d.body.setLines(lines)
}

// complete fills in the longest name every shown view begins with.
func (d *viewsDialog) complete() tea.Cmd {
	shown := d.shown()
	if len(shown) == 0 {
		return nil
	}
	prefix := shown[0].Name
	for _, v := range shown[1:] {
		for !strings.HasPrefix(strings.ToLower(v.Name), strings.ToLower(prefix)) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	if len(prefix) > len(d.name.Value()) {
		d.name.SetValue(prefix)
		d.name.CursorEnd()
		d.setLines()
	}
	return nil
}

func (d *viewsDialog) open() tea.Cmd {
	shown := d.shown()
	if len(shown) == 0 {
		return nil
	}
	return d.e.send(openViewMsg{shown[d.cursor]})
}

func (d *viewsDialog) move(by int) func() tea.Cmd {
	return func() tea.Cmd {
		d.cursor += by
		d.setLines()
		return nil
	}
}

func (d *viewsDialog) Scope() *scope {
	return &scope{name: "saved views", modal: true, typing: true, bindings: []binding{
		bind([]string{"enter"}, "enter", "open the view", d.open).footer(),
		bind([]string{"tab"}, "tab", "complete the name", d.complete).footer(),
		bind([]string{"up"}, "↑", "up", d.move(-1)).footer(),
		bind([]string{"down"}, "↓", "down", d.move(1)).footer(),
		bind([]string{"esc"}, "esc", "close", func() tea.Cmd { return d.e.send(closeMsg{}) }).footer(),
		bind([]string{"ctrl+c"}, "ctrl+c", "quit", func() tea.Cmd { return d.e.send(quitMsg{}) }),
	}}
}

// Update implements component: what is typed narrows the list.
func (d *viewsDialog) Update(msg tea.Msg) (component, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		cmd := d.name.update(k)
		d.cursor = 0
		d.setLines()
		return d, cmd
	}
	return d, nil
}

// SetSize implements component: the lines are cut to the box's width.
func (d *viewsDialog) SetSize(w, h int) {
	d.box.SetSize(w, h)
	d.setLines()
}

func (d *viewsDialog) View() string { return d.render([]string{"", d.name.View()}, d.Scope()) }
func (d *viewsDialog) overlay()     {}

// sortOf reads a view's sort ("size desc") into a column and a direction; a column alone takes the way the
// dashboard sorts it (most first for ages, counts and attempts).
func sortOf(s string) (string, bool) {
	col, dir, _ := strings.Cut(strings.TrimSpace(s), " ")
	for _, c := range tableColumns {
		if strings.EqualFold(c.ID, col) {
			col = c.ID
		}
	}
	switch strings.TrimSpace(dir) {
	case "asc":
		return col, false
	case "desc":
		return col, true
	}
	return col, col == "age" || col == "events" || col == "attempt"
}

// setSort sorts the table by col when it has that column (a sortable one).
func (t *table) setSort(col string, desc bool) {
	for _, c := range tableColumns {
		if c.ID == col && c.Less != nil {
			t.sortBy, t.desc = col, desc
			t.resort(t.match)
			return
		}
	}
}
