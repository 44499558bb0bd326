package present

import (
	"fmt"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
)

// Said is what an action's preview says before it runs, made once and laid out by each front end as its own:
// the command line prints the lines on standard error (a warning as "warning: …", the names and the blobs left
// counted rather than listed — its results list them) and asks the question; the dashboard's dialog makes the
// question its title and styles every line.
type Said struct {
	// Question is what the action asks.
	Question string
	Lines    []Line
	// Asks says there is something to confirm: false when the action would write nothing (each blob is left, and
	// the results say why).
	Asks bool
}

// Line is one line of what a preview says, of a kind a front end lays out.
type Line struct {
	Kind LineKind
	Text string
}

// LineKind is what a line of a preview is.
type LineKind uint8

// The kinds of a preview's lines.
const (
	// LineFact is a fact about what the action will do.
	LineFact LineKind = iota
	// LineWarn warns of what will go wrong (a handler failing, a lingering original).
	LineWarn
	// LineHeading heads a list of names.
	LineHeading
	// LineName is one blob the action writes.
	LineName
	// LineLeft is one blob the action leaves, with why (Text: "name: outcome: reason").
	LineLeft
	// LineNote closes the preview with what holds for every blob (its guarantee).
	LineNote
)

func (s *Said) add(k LineKind, texts ...string) {
	for _, t := range texts {
		s.Lines = append(s.Lines, Line{Kind: k, Text: t})
	}
}

// Texts are the lines of a kind, in order.
func (s Said) Texts(k LineKind) []string {
	var out []string
	for _, l := range s.Lines {
		if l.Kind == k {
			out = append(out, l.Text)
		}
	}
	return out
}

// DrainSaid is what a drain's preview says: what it takes and why stranded, when each subscription it takes last
// dead-lettered and what Event Grid says of it now, the warnings for the handlers that still fail — every one of
// them for the blobs the drain re-uploads, never for ones it leaves — what the replay will then do, the names it
// re-uploads and the blobs it leaves with why (force: how the front end lifts a refusal).
func DrainSaid(cfg rules.Config, p *rules.DrainPlan, wit rules.WitnessReport, force Force) Said {
	f := p.Forecast
	s := Said{Question: DrainQuestion(f, "stranded blob(s)"), Asks: f.Asks()}
	s.Lines = make([]Line, 0, 32+len(f.Names)+len(f.Left)) // (a line a name: a backlog's list is made once, at its size)
	if f.Blobs > 0 {
		s.add(LineFact, fmt.Sprintf("%d blob(s) to drain (stranded: older than the TTL %s, so no trigger can still reach them).", f.Blobs, textfmt.Duration(cfg.TTL)))
	}
	taken := rules.ReadinessOf(p.Readiness, p.Taken)
	if l := LastDeadLetters(taken, p.Now, cfg.TTL); l != "" {
		s.add(LineFact, l)
	}
	subs := make([]string, 0, len(taken))
	for _, r := range taken {
		subs = append(subs, r.Subscription)
	}
	s.add(LineFact, WitnessLines(wit, subs)...)
	s.add(LineWarn, ReadinessWarnings(cfg, p.Taken, taken, p.Now)...)
	s.add(LineWarn, WitnessWarnings(wit, p.Taken)...)
	s.add(LineFact, ForecastLines(f)...)
	if l := AppStartLine(p.AppStart.Counts()); l != "" {
		s.add(LineNote, l)
	}
	if w := AppStartWarning(p.AppStart.Among(p.Items)); w != "" { // of the blobs this drain was given
		s.add(LineWarn, w)
	}
	if len(f.Names) > 0 {
		s.add(LineHeading, fmt.Sprintf("It re-uploads (%d):", len(f.Names)))
		for _, n := range f.Names {
			s.add(LineName, textfmt.Printable(n))
		}
	}
	s.left("It leaves", f.Left, force)
	s.add(LineNote, "Each write is conditional on the ETag read: a blob that changed or vanished is skipped, never resurrected.")
	return s
}

// left lists the blobs an action leaves where they are, each with why.
func (s *Said) left(head string, left []rules.Result, force Force) {
	if len(left) == 0 {
		return
	}
	s.add(LineHeading, fmt.Sprintf("%s (%d):", head, len(left)))
	for _, r := range left {
		s.add(LineLeft, fmt.Sprintf("%s: %s: %s", textfmt.Printable(r.Name), r.Outcome, Reason(r.Reason, force)))
	}
}
