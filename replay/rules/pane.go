package rules

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

// Triggers reports whether a blob's BlobCreated passes the replay subscription's filter: not under archived/ or
// quarantine/, compared as Event Grid's advanced string filters compare, without case.
func Triggers(name string) bool {
	return !hasPrefixFold(name, ArchivedPrefix) && !hasPrefixFold(name, QuarantinePrefix)
}

// Untriggerable reports whether a root blob's BlobCreated never reaches the replay function. The replay
// subscription excludes the replay's own prefixes with an Event Grid advanced filter (StringNotBeginsWith on the
// subject), and advanced string filters ignore case: ARCHIVED/…, Quarantine/… are filtered out before delivery,
// although the function's own guard — case-sensitive, the rule the panes follow — would take them. Event Grid
// names dead letters after their subscription in capitals, so every dead letter of a subscription named
// "archived" or "quarantine" lands here: no delivery and no drain ever replays it. (docs/estate.md sets the two
// rules side by side.) Blob names from Event Grid are ASCII; the comparison folds ASCII letters only.
func Untriggerable(name string) bool {
	return IsRoot(name) && !Triggers(name)
}

// hasPrefixFold reports whether s starts with p, ASCII letters compared without case.
func hasPrefixFold(s, p string) bool {
	if len(s) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		a, b := s[i], p[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
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
