package main

import (
	"context"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/deadletter/deadletter/internal/azmonitor"
	"github.com/deadletter/deadletter/internal/twin"
	"github.com/deadletter/deadletter/replay/rules"
)

// witnessTimeout bounds one reading of Azure Monitor: the witness is a second opinion, never worth holding up a
// listing, a check or a drain's question for.
const witnessTimeout = 10 * time.Second

// noWitness is the witness of a context that names topics but cannot read them: it says why, every time.
type noWitness string

func (n noWitness) Witness(context.Context, time.Time) rules.WitnessReport {
	return rules.WitnessReport{None: string(n)}
}

// witness is the second witness the flags configure: nil when no topic is named. Azure Monitor takes an ARM
// token, which only Entra ID gives: a connection-string (or a directory) context gets a witness that says so
// rather than one that guesses. A directory that is a twin has its own Event Grid, and its metrics: the twin
// serves them (internal/twin), topics named or not, so every command on a rehearsal reads the broker's word too.
func (g *globalFlags) witness() rules.Witness {
	if g.dir != "" {
		if _, err := twin.Find(g.dir); err == nil {
			return boundedWitness{twin.NewDirWitness(g.dir, g.witnessWindow)}
		}
	}
	if len(g.eventGridTopics) == 0 && g.replaySystemTopic == "" {
		return nil
	}
	if g.accountURL == "" {
		return noWitness("no Event Grid witness: needs Entra ID (--account-url), a connection string gives no token for Azure Monitor")
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return noWitness("no Event Grid witness: no Microsoft Entra ID credential: " + err.Error())
	}
	m, err := azmonitor.New(azmonitor.Options{Topics: g.eventGridTopics, ReplaySystemTopic: g.replaySystemTopic, Window: g.witnessWindow,
		Credential: cred, Client: &arm.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: 1}}}})
	if err != nil {
		return noWitness("no Event Grid witness: " + err.Error())
	}
	return boundedWitness{m}
}

// boundedWitness gives a witness witnessTimeout at most.
type boundedWitness struct{ w rules.Witness }

func (b boundedWitness) Witness(ctx context.Context, now time.Time) rules.WitnessReport {
	ctx, cancel := context.WithTimeout(ctx, witnessTimeout)
	defer cancel()
	return b.w.Witness(ctx, now)
}

// witnessKey carries a witness in the command's context: one given by whoever runs the command line in process
// (a test, the twin's simulation) beats the one the flags configure.
type witnessKey struct{}

// withWitness gives the command line run with ctx this witness.
func withWitness(ctx context.Context, w rules.Witness) context.Context {
	return context.WithValue(ctx, witnessKey{}, w)
}

// witnessOf is the witness a command reads: the context's, else the flags'.
func (a *app) witnessOf(ctx context.Context) rules.Witness {
	if w, ok := ctx.Value(witnessKey{}).(rules.Witness); ok {
		return w
	}
	return a.g.witness()
}

// readWitness reads the witness when there is one (an empty report when not).
func readWitness(ctx context.Context, w rules.Witness, now time.Time) rules.WitnessReport {
	if w == nil {
		return rules.WitnessReport{}
	}
	return w.Witness(ctx, now)
}

// startWitness reads the witness beside whatever the command does meanwhile (the listing): the answer is waited
// for only when it is needed, and is bounded (witnessTimeout), so Azure Monitor never holds the listing up.
func startWitness(ctx context.Context, w rules.Witness) func() rules.WitnessReport {
	if w == nil {
		return func() rules.WitnessReport { return rules.WitnessReport{} }
	}
	ch := make(chan rules.WitnessReport, 1)
	go func() { ch <- w.Witness(ctx, time.Now()) }()
	var rep rules.WitnessReport
	done := false
	return func() rules.WitnessReport {
		if !done {
			rep, done = <-ch, true
		}
		return rep
	}
}
