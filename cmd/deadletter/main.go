// Command deadletter is the operator's dashboard and command line over an Event Grid dead-letter blob container.
// This package holds flags, environment and wiring only; every rule lives in package replay.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes shared by every command.
const (
	exitOK       = 0
	exitFindings = 1 // check found something; drain/restore had a failed blob
	exitError    = 2 // usage error, or the container could not be read
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}))
}

type stdio struct {
	in  io.Reader
	out io.Writer
	err io.Writer
}

// errUsage marks an error as the caller's (exit 2 with a hint to --help).
type usageError struct{ error }

func run(ctx context.Context, args []string, io stdio) int {
	g := newGlobals()
	if err := g.fromEnv(); err != nil {
		fmt.Fprintln(io.err, "deadletter:", err)
		return exitError
	}
	cmdName, rest, err := splitCommand(g, args)
	if err != nil {
		return fail(io, err)
	}
	c, ok := commands[cmdName]
	if !ok {
		fmt.Fprintf(io.err, "deadletter: unknown command %q\nrun 'deadletter --help' for usage\n", cmdName)
		return exitError
	}
	fs := g.flagSet(cmdName)
	if c.flags != nil {
		c.flags(fs, g)
	}
	pos, err := parseInterspersed(fs, rest)
	if errors.Is(err, errHelp) {
		fmt.Fprintf(io.out, "usage: deadletter %s\n\n%s\n\nflags:\n", c.usage, c.help)
		fs.SetOutput(io.out)
		fs.PrintDefaults()
		return exitOK
	}
	if err != nil {
		return fail(io, usageError{err})
	}
	if err := g.validate(); err != nil {
		return fail(io, usageError{err})
	}
	code, err := c.run(ctx, g, pos, io)
	if err != nil {
		return fail(io, err)
	}
	return code
}

func fail(io stdio, err error) int {
	fmt.Fprintln(io.err, "deadletter:", err)
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(io.err, "run 'deadletter --help' for usage")
	}
	return exitError
}
