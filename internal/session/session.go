// Package session is one estate opened for an operator, under both front ends — gh's cmdutil.Factory, k9s's dao
// under its views: the container with its rules and handler register, Event Grid's witness, the record of actions,
// and the actions themselves. Each action — drain, restore, acknowledge, repair, a rehearsal's script change — is
// one call that runs the replay operation between its intent and its outcome in the record; its preview is a value
// made once (Preview*), which the command line prints and the dashboard's dialog styles. Neither front end calls
// replay's actions or the recorder itself: both make the same calls here and only present what comes back.
//
// The front ends resolve what the operator named (flags, environment, the config file's contexts) into a Spec;
// Open opens it. Errors that decide an exit code are typed (errors.go).
package session

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/opfile"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/internal/twin"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/azureblob"
	"github.com/deadletter/deadletter/store/dirstore"
)

// Spec is an estate as the operator named it, every choice resolved: one container (a directory, a connection
// string or its file, or an account signed in with Entra ID), the rules it is judged by, the register, the
// witness's topics and the shared record.
type Spec struct {
	Dir, ConnectionString, ConnectionStringFile, AccountURL, Container string
	// Rules are the estate's rules without the handler register (Handlers names it).
	Rules rules.Config
	// Handlers is the register's file ("": none, or the register deadletter keeps for a directory it made).
	Handlers string
	ReadOnly bool
	// Timeout bounds each request to Azure (0: none).
	Timeout time.Duration
	// The second witness: Event Grid topics whose subscriptions dead-letter here, the storage system topic the
	// replay subscription is on, and how far back their metrics are read.
	EventGridTopics   []string
	ReplaySystemTopic string
	WitnessWindow     time.Duration
	// FunctionApp is the estate's Function App (its resource ID): its starts are read from the activity log.
	FunctionApp string
	// AuditContainer is the shared record's append-blob container ("": the record is local only).
	AuditContainer string
	// Context is the config file's context the estate was named by ("": none).
	Context string
	// Witness, when set, is the witness to read instead of the one the topics configure (a test's, a twin's
	// simulation run in process).
	Witness rules.Witness
	// RecordDir, when set, keeps the local record there rather than in the operator's state directory (tests).
	RecordDir string
	// Who, when set, is who the record names rather than the OS user and host (tests).
	Who *record.Who
}

// Session is an opened estate.
type Session struct {
	spec    Spec
	loader  *replay.Loader
	witness rules.Witness

	recOnce sync.Once
	rec     *record.Recorder
	recErr  error
}

// Open opens the container the spec names and loads its register. A directory deadletter made a twin of reads
// its service time from the twin's clock; any other reads the local clock, whatever files it holds. A register
// found inside a directory is the container's data and never read.
func Open(spec Spec) (*Session, error) {
	c, err := OpenContainer(&spec)
	if err != nil {
		return nil, err
	}
	cfg, err := Register(spec)
	if err != nil {
		return nil, err
	}
	s := &Session{spec: spec, loader: replay.NewLoader(c, cfg)}
	s.witness = spec.Witness
	if s.witness == nil {
		s.witness = witnessOf(spec)
	}
	return s, nil
}

// Over is a session over a container already open — a test's, a benchmark's, a twin run in process — read by its
// loader l; spec says the rest (read-only, the witness, the record).
func Over(l *replay.Loader, spec Spec) *Session {
	return &Session{spec: spec, loader: l, witness: spec.Witness}
}

// OpenContainer connects to the container the spec names, reading a connection string from its file into the
// spec (the hooks of watch scrub it from what they pass on).
func OpenContainer(spec *Spec) (store.Container, error) {
	if spec.Dir != "" {
		d, err := dirstore.Open(spec.Dir)
		if err != nil {
			return nil, err
		}
		p, err := twin.Find(spec.Dir)
		switch {
		case made.IsNotMade(err):
		case err != nil:
			return nil, err
		default:
			d.UseClockFile(twin.ClockPath(p))
		}
		return d, nil
	}
	if spec.ConnectionStringFile != "" && spec.ConnectionString == "" {
		cs, err := ReadConnectionStringFile(spec.ConnectionStringFile)
		if err != nil {
			return nil, err
		}
		spec.ConnectionString = cs
	}
	return azureblob.Open(azureblob.Options{ConnectionString: spec.ConnectionString, AccountURL: spec.AccountURL, Container: spec.Container, Deadline: spec.Timeout})
}

