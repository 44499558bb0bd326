package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
)

// actionFlags are what every command that changes the container takes.
type actionFlags struct {
	dryRun, yes bool
	out         *printFlags
	hasDryRun   bool // the command offers --dry-run
	concurrency int
	// passedBy tells the results an action left on purpose without being asked for them (a drain of every
	// stranded blob passing a crash blob by): said in a note, they do not make the exit 3.
	passedBy func(rules.Result) bool
	// force is how the results tell the operator to lift a refusal (--force on a named blob, by default).
	forceHow present.Force
}

func (f *actionFlags) register(cmd *cobra.Command, dryRun bool) {
	fs := cmd.Flags()
	if dryRun {
		fs.BoolVar(&f.dryRun, "dry-run", false, "say what would happen, change nothing")
		f.hasDryRun = true
	}
	fs.BoolVarP(&f.yes, "yes", "y", false, "do not ask for confirmation (required when not on a terminal)")
	f.out = declareOutput(cmd, outText, outWide, outJSON).fitted()
	fs.IntVar(&f.concurrency, "concurrency", rules.DefaultConcurrency, "blobs handled at once")
}

func (f *actionFlags) validate() error { return positiveInt("concurrency", f.concurrency) }

// errDeclined is the operator saying no at a prompt.
var errDeclined = exitCode{code: exitDeclined, err: errors.New("not confirmed: nothing changed")}

// isTerminal reports whether the command talks to a person who can answer a question.
func (f *factory) isTerminal() bool {
	in, ok := f.io.in.(*os.File)
	return ok && isatty.IsTerminal(in.Fd())
}

// confirm asks on a terminal and returns errDeclined unless the answer is yes; elsewhere it requires --yes.
// The question is the last line of what the operator reads before deciding; it names the estate it writes to
// ("" where it is none: a twin's removal names its directory itself).
func (f *factory) confirm(flags actionFlags, estate, question string) error {
	if flags.yes || flags.dryRun {
		return nil
	}
	if !f.isTerminal() {
		if flags.hasDryRun {
			return usagef("not on a terminal: pass --yes to confirm (or --dry-run to look first)")
		}
		return usagef("not on a terminal: pass --yes to confirm")
	}
	if estate != "" {
		question = "In " + textfmt.Printable(estate) + ": " + question
	}
	fmt.Fprintf(f.io.err, "%s [y/N] ", question)
	if fw, ok := f.io.err.(*fitWriter); ok {
		fw.flush() // the question has no line end: say it before waiting for the answer
	}
	line, _ := bufio.NewReader(f.io.in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return errDeclined
}

// progress prints one updating line on stderr per finished blob, on a terminal.
// pacedProgress is progress that, for a drain paced at rate blobs a second, also says what is left and when it
// will be done (0: unpaced).
func (f *factory) pacedProgress(total int, dryRun bool, rate float64) func(rules.Result) {
	tty, ok := fileOf(f.io.err)
	if !ok || !isatty.IsTerminal(tty.Fd()) {
		return nil
	}
	var mu sync.Mutex
	tally, done := rules.Tally{}, 0
	return func(r rules.Result) {
		mu.Lock()
		defer mu.Unlock()
		done++
		tally[r.Outcome]++
		// What finished is counted by outcome: a blob that changed or was refused is done, not drained.
		line := fmt.Sprintf("%d/%d done: %s", done, total, present.TallyLine(tally, dryRun))
		if left := total - done; rate > 0 {
			eta := time.Duration(float64(left) / rate * float64(time.Second)).Round(time.Second)
			line += fmt.Sprintf(" · %d left, done in about %s (at %s a second)", left, textfmt.Duration(eta), strconv.FormatFloat(rate, 'g', 3, 64))
		}
		fmt.Fprintf(tty, "\r%s\x1b[K", line) // (the file: no line end to wait for)
		if done == total {
			fmt.Fprintln(tty)
		}
	}
}

// progress shows an action's progress on a terminal (nil elsewhere).
func (f *factory) progress(total int, dryRun bool) func(rules.Result) {
	return f.pacedProgress(total, dryRun, 0)
}

// countWhere counts the results that match (none when match is nil).
func countWhere(res []rules.Result, match func(rules.Result) bool) int {
	n := 0
	for _, r := range res {
		if match != nil && match(r) {
			n++
		}
	}
	return n
}

// reportResults prints an action's outcomes on the estate s and decides the exit (the same for drain, restore and
// ack): 0 when every blob asked for was done; 1 when one failed; 3 when none failed but one was not done —
// refused, too young, already handled, untriggerable, changed or gone since it was listed, not found; 130 when a
// signal stopped the run (after the report: what was done is said first).
func (f *factory) reportResults(ctx context.Context, flags actionFlags, s *session.Session, res []rules.Result, ready ...output.ResultsJSON) error {
	tally := rules.TallyOf(res)
	if flags.out.json() {
		out := output.ToResultsJSON(flags.dryRun, res, flags.forceHow)
		out.Estate = output.Text(s.Estate())
		out.Rehearsal = s.Rehearsal()
		for _, r := range ready { // a drain's readiness, both witnesses; a restore's warnings
			out.Readiness, out.EventGrid, out.Warnings, out.AppStart = r.Readiness, r.EventGrid, r.Warnings, r.AppStart
		}
		if err := flags.out.print(f.io.out, out, nil); err != nil {
			return err
		}
	} else {
		for _, line := range present.ResultLinesFor(res, flags.dryRun, flags.forceHow) {
			fmt.Fprintln(f.io.out, line)
		}
		prefix := ""
		if flags.dryRun {
			prefix = "dry run, nothing changed: "
		}
		fmt.Fprintf(f.io.out, "%s%s in %s\n", prefix, present.TallyLine(tally, flags.dryRun), textfmt.Printable(s.Estate()))
		if n := countWhere(res, func(r rules.Result) bool {
			return flags.passedBy != nil && flags.passedBy(r) && r.Outcome == rules.OutcomeCrash
		}); n > 0 {
			fmt.Fprintf(f.io.out, "note: %d blob(s) the replay function crashes on passed by, as every drain of all stranded blobs does (it would throw on them again); repair them, or name one with --force\n", n)
		}
		if n := countWhere(res, func(r rules.Result) bool {
			return flags.passedBy != nil && flags.passedBy(r) && r.Outcome == rules.OutcomeHandled
		}); n > 0 {
			fmt.Fprintf(f.io.out, "note: %d blob(s) the replay already handled passed by, as every drain of all stranded blobs does (their events would go out again); they linger until the lifecycle rule, or name one with --include-handled\n", n)
		}
	}
	switch {
	case wasInterrupted(ctx):
		return exitCode{code: exitInterrupted, err: errors.New("interrupted: blobs not reached were left untouched (cancelled)")}
	case tally[rules.OutcomeFailed] > 0:
		return exitCode{code: exitFindings}
	}
	for _, r := range res {
		if !r.Outcome.Done() && (flags.passedBy == nil || !flags.passedBy(r)) {
			return exitCode{code: exitNotDone}
		}
	}
	return nil
}

// saySaid prints what an action's preview says on stderr, before its question: the facts and the warnings — the
// blobs it takes and leaves are not listed here, since its results list every one.
func (f *factory) saySaid(s present.Said) {
	for _, l := range s.Lines {
		switch l.Kind {
		case present.LineFact, present.LineNote:
			fmt.Fprintln(f.io.err, l.Text)
		case present.LineWarn:
			fmt.Fprintln(f.io.err, "warning: "+l.Text)
		}
	}
}
