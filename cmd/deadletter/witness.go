package main

import (
	"context"

	"github.com/deadletter/deadletter/replay/rules"
)

// witnessKey carries a witness in the command's context: one given by whoever runs the command line in process
// (a test, the twin's simulation) beats the one the flags configure.
type witnessKey struct{}

// withWitness gives the command line run with ctx this witness.
func withWitness(ctx context.Context, w rules.Witness) context.Context {
	return context.WithValue(ctx, witnessKey{}, w)
}
