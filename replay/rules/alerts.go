package rules

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
	// Untriggerable: a root blob the replay subscription's filter never delivers (see Untriggerable): no trigger
	// and no drain reaches it, so it is neither stranded work nor a stalled replay.
	Untriggerable bool
	// Malformed and Crash come from the payload once it has been read; MayCrash is a warning (see StackDepth).
	Malformed bool
	Crash     bool
	MayCrash  bool
	// Acked: an operator acknowledged the blob (as it is now, until the ack expires): a stranded, quarantined or
	// stalled blob raises nothing. Ack is the ack the tags carry (active, ended or suspicious), Suspicious why it
	// was ignored.
	Acked      bool
	Ack        *Ack
	Suspicious string
}

// Needs reports whether the blob raises any alert at all. An ack silences a stranded, quarantined or stalled blob,
// never expiry (data about to be lost for good) nor a payload the replay can never take (crash, malformed,
// untriggerable): those stay findings, listed as acknowledged.
func (a Alerts) Needs() bool {
	return a.Expiring || a.Malformed || a.Crash || a.Untriggerable || !a.Acked && a.Stalled
}

// AlertsOf answers, for one blob at the service time now, everything that makes it urgent or exempt.
func (c Config) AlertsOf(it *Item, now time.Time) Alerts {
	a := Alerts{ExpiresAt: c.ExpiresAt(it.LastModified)}
	a.DeletesIn = a.ExpiresAt.Sub(now)
	if s := it.Summary; s != nil && it.Pane != PaneArchived {
		a.Malformed, a.Crash = s.Malformed, s.CrashDepth > 0 && IsRoot(it.Name)
		a.MayCrash = s.MayCrash > 0 && IsRoot(it.Name)
	}
	a.Untriggerable = Untriggerable(it.Name)
	if ack, st, why := c.AckOf(it.Info, now); st != AckNone {
		a.Ack, a.Suspicious = &ack, why
		a.Acked = st == AckActive && !c.IgnoreAcks
	}
	if IsRoot(it.Name) {
		a.Handled, a.HandledBy = handled(it)
	}
	switch it.Pane {
	case PaneLive:
		// A blob the replay throws on sits at the root however well the replay runs: it is a crash, not a sign
		// that the replay consumes nothing.
		a.Stalled = !a.Handled && !a.Untriggerable && !a.Crash && now.Sub(it.LastModified) > c.LiveGrace
	case PaneStranded, PaneQuarantine:
		a.Expiring = !a.Handled && a.DeletesIn <= c.ExpiringWithin
	}
	return a
}

// handled reports whether a root blob was handled by the replay and lingers only because its delete failed:
// its archived/ copy exists (it was republished), or its quarantine/ copy exists and — as its own payload shows
// — holds every one of its events (nothing in it is republished, so the quarantine copy is the whole record).
func handled(it *Item) (bool, string) {
	switch {
	case it.ArchivedTwin:
		a, _ := Twins(it.Name) // (named only when there is one: every blob's alerts are asked for, a million at scale)
		return true, a
	case it.QuarantineTwin && it.Summary != nil && it.Summary.CrashDepth == 0:
		// (The replay crashes on a blob nested too deep before it writes anything: it never quarantined one.)
		s := it.Summary
		if s.Malformed || s.Verdicts[VerdictReplay] == 0 && s.Verdicts[VerdictUnknown] == 0 {
			_, q := Twins(it.Name)
			return true, q
		}
	}
	return false, ""
}
