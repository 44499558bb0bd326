// Package tui is deadletter's dashboard: Bubble Tea components over the replay package. Every rule it shows or
// runs comes from replay and every sentence from internal/present; this package only lays them out. Update never
// does I/O: listings, reads and actions run in tea.Cmds and come back as messages tagged with a sequence number,
// so a stale reply is dropped.
//
// One contract serves every part (component): SetSize, Update, View and a key scope whose handlers are the
// component's own methods. Components report to the root by messages (component.go lists them). The root (Model)
// routes keys to the focused component, lays the screen out, owns the snapshot and the focus stack — the pane
// view below, the detail, dialogs and help on top — and nothing else.
package tui

import (
	tea "charm.land/bubbletea/v2"
	"github.com/deadletter/deadletter/replay/rules"
)

// component is every part of the dashboard that takes the focus or draws a region: the pane tables, the overview,
// the detail, an event's JSON, each action's dialog, help, the filter bar, and the frame's bars — the header, the
// alert line, the tabs and the footer (bars.go), which draw what the root sends them (frameMsg). The root writes
// no component's field (TestTheRootWritesNoComponentsField) and no View draws outside its SetSize
// (TestEveryViewFitsItsSize).
type component interface {
	// SetSize is the region the component draws: its View is exactly w×h.
	SetSize(w, h int)
	// Update takes what is addressed to the component — the replies of its own commands, and, while its scope is
	// typing, the keys no binding takes — and returns the component (itself, or what replaces it).
	Update(msg tea.Msg) (component, tea.Cmd)
	// View draws the component at its size.
	View() string
	// Scope is its keys as data: what the footer and help list, each bound to one of its methods.
	Scope() *scope
}

// followMsg tells every open component that a listing of the container ended: a screen is a function of the
// latest snapshot (env.snap), so each re-derives what it shows — ages, countdowns, where a blob went — or reads
// again what changed. Components that show nothing of the container ignore it.
type followMsg struct{}

// overlay marks a component drawn as a box over the screen (a dialog) rather than in place of the body.
type overlay interface {
	component
	overlay()
}

// Messages components send the root (env.send posts them; a component never calls the root).
type (
	// openBlobMsg asks for a blob's detail.
	openBlobMsg struct{ name string }
	// closeMsg: the focused component is done (esc, a finished question).
	closeMsg struct{}
	// statusMsg is a line for the status bar (warn paints it as a warning).
	statusMsg struct {
		text string
		warn bool
	}
	// askMsg asks for an action's dialog on these blobs; limit says why it is fewer than the pane holds.
	askMsg struct {
		act   action
		items []rules.Item
		limit string
	}
	// runMsg is a confirmed action: the root replaces its dialog with the run's view.
	runMsg struct{ run *actionRun }
	// viewMsg shows the overview (0) or a pane (1…).
	viewMsg int
	// filterToMsg applies a filter and shows the first pane it leaves rows in (the overview's enter).
	filterToMsg struct{ query string }
	// editFilterMsg focuses the filter bar; clearFilterMsg clears it.
	editFilterMsg  struct{}
	clearFilterMsg struct{}
	// copyMsg puts text on the clipboard; copyBlobMsg a blob's raw JSON.
	copyMsg struct {
		what, text string
	}
	copyBlobMsg struct{ name string }
	// helpMsg opens help; refreshMsg lists the container again; quitMsg quits (after asking, while an action
	// runs).
	helpMsg    struct{}
	refreshMsg struct{}
	quitMsg    struct{}
)

// send posts msg to the root, which takes it before the next key: a request (open the filter, push a dialog) must
// act before the keys typed after it, which a command's reply — delivered later, from a goroutine — would not.
// It returns no command, so a binding can end with it.
func (e *env) send(msg tea.Msg) tea.Cmd {
	e.post(msg)
	return nil
}

// status says text on the status line.
func (e *env) status(text string) tea.Cmd { return e.send(statusMsg{text: text}) }
