// Command deadletter is the operator's dashboard and command line over an Event Grid dead-letter blob container.
// This package holds flags, environment and wiring only; every rule lives in package replay, every sentence and
// column in internal/present.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/deadletter/deadletter/internal/heap"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay"
)

// Exit codes shared by every command (the README lists them).
const (
	exitOK       = 0
	exitFindings = 1 // check found something; drain/restore/ack failed on a blob
	exitError    = 2 // usage error, or the container could not be read (a check that could not look)
	// exitNotDone: nothing failed, but something asked for was not done — a blob refused, too young, already
	// handled, untriggerable, changed or gone, not found; or the operator answered no at a prompt.
	exitNotDone     = 3
	exitDeclined    = exitNotDone
	exitInterrupted = 130 // a drain or restore stopped by a signal (after its report)
)

func main() {
	heap.Tune() // GOGC and GOMEMLIMIT, when set, win as for any Go program
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		cancel(interrupted{s}) // the first signal stops cleanly: what runs reports what it did
		fmt.Fprintln(os.Stderr, "deadletter: stopping: what is in flight finishes, nothing new starts (a second signal stops at once)")
		<-sigs
		fmt.Fprintln(os.Stderr, "deadletter: second signal: stopping now")
		os.Exit(exitInterrupted)
	}()
	os.Exit(run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}))
}

// interrupted is the cause of a context a signal cancelled.
type interrupted struct{ sig os.Signal }

func (i interrupted) Error() string { return "interrupted by " + i.sig.String() }

// wasInterrupted reports whether ctx ended because of a signal.
func wasInterrupted(ctx context.Context) bool {
	var i interrupted
	return errors.As(context.Cause(ctx), &i)
}

type stdio struct {
	in  io.Reader
	out io.Writer
	err io.Writer
}

// exitCode carries a command's exit status through cobra, which knows only errors.
type exitCode struct {
	code int
	err  error // printed, when set
}

func (e exitCode) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return fmt.Sprintf("exit %d", e.code)
}

func (e exitCode) Unwrap() error { return e.err }

// usageError marks an error as the caller's: exit 2, with a pointer to --help.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// run is the whole program for one command line: tests call it directly.
func run(ctx context.Context, args []string, io stdio) int {
	a := newFactory(io)
	root := a.root()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	for _, f := range []any{a.io.out, a.io.err} {
		if f, ok := f.(*fitWriter); ok {
			f.flush()
		}
	}
	help := "deadletter"
	if cmd != nil {
		help = cmd.CommandPath()
	}
	var ec exitCode
	switch err = exitFor(err); {
	case err == nil:
		return exitOK
	case errors.As(err, &ec):
		if ec.err != nil {
			report(io, ec.err, help)
		}
		return ec.code
	}
	report(io, err, help)
	return exitError
}

// exitFor maps the typed errors of the layers below to the command line's exits (gh's cmdutil does so): what the
// operator gave that cannot be used (an ambiguous name, a file) is a usage error; a repair of a blob whose repair
// the replay has handled since is not done (3). Everything else is as it is (exit 2, or its own exitCode).
func exitFor(err error) error {
	var ambiguous replay.AmbiguousError
	var handled replay.RepairHandledError
	var input session.InputError
	switch {
	case errors.As(err, &ambiguous):
		return usageError{err}
	case errors.As(err, &input):
		return usageError{err}
	case errors.As(err, &handled):
		return exitCode{code: exitNotDone, err: err}
	}
	return err
}

// report prints an error for a person: escaped like every other untrusted text (errors quote blob names and file
// paths) line by line — the lists of candidate names are one per line — with a pointer to help when it was a
// usage error (help is the command whose help to read).
func report(io stdio, err error, help string) {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		lines[i] = textfmt.Printable(strings.ReplaceAll(l, "\t", "  ")) // (Entra ID's errors indent with tabs)
	}
	msg := "deadletter: " + strings.Join(lines, "\n")
	if width, ok := terminalWidth(io.err); ok { // on a terminal, fitted to it like every other word
		var fitted []string
		for _, l := range strings.Split(msg, "\n") {
			fitted = append(fitted, fitLine(l, width))
		}
		msg = strings.Join(fitted, "\n")
	}
	fmt.Fprintln(io.err, msg)
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(io.err, "run '%s --help' for usage\n", help)
	}
}
