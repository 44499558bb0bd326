package replay

import (
	"strconv"
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

// ExpiresAt is when the lifecycle rule deletes a blob.
func (c Config) ExpiresAt(lastModified time.Time) time.Time { return lastModified.Add(c.Retention) }

// Stalled reports whether a live blob has sat long enough to mean the replay is not consuming.
func (c Config) Stalled(name string, age time.Duration) bool {
	return c.Classify(name, age) == PaneLive && age > c.LiveGrace
}

// BlobName is the parts of an Event Grid dead-letter blob name: <SUBSCRIPTION>/<Y>/<M>/<D>/<H>/<guid>.json,
// after any archived/ or quarantine/ prefix.
type BlobName struct {
	Subscription string
	// Hour is the UTC hour the blob was written in; zero when the name does not follow the pattern.
	Hour time.Time
}

// ParseBlobName reads the subscription and hour out of a dead-letter blob name. Names that do not follow the
// pattern give their first segment as the subscription and no hour.
func ParseBlobName(name string) BlobName {
	name = strings.TrimPrefix(strings.TrimPrefix(name, ArchivedPrefix), QuarantinePrefix)
	parts := strings.Split(name, "/")
	bn := BlobName{Subscription: parts[0]}
	if len(parts) < 2 {
		bn.Subscription = ""
		return bn
	}
	if len(parts) != 6 {
		return bn
	}
	var n [4]int
	for i := 0; i < 4; i++ {
		v, err := strconv.Atoi(parts[1+i])
		if err != nil || v < 0 {
			return bn
		}
		n[i] = v
	}
	if n[1] < 1 || n[1] > 12 || n[2] < 1 || n[2] > 31 || n[3] > 23 {
		return bn
	}
	bn.Hour = time.Date(n[0], time.Month(n[1]), n[2], n[3], 0, 0, 0, time.UTC)
	return bn
}

// DeadLetterName is the name Event Grid gives a dead-letter blob written at t.
func DeadLetterName(subscription string, t time.Time, guid string) string {
	t = t.UTC()
	return strings.ToUpper(subscription) + "/" + strconv.Itoa(t.Year()) + "/" + strconv.Itoa(int(t.Month())) + "/" +
		strconv.Itoa(t.Day()) + "/" + strconv.Itoa(t.Hour()) + "/" + guid + ".json"
}
