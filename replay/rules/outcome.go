package rules

// Outcome is what an action did to one blob.
type Outcome string

// Outcomes of drain and restore (docs/commands.md), plus handled, notFound and cancelled.
const (
	OutcomeDrained  Outcome = "drained"
	OutcomeRestored Outcome = "restored"
	OutcomeAcked    Outcome = "acked"
	// OutcomeRepaired: an edited payload written as a new root dead letter (and its original retired).
	OutcomeRepaired Outcome = "repaired"
	OutcomeCleared  Outcome = "cleared"
	OutcomeYoung    Outcome = "young"
	OutcomeExcluded Outcome = "excluded"
	// OutcomeHandled: a root blob the replay already handled; draining it would republish its events again.
	OutcomeHandled Outcome = "handled"
	// OutcomeUntriggerable: a root blob whose BlobCreated the replay subscription's filter never delivers: a
	// drain cannot make the replay see it.
	OutcomeUntriggerable Outcome = "untriggerable"
	// OutcomeCrash: a root blob the replay function crashes on (too deep to serialize): a drain only makes it
	// throw again, so it is left unless forced.
	OutcomeCrash   Outcome = "crash"
	OutcomeChanged Outcome = "changed"
	OutcomeGone    Outcome = "gone"
	// OutcomeNotFound: a blob named by the operator that does not exist.
	OutcomeNotFound Outcome = "notFound"
	OutcomeRefused  Outcome = "refused"
	// OutcomeCancelled: a blob the action never touched because it was cancelled first.
	OutcomeCancelled Outcome = "cancelled"
	// OutcomeHeld: a blob a paced or canary drain held back, untouched: its handler fails again, or its canary said
	// nothing (the reason says which); the same drain takes it once the handler recovers.
	OutcomeHeld   Outcome = "held"
	OutcomeFailed Outcome = "failed"
)

// Outcomes lists every outcome in the order reports give them: what was done, what was left and why, failures.
var Outcomes = []Outcome{OutcomeDrained, OutcomeRestored, OutcomeRepaired, OutcomeAcked, OutcomeCleared, OutcomeYoung, OutcomeExcluded,
	OutcomeHandled, OutcomeUntriggerable, OutcomeCrash, OutcomeChanged, OutcomeGone, OutcomeNotFound, OutcomeRefused, OutcomeHeld, OutcomeCancelled, OutcomeFailed}

// Done reports whether the outcome is the action having been carried out.
func (o Outcome) Done() bool {
	return o == OutcomeDrained || o == OutcomeRestored || o == OutcomeRepaired || o == OutcomeAcked || o == OutcomeCleared
}

// Result is one blob's outcome.
type Result struct {
	Name    string
	Outcome Outcome
	// Target is the restored copy's name (a repair's new blob).
	Target string
	// Retired is the original a repair deleted once its new blob had landed.
	Retired string
	// Reason says why a blob failed, was refused or left alone, or warns about what was left (internal/present
	// words it).
	Reason Reason
	// Resume is how many events a restore sets moving again.
	Resume int
	// NewETag is the ETag of what the action wrote, where it knows it without asking (a drain's re-upload): the
	// record's "ETag after" (internal/record asks the container where it is empty).
	NewETag string
}

// Tally counts results per outcome.
type Tally map[Outcome]int

// TallyOf counts a run's results.
func TallyOf(rs []Result) Tally {
	t := Tally{}
	for _, r := range rs {
		t[r.Outcome]++
	}
	return t
}
