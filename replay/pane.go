package replay

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Pane is where a blob belongs, decided from its name and age alone. It is a byte, not a string: every listed
// blob carries one, a million of them at scale.
type Pane uint8

// The four panes (the zero Pane is none).
const (
	PaneLive Pane = iota + 1
	PaneStranded
	PaneQuarantine
	PaneArchived
)

var paneNames = [...]string{"", "live", "stranded", "quarantine", "archived"}

// String is the pane's name: live, stranded, quarantine, archived.
func (p Pane) String() string {
	if int(p) < len(paneNames) {
		return paneNames[p]
	}
	return "pane(" + strconv.Itoa(int(p)) + ")"
}

// MarshalText writes the pane's name (JSON values and map keys).
func (p Pane) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a pane's name.
func (p *Pane) UnmarshalText(b []byte) error {
	q, ok := ParsePane(string(b))
	if !ok {
		return fmt.Errorf("unknown pane %q", b)
	}
	*p = q
	return nil
}

// Panes lists the panes in the order the dashboard shows them: what needs a human first.
var Panes = []Pane{PaneStranded, PaneQuarantine, PaneLive, PaneArchived}

// ParsePane reads a pane's name.
func ParsePane(s string) (Pane, bool) {
	for _, p := range Panes {
		if p.String() == s {
			return p, true
		}
	}
	return 0, false
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
