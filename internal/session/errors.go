package session

import (
	"errors"
	"fmt"

	"github.com/deadletter/deadletter/replay"
)

// The errors an action returns that decide what a front end does (the command line's exit code: gh's cmdutil
// maps its errors so). Everything else is a failure to say as it is.

// ErrReadOnly is an action asked of a read-only session.
var ErrReadOnly = replay.ErrReadOnly

// InputError is something the operator gave that cannot be used as given — a file, a value, a name: the command
// line says it with a pointer to the command's help (exit 2).
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// Inputf is an InputError.
func Inputf(format string, a ...any) error { return InputError{fmt.Errorf(format, a...)} }

// IsInput reports whether err is the operator's input refused.
func IsInput(err error) bool {
	var ie InputError
	return errors.As(err, &ie)
}

// NoRecordError is an action that did not run because its intent could not be recorded: nothing was written.
type NoRecordError struct{ Err error }

func (e NoRecordError) Error() string { return e.Err.Error() }
func (e NoRecordError) Unwrap() error { return e.Err }