// Register is the spec's rules with the handler register loaded: its file, or the one deadletter keeps for a
// directory it seeded or made a twin of (internal/made).
func Register(spec Spec) (rules.Config, error) {
	c := spec.Rules
	path, flag := spec.Handlers, "--handlers"
	if path == "" && spec.Dir != "" {
		p, err := made.Find(spec.Dir)
		switch {
		case made.IsNotMade(err):
		case err != nil:
			return c, fmt.Errorf("handler register of %s: %w", textfmt.Printable(spec.Dir), err)
		default:
			if _, err := os.Stat(p.Register()); err == nil {
				path, flag = p.Register(), "the register of "+textfmt.Printable(spec.Dir)
			}
		}
	}
	if path == "" {
		return c, nil
	}
	b, err := opfile.ReadOperatorFile(flag, path)
	if err != nil {
		return c, fmt.Errorf("handler register: %w", err)
	}
	reg, err := rules.ParseRegister(b)
	if err != nil {
		return c, fmt.Errorf("%s: %w", textfmt.Printable(path), err)
	}
	c.Handlers = reg
	return c, nil
}

// Spec is what the session was opened with (its connection string read from its file).
func (s *Session) Spec() Spec { return s.spec }

// Secrets are what the session holds that must never reach a hook or a log: the connection string (read from its
// file when the spec named one), and an account or audit URL that carries a SAS.
func (s *Session) Secrets() []string {
	var out []string
	for _, v := range []string{s.spec.ConnectionString, s.spec.AccountURL, s.spec.AuditContainer} {
		if strings.Contains(strings.ToLower(v), "sig=") || strings.Contains(strings.ToLower(v), "accountkey=") || v == s.spec.ConnectionString && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Loader lists and reads the container.
func (s *Session) Loader() *replay.Loader { return s.loader }

// Container is the estate's container.
func (s *Session) Container() store.Container { return s.loader.Container }

// Config is the estate's rules, its register loaded.
func (s *Session) Config() rules.Config { return s.loader.Config }

// ReadOnly says the session acts on nothing.
func (s *Session) ReadOnly() bool { return s.spec.ReadOnly }

// Witness is Event Grid's witness (nil without one).
func (s *Session) Witness() rules.Witness { return s.witness }

// Rehearsal says the container's clock is a rehearsal twin's.
func (s *Session) Rehearsal() bool { return IsRehearsal(s.loader.Container) }

// Where is the container as deadletter describes it: account/container, or dir:/path.
func (s *Session) Where() string { return s.loader.Container.Describe() }

// Estate names the estate for every question and result: the context and its container, and a rehearsal said.
func (s *Session) Estate() string { return Describe(s.spec.Context, s.loader.Container) }

// Describe names a container for an operator: its context, where it is, and whether it runs on a twin's clock.
func Describe(context string, c interface{ Describe() string }) string {
	out := c.Describe()
	if context != "" {
		out = context + " (" + out + ")"
	}
	if IsRehearsal(c) {
		out += ", a REHEARSAL on its twin's clock"
	}
	return out
}

// IsRehearsal reports whether a container's service time is a rehearsal twin's clock (dirstore.Dir.Rehearsal).
func IsRehearsal(c any) bool {
	r, ok := c.(interface{ Rehearsal() bool })
	return ok && r.Rehearsal()
}

// Now is the container's clock (zero when it cannot be read).
func (s *Session) Now(ctx context.Context) time.Time {
	t, _ := s.loader.Container.Now(context.WithoutCancel(ctx))
	return t
}

// List lists the container once: the start of every command that acts on what it sees.
func (s *Session) List(ctx context.Context) (*rules.Snapshot, error) { return s.loader.List(ctx) }
