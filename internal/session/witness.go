package session

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

// WitnessTimeout bounds one reading of Azure Monitor: the witness is a second opinion, never worth holding up a
// listing, a check or a drain's question for.
const WitnessTimeout = 10 * time.Second

// noWitness is the witness of an estate that names topics but cannot read them: it says why, every time.
type noWitness string

func (n noWitness) Witness(context.Context, time.Time) rules.WitnessReport {
	return rules.WitnessReport{None: string(n)}
}

// witnessOf is the second witness the spec configures: nil when no topic is named. Azure Monitor takes an ARM
// token, which only Entra ID gives: a connection-string (or a directory) estate gets a witness that says so
// rather than one that guesses. A directory that is a twin has its own Event Grid, and its metrics: the twin
// serves them (internal/twin), topics named or not, so every command on a rehearsal reads the broker's word too.
func witnessOf(spec Spec) rules.Witness {
	if spec.Dir != "" {
		if _, err := twin.Find(spec.Dir); err == nil {
			return Bounded(twin.NewDirWitness(spec.Dir, spec.WitnessWindow))
		}
	}
	if len(spec.EventGridTopics) == 0 && spec.ReplaySystemTopic == "" && spec.FunctionApp == "" {
		return nil
	}
	if spec.AccountURL == "" {
		return noWitness("no Event Grid witness: needs Entra ID (--account-url), a connection string gives no token for Azure Monitor")
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return noWitness("no Event Grid witness: no Microsoft Entra ID credential: " + err.Error())
	}
	m, err := azmonitor.New(azmonitor.Options{Topics: spec.EventGridTopics, ReplaySystemTopic: spec.ReplaySystemTopic, Window: spec.WitnessWindow,
		FunctionApp: spec.FunctionApp,
		Credential:  cred, Client: &arm.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: 1}}}})
	if err != nil {
		return noWitness("no Event Grid witness: " + err.Error())
	}
	return Bounded(m)
}

// Bounded gives a witness WitnessTimeout at most.
func Bounded(w rules.Witness) rules.Witness { return boundedWitness{w} }

type boundedWitness struct{ w rules.Witness }

func (b boundedWitness) Witness(ctx context.Context, now time.Time) rules.WitnessReport {
	ctx, cancel := context.WithTimeout(ctx, WitnessTimeout)
	defer cancel()
	return b.w.Witness(ctx, now)
}

// ReadWitness reads the session's witness now (an empty report without one).
func (s *Session) ReadWitness(ctx context.Context, now time.Time) rules.WitnessReport {
	if s.witness == nil {
		return rules.WitnessReport{}
	}
	return s.witness.Witness(ctx, now)
}

// StartWitness reads the session's witness beside whatever the caller does meanwhile (StartWitness).
func (s *Session) StartWitness(ctx context.Context) func() rules.WitnessReport {
	return StartWitness(ctx, s.witness)
}

// StartWitness reads w beside whatever the caller does meanwhile (the listing): the answer is waited for only
// when it is needed, and is bounded (WitnessTimeout), so Azure Monitor never holds the listing up. Without a
// witness the answer is an empty report.
func StartWitness(ctx context.Context, w rules.Witness) func() rules.WitnessReport {
	if w == nil {
		return func() rules.WitnessReport { return rules.WitnessReport{} }
	}
	ch := make(chan rules.WitnessReport, 1)
	go func() { ch <- Bounded(w).Witness(ctx, time.Now()) }()
	var rep rules.WitnessReport
	done := false
	return func() rules.WitnessReport {
		if !done {
			rep, done = <-ch, true
		}
		return rep
	}
}
