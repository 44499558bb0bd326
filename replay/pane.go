package replay

import (
	"strings"
	"time"
)

// Pane is where a blob belongs, decided from its name and age alone.
type Pane string

// The four panes.
const (
	PaneLive       Pane = "live"
	PaneStranded   Pane = "stranded"
	PaneQuarantine Pane = "quarantine"
	PaneArchived   Pane = "archived"
)

// Panes lists the panes in the order the dashboard shows them: what needs a human first.
var Panes = []Pane{PaneStranded, PaneQuarantine, PaneLive, PaneArchived}

// ParsePane reads a pane's name.
func ParsePane(s string) (Pane, bool) {
	for _, p := range Panes {
		if string(p) == s {
			return p, true
		}
	}
	return "", false
}

// The replay function's own prefixes inside the container: exact and case-sensitive.
const (
	ArchivedPrefix   = "archived/"
	QuarantinePrefix = "quarantine/"
)

// IsRoot reports whether a blob is at the container root as the replay subscription's filter sees it: not one of
// the replay function's own copies.
func IsRoot(name string) bool {
	return !strings.HasPrefix(name, ArchivedPrefix) && !strings.HasPrefix(name, QuarantinePrefix)
}

// Classify puts a blob in its pane.
func (c Config) Classify(name string, age time.Duration) Pane {
	switch {
	case strings.HasPrefix(name, ArchivedPrefix):
		return PaneArchived
	case strings.HasPrefix(name, QuarantinePrefix):
		return PaneQuarantine
	case age >= c.TTL:
		return PaneStranded
	}
	return PaneLive
}
