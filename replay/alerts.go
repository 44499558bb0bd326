package replay

import "time"

// Alerts are the facts about one blob that decide whether it needs a human — answered here once, for the
// table, the detail, ls, show and check alike.
type Alerts struct {
	// DeletesIn is how long until the lifecycle rule deletes the blob (negative once it is overdue: the rule
	// runs daily and may lag).
	DeletesIn time.Duration
	// ExpiresAt is when: Last-Modified plus the retention.
	ExpiresAt time.Time
	// Expiring: a stranded or quarantined blob within Config.ExpiringWithin of deletion — about to be lost.
	Expiring bool
	// Stalled: a live blob past Config.LiveGrace — the replay function is not consuming.
	Stalled bool
	// Handled: a root blob the replay function already handled (its copy exists; only its best-effort delete
	// failed). Draining it would republish its events a second time. HandledBy names the copy.
	Handled   bool
	HandledBy string
	// Malformed and Crash come from the payload once it has been read.
	Malformed bool
	Crash     bool
	// Acked: an operator acknowledged the blob (as it is now, until the ack expires); it raises nothing.
	Acked bool
	Ack   *Ack
}

// Needs reports whether the blob raises any alert at all. An ack silences everything but expiry: data about to be
// lost for good is never hidden.
func (a Alerts) Needs() bool { return a.Expiring || !a.Acked && (a.Stalled || a.Malformed || a.Crash) }

// AlertsOf answers, for one blob at the service time now, everything that makes it urgent or exempt.
func (c Config) AlertsOf(it *Item, now time.Time) Alerts {
	a := Alerts{ExpiresAt: c.ExpiresAt(it.LastModified)}
	a.DeletesIn = a.ExpiresAt.Sub(now)
	if s := it.Summary; s != nil && it.Pane != PaneArchived {
		a.Malformed, a.Crash = s.Malformed, s.CrashDepth > 0 && IsRoot(it.Name)
	}
	if ack, ok := AckOf(it.BlobInfo); ok {
		a.Ack = &ack
		a.Acked = ack.Covers(it.BlobInfo, now)
	}
	if IsRoot(it.Name) {
		a.Handled, a.HandledBy = handled(it)
	}
	switch it.Pane {
	case PaneLive:
		a.Stalled = !a.Handled && now.Sub(it.LastModified) > c.LiveGrace
	case PaneStranded, PaneQuarantine:
		a.Expiring = !a.Handled && a.DeletesIn <= c.ExpiringWithin
	}
	return a
}

// handled reports whether a root blob was handled by the replay and lingers only because its delete failed:
// its archived/ copy exists (it was republished), or its quarantine/ copy exists and — as its own payload shows
// — holds every one of its events (nothing in it is republished, so the quarantine copy is the whole record).
func handled(it *Item) (bool, string) {
	a, q := Twins(it.Name)
	switch {
	case it.ArchivedTwin:
		return true, a
	case it.QuarantineTwin && it.Summary != nil && it.Summary.CrashDepth == 0:
		// (The replay crashes on a blob nested too deep before it writes anything: it never quarantined one.)
		s := it.Summary
		if s.Malformed || s.Verdicts[VerdictReplay] == 0 && s.Verdicts[VerdictUnknown] == 0 {
			return true, q
		}
	}
	return false, ""
}
