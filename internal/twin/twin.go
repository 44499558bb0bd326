// Package twin is the rehearsal twin: the estate simulated on a directory container, driven by a clock of its
// own, so every action an operator rehearses shows its consequence. It runs what the estate runs — the
// application topic's subscriptions with Event Grid's retry policy and dead-lettering, the replay trigger's
// BlobCreated subscription with its filter and no dead-letter destination, the replay function itself
// (internal/estate: the plan show predicts), the lifecycle rule — over a script of handlers that fail and
// recover. Every other command works on a twin's directory unchanged: its clock is the directory's service time
// (dirstore.Clock), and whatever they write reaches the twin's trigger as a BlobCreated at the time it was
// written. docs/twin.md sets out its rules.
package twin

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// The twin's files, kept in the operator's state directory beside the record of its directory (internal/made):
// never in the directory, where a planted or copied file could steer it.
const (
	stateFile = "state.json"
	clockFile = "clock.json"
	// snapshotFile lists the blobs the twin held when its rehearsal opened (twin diff's "before"), one JSON
	// object a line.
	snapshotFile = "snapshot.jsonl"
	// stateFormat is the version of state.json: a newer one is refused, never half-read; an older one is
	// upgraded as it is read (format 1 kept no script and no rules: its scenario's and the defaults are taken).
	stateFormat = 3
)

// Event Grid's rules the estate's configuration does not name (docs/twin.md). The time-to-live, the lifecycle
// rule and the replay's cap are the twin's replay.Config (Rules): the same values every other command judges by.
const (
	maxAttempts = 10              // the estate's AzureEventSubscriptionRetryPolicy
	batchWindow = 5 * time.Minute // dead letters of a subscription expiring together share a blob
)

// Rules are the estate's settings a twin runs by, kept in its state so every step uses the values it started
// with: Event Grid's time-to-live (replay.Config.TTL), the lifecycle rule (Retention), the replay's cap and
// id separator.
type Rules struct {
	TTL        time.Duration `json:"ttl"`
	Retention  time.Duration `json:"retention"`
	MaxReplays int           `json:"maxReplays"`
	Separator  string        `json:"separator"`
}

// RulesOf are the rules of a configuration.
func RulesOf(c rules.Config) Rules {
	return Rules{TTL: c.TTL, Retention: c.Retention, MaxReplays: c.MaxReplays, Separator: c.Separator}
}

// apply sets the rules on a configuration.
func (r Rules) apply(c *rules.Config) {
	c.TTL, c.Retention, c.MaxReplays, c.Separator = r.TTL, r.Retention, r.MaxReplays, r.Separator
}

func (r Rules) check() error {
	switch {
	case r.TTL <= 0 || r.TTL > 7*24*time.Hour:
		return fmt.Errorf("rules.ttl %s: want a positive duration of at most 7 days", r.TTL)
	case r.Retention <= 0 || r.Retention > 100*365*24*time.Hour:
		return fmt.Errorf("rules.retention %s: want a positive duration of at most 100 years", r.Retention)
	case r.MaxReplays < 0 || r.MaxReplays > 1000:
		return fmt.Errorf("rules.maxReplays %d: want 0 to 1000", r.MaxReplays)
	case r.Separator == "":
		return fmt.Errorf("rules.separator: empty")
	}
	return nil
}

// backoff is Event Grid's retry schedule: the wait before attempt n+1 (n from 1), then every 12 hours.
var backoff = []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute,
	30 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour}

// event is one application event as Event Grid holds it.
type event struct {
	ID          string          `json:"id"`
	Topic       string          `json:"topic,omitempty"`
	Subject     *string         `json:"subject,omitempty"` // nil: the buggy publisher's event the schema refuses
	EventType   string          `json:"eventType"`
	EventTime   string          `json:"eventTime"`
	Data        json.RawMessage `json:"data"`
	DataVersion string          `json:"dataVersion"`
	Metadata    string          `json:"metadataVersion"`
	Poison      bool            `json:"-"`
}

// deadLetter is an event as Event Grid writes it into the dead-letter blob: the event and its diagnostics.
type deadLetter struct {
	event
	scenario.Diagnostics
}

// pending is one delivery Event Grid still owes: an event to a subscription's handler, or a BlobCreated to the
// replay function. Due is its next attempt (or, Expire, the attempt that would come after its time-to-live ran
// out: it is given up then, untried).
type pending struct {
	Due      time.Time `json:"due"`
	Sub      string    `json:"sub"` // the subscription, or ReplayFunction for a trigger
	Event    *event    `json:"event,omitempty"`
	Poison   bool      `json:"poison,omitempty"`
	Blob     string    `json:"blob,omitempty"` // a trigger's blob
	First    time.Time `json:"first"`          // when Event Grid accepted it: the TTL counts from here
	Attempts int       `json:"attempts"`
	Expire   bool      `json:"expire,omitempty"`
	// last attempt's result, for the dead letter
	Outcome string    `json:"outcome,omitempty"`
	Status  int       `json:"status,omitempty"`
	LastTry time.Time `json:"lastTry,omitempty"`
}

// queue orders what Event Grid owes by when it is due (then by what it is, so a run is deterministic).
type queue []*pending

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if !q[i].Due.Equal(q[j].Due) {
		return q[i].Due.Before(q[j].Due)
	}
	return q[i].key() < q[j].key()
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(*pending)) }
func (q *queue) Pop() any {
	old := *q
	p := old[len(old)-1]
	*q = old[:len(old)-1]
	return p
}

func (p *pending) key() string {
	if p.Event != nil {
		return p.Sub + "\x00" + p.Event.ID
	}
	return p.Sub + "\x00" + p.Blob
}

// Totals count what the twin did (all of its life, or the span one Advance covered).
type Totals struct {
	Published        int `json:"published"`
	Delivered        int `json:"delivered"`
	DeadLettered     int `json:"deadLettered"`     // events written into dead-letter blobs
	DeadLetterBlobs  int `json:"deadLetterBlobs"`  // blobs Event Grid wrote
	Triggers         int `json:"triggers"`         // BlobCreated deliveries the replay function took
	TriggersDropped  int `json:"triggersDropped"`  // BlobCreated events whose hour ran out: their blobs are stranded
	Replayed         int `json:"replayed"`         // blobs the replay function finished
	Republished      int `json:"republished"`      // events it republished
	Quarantined      int `json:"quarantined"`      // events it quarantined
	Archived         int `json:"archived"`         // blobs it archived
	Crashed          int `json:"crashed"`          // runs that threw (a payload nested too deep)
	LifecycleDeleted int `json:"lifecycleDeleted"` // blobs the lifecycle rule deleted
	Lost             int `json:"lost"`             // events gone for good: in a blob the lifecycle rule deleted
	// StartReuploaded are the blobs the Function App's starts re-uploaded (the estate's app-start drain).
	StartReuploaded int `json:"startReuploaded"`
	// RepublishedTwice are the events the replay republished again after a start re-uploaded a blob it had
	// already handled (an archived copy beside it): sent to their handlers a second time.
	RepublishedTwice int `json:"republishedTwice"`
}

func (t Totals) minus(o Totals) Totals {
	return Totals{t.Published - o.Published, t.Delivered - o.Delivered, t.DeadLettered - o.DeadLettered,
		t.DeadLetterBlobs - o.DeadLetterBlobs, t.Triggers - o.Triggers, t.TriggersDropped - o.TriggersDropped,
		t.Replayed - o.Replayed, t.Republished - o.Republished, t.Quarantined - o.Quarantined, t.Archived - o.Archived,
		t.Crashed - o.Crashed, t.LifecycleDeleted - o.LifecycleDeleted, t.Lost - o.Lost,
		t.StartReuploaded - o.StartReuploaded, t.RepublishedTwice - o.RepublishedTwice}
}

// known is what the twin last saw of a blob: to tell another command's write (a BlobCreated it must deliver)
// from its own, and when the lifecycle rule takes it.
type known struct {
	ETag         string    `json:"etag"`
	LastModified time.Time `json:"lastModified"`
}

// Run is one run of the replay function over a blob: what it did.
type Run struct {
	At         time.Time `json:"at"`
	Blob       string    `json:"blob"`
	Published  int       `json:"published"`
	Quarantine string    `json:"quarantine,omitempty"`
	Archived   bool      `json:"archived"`
	Deleted    bool      `json:"deleted"`
	Crashed    bool      `json:"crashed"`
	Missing    bool      `json:"missing"`
}

// State is everything a twin keeps between runs.
type State struct {
	Format   int    `json:"format"`
	Scenario string `json:"scenario"`
	// Source is what a twin started --from copied (a context's name, a directory, an account and container —
	// never a credential); empty for a scenario's twin.
	Source string `json:"source,omitempty"`
	// Script is the script the twin runs, as edited (twin script set): the scenario's at its start, or the one
	// inferred from a source's evidence.
	Script *Script `json:"script,omitempty"`
	// Rules are the settings it runs by (see Rules).
	Rules *Rules    `json:"rules,omitempty"`
	Seed  int64     `json:"seed"`
	Start time.Time `json:"start"` // the script's time zero
	Now   time.Time `json:"now"`
	Draws uint64    `json:"draws"` // random draws so far (the twin's randomness is a function of seed and draw)

	NextPublish map[string]time.Time `json:"nextPublish"`
	NextPoison  int                  `json:"nextPoison"`
	// NextStart is the script's next start not yet run; Starts are the starts run (the newest maxStarts), and
	// StartHandled the blobs a start re-uploaded that the replay had handled, until it replays them again.
	NextStart    int                     `json:"nextStart,omitempty"`
	Starts       []StartRecord           `json:"starts,omitempty"`
	StartHandled map[string]bool         `json:"startHandled,omitempty"`
	Queue        queue                   `json:"queue"`
	Batches      map[string][]deadLetter `json:"batches"` // dead letters waiting for their blob, by subscription
	BatchDue     map[string]time.Time    `json:"batchDue"`
	// LegacyKnown is what a format-2 state kept of every blob (read, never written): from format 3 the blobs the
	// twin knows are kept beside the state, in the known file its KnownSeq names (knownSet).
	LegacyKnown map[string]known `json:"known,omitempty"`
	KnownSeq    int              `json:"knownSeq,omitempty"`
	KnownCount  int              `json:"knownCount"`
	known       *knownSet

	// Outstanding are the events published and neither delivered nor lost: each is on its way or in a blob. Those
	// a twin of a container found in its blobs at its start are kept apart, by hash (baseEvents): BaseEvents of
	// them, BaseGone the bitmap of those no longer outstanding.
	Outstanding map[string]bool `json:"outstanding"`
	// LostIDs are the events (by id, not those of a --from base) the twin counted lost: its ground truth tells a
	// lost event from a delivered one (Truth).
	LostIDs    map[string]bool `json:"lostIds,omitempty"`
	BaseEvents int             `json:"baseEvents,omitempty"`
	BaseGone   bitmap          `json:"baseGone,omitempty"`
	base       *baseEvents

	// OwedCount triggers a start --from owed the replay, due at OwedDue, are kept in owed.bin; OwedNext of them
	// are on the queue already (owedTrigger).
	OwedCount int       `json:"owedCount,omitempty"`
	OwedNext  int       `json:"owedNext,omitempty"`
	OwedDue   time.Time `json:"owedDue,omitzero"`
	owed      []owedTrigger
	Totals    Totals `json:"totals"`
	// Runs are the replay function's recent runs (for the tests' prediction check and twin status).
	Runs []Run `json:"runs"`
	// Acted are the operator's actions the twin took in, by the blob they wrote: each drain and restore, by the run
	// id it stamped (the replay's copies keep no metadata, so twin diff asks here what led a blob where it is).
	Acted map[string][]Act `json:"acted,omitempty"`
	// Violations are the estate's rules the twin saw broken (it never should): a copy retriggering the replay,
	// an event republished past the cap, an original deleted before its copies landed.
	Violations []string `json:"violations"`
	// Metrics are Event Grid's delivery counts per subscription per minute, the last few hours (witness.go).
	Metrics map[string][]Minute `json:"metrics,omitempty"`
	// Probation is, per subscription, its endpoint's consecutive failures and — once they reach
	// probationAfter — until when Event Grid holds its deliveries (probation.go).
	Probation map[string]Probation `json:"probation,omitempty"`
}

// Act is one action of the operator on a blob: a drain or a restore, its run id, when, and (restore) from what.
type Act struct {
	Kind string    `json:"kind"` // drain or restore
	ID   string    `json:"id,omitempty"`
	At   time.Time `json:"at"`
	From string    `json:"from,omitempty"`
}

// String says the action in a few words.
func (a Act) String() string {
	s := a.Kind + " at " + a.At.UTC().Format(time.RFC3339)
	if a.ID != "" {
		s += " (run " + a.ID + ")"
	}
	if a.From != "" {
		s += " from " + a.From
	}
	return s
}

// Acts are the actions the twin took in on a blob (nil: none).
func (tw *Twin) Acts(name string) []Act { return tw.st.Acted[name] }

// maxRuns bounds the runs a twin remembers.
const maxRuns = 1000

// Twin is a twin opened on its directory.
type Twin struct {
	// beforeReplay, when set, is called just before each run of the replay function (tests: what show predicts
	// for the blob at that moment).
	beforeReplay func(ctx context.Context, name string)
	// crashAfter, set by tests only, stops the twin's work (a panic the test recovers, as kill -9 would stop it)
	// once that many of its own writes and deletes have landed: what a kill at that instant leaves.
	crashAfter int

	root     string
	place    *made.Place
	held     *made.Held
	stepping bool    // a step is under way: its mark is on disk (repair.go)
	repaired string  // what opening repaired, said by the commands
	reading  reading // what load reads beside the state (a twin made here has it all)
	dir      *dirstore.Dir
	c        *recorder
	cfg      rules.Config
	script   Script
	st       State
}

// Config is the estate's configuration as a scenario's twin runs it: the replay's defaults and the incident's
// handlers.
func Config() rules.Config {
	cfg := rules.DefaultConfig()
	cfg.Handlers = scenario.IncidentRegister
	return cfg
}

// Config is the configuration the twin runs by: its rules and its register.
func (tw *Twin) Config() rules.Config { return tw.cfg }

// Start creates a twin of a scenario on an empty (or new) directory and runs it from the script's start to where
// the rehearsal opens, which is opensAt on the wall clock: the incident under way. The directory's clock is left
// there, stopped. The twin is recorded in the operator's state directory as kind (made.Twin, or made.Demo for one
// the next demo may clear), its register beside it, and held (Close lets it go).
func Start(ctx context.Context, root string, kind made.Kind, name string, seed int64, opensAt time.Time) (*Twin, error) {
	return StartConfig(ctx, root, kind, name, seed, opensAt, Config())
}

// starter is what a twin's lock says holds it while it starts: the command that made a twin of this kind.
func starter(kind made.Kind) string {
	if kind == made.Demo {
		return "demo"
	}
	return "twin start"
}

// StartConfig is Start with the estate's rules and register of cfg (its TTL, lifecycle rule, cap, separator and
// handlers) in place of the defaults.
func StartConfig(ctx context.Context, root string, kind made.Kind, name string, seed int64, opensAt time.Time, cfg rules.Config) (*Twin, error) {
	script, err := ScriptOf(name)
	if err != nil {
		return nil, err
	}
	rules := RulesOf(cfg)
	if err := rules.check(); err != nil {
		return nil, err
	}
	if p, err := made.Find(root); err == nil && p.Kind.IsTwin() {
		return nil, fmt.Errorf("%s already holds a twin (twin status shows it)", root)
	} else if err != nil && !made.IsNotMade(err) {
		return nil, err
	}
	d, err := dirstore.Create(root)
	if err != nil {
		return nil, err
	}
	if l, err := store.ListAll(ctx, d); err != nil {
		return nil, err
	} else if len(l.Blobs) > 0 {
		return nil, fmt.Errorf("%s is not empty: a twin starts on an empty directory", root)
	}
	place, err := made.Make(root, kind)
	if err != nil {
		return nil, err
	}
	held, err := place.Lock(starter(kind))
	if err != nil {
		return nil, err
	}
	opensAt = opensAt.UTC().Truncate(time.Second)
	start := opensAt.Add(-script.Opens)
	tw := &Twin{root: d.Root(), place: place, held: held, dir: d, cfg: cfg, script: script, st: State{Format: stateFormat,
		Scenario: script.Name, Seed: seed, Start: start, Now: start, Rules: &rules,
		NextPublish: map[string]time.Time{}, Batches: map[string][]deadLetter{}, BatchDue: map[string]time.Time{},
		known: newKnownSet(), Outstanding: map[string]bool{}, Violations: []string{}}}
	tw.c = &recorder{Container: d, tw: tw}
	d.SetClock(func() time.Time { return tw.st.Now })
	for _, s := range script.Subs {
		if s.Rate > 0 {
			tw.st.NextPublish[s.Name] = start.Add(tw.gap(s))
		}
	}
	reg, err := json.MarshalIndent(tw.cfg.Handlers, "", "  ")
	if err == nil {
		err = made.WriteFile(place.Register(), append(reg, '\n'))
	}
	if err == nil {
		_, err = tw.Advance(ctx, opensAt)
	}
	if err == nil {
		err = tw.writeSnapshot(ctx)
	}
	if err != nil {
		held.Unlock()
		return nil, err
	}
	return tw, nil
}

// Find is the record of the twin a directory holds: a *made.NotMade error when deadletter made no twin there
// (whatever files the directory holds).
func Find(root string) (*made.Place, error) {
	p, err := made.Find(root)
	if err != nil {
		return nil, err
	}
	if !p.Kind.IsTwin() {
		return nil, &made.NotMade{Dir: p.Dir, Reason: "holds no twin (deadletter " + string(p.Kind) + " made it)"}
	}
	return p, nil
}

// RulesAt are the rules the twin recorded at p runs by (its state's, or the defaults a format-1 state ran by):
// what every other command on its directory judges by. Only the rules are read, not the rest of the state.
func RulesAt(p *made.Place) (Rules, error) {
	if err := unfinished(p); err != nil {
		return Rules{}, err
	}
	b, err := made.ReadFile(p.File(stateFile))
	if err != nil {
		return Rules{}, fmt.Errorf("the twin of %s: %w", p.Dir, err)
	}
	var st struct {
		Format int    `json:"format"`
		Rules  *Rules `json:"rules"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return Rules{}, fmt.Errorf("the twin of %s: %s: %w", p.Dir, p.File(stateFile), err)
	}
	if st.Format > stateFormat {
		return Rules{}, fmt.Errorf("the twin of %s: format %d: made by a newer deadletter (this one reads %d and older)", p.Dir, st.Format, stateFormat)
	}
	if st.Rules == nil {
		return RulesOf(rules.DefaultConfig()), nil
	}
	if err := st.Rules.check(); err != nil {
		return Rules{}, fmt.Errorf("the twin of %s: %s: %w", p.Dir, p.File(stateFile), err)
	}
	return *st.Rules, nil
}

// unfinished says a twin whose start --from stopped part-way (its copy marker is still there): never a twin to open
// or judge by, and said as such rather than as the state file it does not have yet.
func unfinished(p *made.Place) error {
	from, err := made.ReadFile(p.File(copyingFile))
	if err != nil {
		return nil
	}
	return fmt.Errorf("the twin in %s was never finished: its start --from %s stopped part-way (the same twin start --from resumes it; twin rm removes it)",
		p.Dir, strings.TrimSpace(textfmt.Printable(string(from))))
}

// SourceAt says what the twin recorded at p rehearses: the container it was started --from (its source, as
// described then), or "" and its scenario's name for one that rehearses a scenario. Only those are read.
func SourceAt(p *made.Place) (source, scenario string, err error) {
	b, err := made.ReadFile(p.File(stateFile))
	if err != nil {
		return "", "", err
	}
	var st struct {
		Scenario string `json:"scenario"`
		Source   string `json:"source"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return "", "", err
	}
	return st.Source, st.Scenario, nil
}

// Open opens the twin a directory holds and takes its lock, for what (the command, said to a second process that
// finds it held); Close lets it go. A twin whose last process stopped mid-step is repaired first (Repaired says
// how).
func Open(ctx context.Context, root, what string) (*Twin, error) {
	return openLocked(ctx, root, what, false)
}

// OpenToLook is Open to look only (twin status): what the twin knows of every blob, a million lines for a twin of a
// million blobs, is read only when the twin must be repaired first. It is never saved otherwise.
func OpenToLook(ctx context.Context, root, what string) (*Twin, error) {
	return openLocked(ctx, root, what, true)
}

func openLocked(ctx context.Context, root, what string, look bool) (*Twin, error) {
	tw, err := open(root, peekState)
	if err != nil {
		return nil, err
	}
	if tw.held, err = tw.place.Lock(what); err != nil {
		return nil, err
	}
	tw.reading = readAll
	if _, err := os.Stat(tw.place.File(stepFile)); look && errors.Is(err, fs.ErrNotExist) {
		tw.reading = peekBase
	}
	// Read again under the lock: the holder before may have stepped it since.
	if err := tw.load(); err != nil {
		tw.Close()
		return nil, err
	}
	if err := tw.repairIfStopped(ctx); err != nil {
		tw.Close()
		return nil, fmt.Errorf("repairing the twin of %s: %w", tw.root, err)
	}
	return tw, nil
}

// Peek opens the twin a directory holds without its lock, to look (twin status while a demo runs it).
// What it keeps beside its state that grows with the container — the blobs it knows — is not read: a twin only
// looked at takes no step.
func Peek(root string) (*Twin, error) { return open(root, peekBase) }

// peekLight opens the twin to read its clock, script and metrics only (the witness every command on its
// directory asks): nothing kept beside the state is read.
func peekLight(root string) (*Twin, error) { return open(root, peekState) }

// What opening a twin reads beside its state.
type reading int

const (
	readAll   reading = iota // all: to step and save
	peekBase                 // the state and the events a start --from found (the account needs them)
	peekState                // the state only
)

func open(root string, what reading) (*Twin, error) {
	place, err := Find(root)
	if made.IsNotMade(err) {
		return nil, fmt.Errorf("%w (deadletter twin start --dir %s makes one)", err, root)
	}
	if err != nil {
		return nil, err
	}
	if err := unfinished(place); err != nil {
		return nil, err
	}
	d, err := dirstore.Open(root)
	if err != nil {
		return nil, err
	}
	tw := &Twin{root: d.Root(), place: place, dir: d, reading: what}
	tw.c = &recorder{Container: d, tw: tw}
	d.SetClock(func() time.Time { return tw.st.Now })
	if err := tw.load(); err != nil {
		return nil, err
	}
	return tw, nil
}

// load reads the twin's state, refusing one that is damaged or hostile with the field it found wrong.
func (tw *Twin) load() error {
	for try := 0; ; try++ { // (a twin only peeked at may be saved between its state and its known file: read again)
		err := tw.load1()
		if err == nil || try == 2 || !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
}

func (tw *Twin) load1() error {
	b, err := made.ReadFile(tw.place.File(stateFile))
	if err != nil {
		return fmt.Errorf("the twin of %s: %w", tw.root, err)
	}
	st, script, err := parseState(b)
	if err != nil {
		return fmt.Errorf("the twin of %s: %s: %w", tw.root, tw.place.File(stateFile), err)
	}
	if err := tw.loadBeside(&st, tw.reading); err != nil {
		return fmt.Errorf("the twin of %s: %w", tw.root, err)
	}
	tw.st, tw.script = st, script
	tw.cfg = rules.DefaultConfig()
	st.Rules.apply(&tw.cfg)
	tw.cfg.Handlers = scenario.IncidentRegister
	if b, err := made.ReadFile(tw.place.Register()); err == nil {
		reg, err := rules.ParseRegister(b)
		if err != nil {
			return fmt.Errorf("the twin of %s: %s: %w", tw.root, tw.place.Register(), err)
		}
		tw.cfg.Handlers = reg
	}
	return nil
}

// Close lets the twin's lock go (a no-op for a twin only peeked at).
func (tw *Twin) Close() { tw.held.Unlock() }

// Now is the twin's clock.
func (tw *Twin) Now() time.Time { return tw.st.Now }

// State is the twin as it stands.
func (tw *Twin) State() State { return tw.st }

// Script is the twin's scenario.
func (tw *Twin) Script() Script { return tw.script }

// Place is the twin's record and the folder of its files.
func (tw *Twin) Place() *made.Place { return tw.place }

// save keeps the twin's state and sets its clock to its time, stopped (a running rehearsal sets its own speed:
// see Run). A state too large to read back is refused before anything is written.
func (tw *Twin) save(clock dirstore.Clock) error {
	script, rules := tw.script, RulesOf(tw.cfg)
	tw.st.Script, tw.st.Rules, tw.st.Format = &script, &rules, stateFormat
	// The blobs known go first, under a name of their own (knownFile): the state written after names it, so a
	// stop between the two leaves the state before with the known file it names.
	if tw.st.known == nil {
		return fmt.Errorf("the twin of %s was opened only to look: it is not saved", tw.root)
	}
	if k := tw.st.known; k.dirty || tw.st.KnownSeq == 0 {
		tw.st.KnownSeq++
		tw.st.KnownCount = k.len()
		if err := writeKnown(tw.place.File(knownFile(tw.st.KnownSeq)), k); err != nil {
			return err
		}
		k.dirty = false
		tw.crashPoint()
	}
	b, err := json.Marshal(tw.st)
	if err != nil {
		return err
	}
	if err := made.WriteFile(tw.place.File(stateFile), b); err != nil {
		return err
	}
	tw.crashPoint()
	removeStale(tw.place.File(""), knownFile(tw.st.KnownSeq))
	cb, err := json.Marshal(clock)
	if err != nil {
		return err
	}
	if err := made.WriteFile(tw.place.File(clockFile), cb); err != nil {
		return err
	}
	tw.crashPoint()
	tw.endStep()
	return nil
}

// Advance runs the twin to the time to, as fast as it can, and returns what happened in that span. Whatever
// another command wrote since the last step reaches the trigger first, at the time it was written.
func (tw *Twin) Advance(ctx context.Context, to time.Time) (Totals, error) {
	before := tw.st.Totals
	if err := tw.stepDurably(ctx, to); err != nil {
		return Totals{}, err
	}
	return tw.st.Totals.minus(before), tw.save(dirstore.Clock{At: tw.st.Now, Wall: time.Now()})
}

// stepDurably runs the twin to to with its own writes — Event Grid's dead letters, the replay's copies, hours
// of a rehearsal in a second — left unsynced, then made durable together before the state that counts them is
// saved: a twin start wrote two thousand files, each synced with its folder, and waited seconds on the disk for
// nothing a crash could tell apart (a kill leaves the page cache; the state, synced last, never counts a blob the
// disk may not hold). Where the system cannot flush a file system at once, every write stays synced.
func (tw *Twin) stepDurably(ctx context.Context, to time.Time) error {
	unsynced := tw.dir.SetUnsynced(true)
	err := tw.step(ctx, to)
	if unsynced {
		tw.dir.SetUnsynced(false)
		if ferr := tw.dir.FlushWrites(); err == nil {
			err = ferr
		}
	}
	return err
}

// step runs the twin to to without saving.
func (tw *Twin) step(ctx context.Context, to time.Time) error {
	if to.Before(tw.st.Now) {
		return fmt.Errorf("the twin's clock is at %s: it does not run backwards", tw.st.Now.Format(time.RFC3339))
	}
	if to.After(dirstore.MaxTime) {
		return fmt.Errorf("the twin's clock stops at %d", dirstore.MaxTime.Year())
	}
	if err := tw.beginStep(); err != nil {
		return err
	}
	if err := tw.notice(ctx); err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		at, act := tw.next()
		if act == nil || at.After(to) {
			break
		}
		if at.After(tw.st.Now) {
			tw.st.Now = at
		}
		if err := act(ctx); err != nil {
			return err
		}
	}
	tw.st.Now = to
	return nil
}

// next is the twin's next happening and when: a publish, a delivery or trigger attempt, a dead-letter blob
// written, the lifecycle rule's next deletion.
func (tw *Twin) next() (time.Time, func(context.Context) error) {
	// The earliest happening is chosen by its kind and index first, and only it is made an action: a step of a
	// long simulation allocates one closure, not one per candidate.
	const (
		none = iota
		publish
		poison
		appStart
		attempt
		batch
		expiry
	)
	var at time.Time
	kind, index, batchSub := none, 0, ""
	take := func(t time.Time, k, i int) bool {
		if kind == none || t.Before(at) {
			at, kind, index = t, k, i
			return true
		}
		return false
	}
	for i, s := range tw.script.Subs { // (in the script's order: ties go to the first)
		if t, ok := tw.st.NextPublish[s.Name]; ok {
			take(t, publish, i)
		}
	}
	if tw.st.NextPoison < len(tw.script.Poison) {
		take(tw.st.Start.Add(tw.script.Poison[tw.st.NextPoison].At), poison, tw.st.NextPoison)
	}
	start, starts := tw.nextStart()
	if starts {
		take(tw.st.Start.Add(start.At), appStart, 0)
	}
	tw.materialize()
	if len(tw.st.Queue) > 0 {
		take(tw.st.Queue[0].Due, attempt, 0)
	}
	if len(tw.st.BatchDue) > 0 { // (sorted: ties go to the first name)
		for _, sub := range sortedKeys(tw.st.BatchDue) {
			if take(tw.st.BatchDue[sub], batch, 0) {
				batchSub = sub
			}
		}
	}
	if t, ok := tw.nextExpiry(); ok {
		take(t, expiry, 0)
	}
	switch kind {
	case publish:
		s := tw.script.Subs[index]
		return at, func(context.Context) error { tw.publish(s); return nil }
	case poison:
		p := tw.script.Poison[index]
		return at, func(context.Context) error { tw.poison(p); return nil }
	case appStart:
		return at, func(ctx context.Context) error { return tw.appStart(ctx, start) }
	case attempt:
		return at, func(ctx context.Context) error { return tw.attempt(ctx, heap.Pop(&tw.st.Queue).(*pending)) }
	case batch:
		return at, func(ctx context.Context) error { return tw.writeBatch(ctx, batchSub) }
	case expiry:
		return at, tw.lifecycle
	}
	return at, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// draw is the twin's next random number in [0, 1): a function of its seed and how many it drew, so a run is
// the same every time and across processes.
func (tw *Twin) draw() float64 {
	tw.st.Draws++
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d", tw.st.Seed, tw.st.Draws)
	x := h.Sum64()
	x ^= x >> 33 // (splitmix's finaliser: FNV's low bits alone are poorly mixed)
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return float64(x>>11) / (1 << 53)
}

func (tw *Twin) guid() string {
	var b [16]byte
	for i := 0; i < 16; i += 4 {
		v := uint32(tw.draw() * (1 << 32))
		b[i], b[i+1], b[i+2], b[i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// gap is the wait before a subscription's next event: exponential at its rate.
func (tw *Twin) gap(s Sub) time.Duration {
	u := tw.draw()
	mean := time.Duration(float64(time.Hour) / s.Rate)
	d := time.Duration(-float64(mean) * math.Log1p(-u))
	return max(time.Second, d).Truncate(time.Second)
}

func (tw *Twin) offset() time.Duration { return tw.st.Now.Sub(tw.st.Start) }

// publish sends one event of a subscription to the topic: Event Grid's first delivery is due at once.
func (tw *Twin) publish(s Sub) {
	tw.st.NextPublish[s.Name] = tw.st.Now.Add(tw.gap(s))
	tw.enqueue(s.Name, tw.newEvent(s, nil), false)
}

// poison publishes the buggy publisher's event.
func (tw *Twin) poison(p Poison) {
	tw.st.NextPoison++
	for _, s := range tw.script.Subs {
		if s.Name == p.Sub {
			data := json.RawMessage(nil)
			if p.Kind == "deep" {
				data = scenario.DeepReplies("t-"+tw.guid()[:6], scenario.CrashDepth)
			}
			ev := tw.newEvent(s, data)
			if p.Kind == "schema" {
				ev.Subject = nil // the estate's schema requires it
			}
			tw.enqueue(s.Name, ev, true)
		}
	}
}

func (tw *Twin) newEvent(s Sub, data json.RawMessage) *event {
	id := tw.guid()
	subject := "/" + s.Name + "/" + id[:8]
	if data == nil {
		data = json.RawMessage(fmt.Sprintf(`{"userId":"u-%s","roomId":"r-%s"}`, id[9:13], id[14:18]))
	}
	ev := &event{ID: id, Subject: &subject, EventType: s.EventType, EventTime: tw.st.Now.Format(time.RFC3339), Data: data,
		DataVersion: "1.0", Metadata: "1"}
	if s.System {
		ev.Topic = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/estate/providers/Microsoft.Storage/storageAccounts/estateassets"
		path := "/blobServices/default/containers/message-assets/blobs/" + id[:8] + ".jpg"
		ev.Subject = &path
	}
	return ev
}

// enqueue hands an event to Event Grid: counted as published (a republished one is the same event, on its way
// again), its first delivery due now.
func (tw *Twin) enqueue(sub string, ev *event, poison bool) {
	if tw.markOutstanding(eventKey(ev.ID, tw.cfg.Separator)) {
		tw.st.Totals.Published++
	}
	heap.Push(&tw.st.Queue, &pending{Due: tw.st.Now, Sub: sub, Event: ev, Poison: poison, First: tw.st.Now})
}

// jitter spreads a retry as Event Grid does (±10%), deterministically.
func (tw *Twin) jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.9 + 0.2*tw.draw())).Truncate(time.Second)
}

// attempt makes one delivery attempt (or ends one whose time-to-live ran out).
func (tw *Twin) attempt(ctx context.Context, p *pending) error {
	if !p.Expire {
		p.Attempts++
		ok, status, outcome, err := tw.try(ctx, p)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		p.Status, p.Outcome = status, outcome
		if p.Sub != ReplayFunction && (status == 400 || status == 403 || status == 413) {
			return tw.deadLetter(p, undeliverable(status)) // not retried: dead-lettered at once
		}
		if p.Attempts >= maxAttempts {
			if p.Sub == ReplayFunction {
				tw.countDropped(p.Sub)
			}
			return tw.giveUp(p, "MaxDeliveryAttemptsExceeded")
		}
		wait := backoff[min(p.Attempts-1, len(backoff)-1)]
		next := tw.st.Now.Add(tw.jitter(wait))
		// The time-to-live is checked only when the next attempt comes due: one that falls past it is never
		// made, and the event is given up then, not at the moment its time ran out.
		p.Expire = !next.Before(p.First.Add(tw.cfg.TTL))
		p.Due = next
		heap.Push(&tw.st.Queue, p)
		return nil
	}
	if p.Sub == ReplayFunction {
		tw.countDropped(p.Sub) // no attempt left: Event Grid gives it up
	}
	return tw.giveUp(p, "TimeToLiveExceeded")
}

func undeliverable(status int) string {
	if status == 400 {
		return "UndeliverableDueToHttpBadRequest"
	}
	return "UndeliverableDueToClientError"
}

// giveUp ends a delivery whose attempts or hour ran out: an application event is dead-lettered; a trigger is
// dropped — the replay subscription has no dead-letter destination — and its blob is stranded.
func (tw *Twin) giveUp(p *pending, reason string) error {
	if p.Sub == ReplayFunction {
		tw.st.Totals.TriggersDropped++
		return nil
	}
	return tw.deadLetter(p, reason)
}

// deliver is one attempt: the handler's answer at this time, by the script. A trigger that reaches a running
// replay function runs it.
func (tw *Twin) deliver(ctx context.Context, p *pending) (ok bool, status int, outcome string, err error) {
	if w := tw.script.down(p.Sub, tw.offset()); w != nil {
		return false, w.Status, w.Outcome, nil
	}
	if p.Sub == ReplayFunction {
		return tw.replay(ctx, p.Blob)
	}
	if p.Poison {
		return false, 400, "BadRequest", nil
	}
	tw.settle(eventKey(p.Event.ID, tw.cfg.Separator))
	tw.st.Totals.Delivered++
	return true, 200, "", nil
}

// deadLetter puts an event in its subscription's next dead-letter blob.
func (tw *Twin) deadLetter(p *pending, reason string) error {
	tw.countDeadLettered(p.Sub)
	dl := deadLetter{event: *p.Event, Diagnostics: scenario.Diagnostics{DeadLetterReason: reason, DeliveryAttempts: p.Attempts,
		LastDeliveryOutcome: p.Outcome, LastHTTPStatusCode: p.Status, PublishTime: p.First.Format(time.RFC3339),
		LastDeliveryAttemptTime: p.LastTry.Format(time.RFC3339)}}
	if len(tw.st.Batches[p.Sub]) == 0 {
		tw.st.BatchDue[p.Sub] = tw.st.Now.Add(batchWindow)
	}
	tw.st.Batches[p.Sub] = append(tw.st.Batches[p.Sub], dl)
	return nil
}

// writeBatch writes a subscription's waiting dead letters as Event Grid does: one blob, named after the
// subscription in capitals and the hour it is written, every diagnostic field. Its BlobCreated goes to the
// replay trigger.
func (tw *Twin) writeBatch(ctx context.Context, sub string) error {
	batch := tw.st.Batches[sub]
	delete(tw.st.Batches, sub)
	delete(tw.st.BatchDue, sub)
	body, err := json.Marshal(batch)
	if err != nil {
		return err
	}
	name := rules.DeadLetterName(sub, tw.st.Now, tw.guid())
	if _, err := tw.c.Write(ctx, name, body, store.WriteOptions{ContentType: "application/json", IfNoneMatchAny: true}); err != nil {
		// The same dead letters under the same name already there: a step stopped after writing them and before
		// its state was saved, run again. They landed; take it as written.
		b, rerr := tw.dir.Read(ctx, name, store.MaxBlobBytes)
		if !errors.Is(err, store.ErrAlreadyExists) || rerr != nil || !bytes.Equal(b.Body, body) {
			return fmt.Errorf("twin: Event Grid writing %s: %w", name, err)
		}
		tw.st.known.set(name, b.ETag, b.LastModified)
		tw.created(name, tw.st.Now)
	}
	tw.st.Totals.DeadLettered += len(batch)
	tw.st.Totals.DeadLetterBlobs++
	return nil
}

// created is a BlobCreated: the replay subscription delivers it when its filter lets it through.
func (tw *Twin) created(name string, at time.Time) {
	if !rules.Triggers(name) {
		return
	}
	heap.Push(&tw.st.Queue, &pending{Due: at, Sub: ReplayFunction, Blob: name, First: at})
}

// notice finds what other commands wrote or deleted since the twin last looked: each write is a BlobCreated at
// the time it was written (the directory's clock is the twin's, so Last-Modified says when).
func (tw *Twin) notice(ctx context.Context) error {
	k := tw.st.known
	k.startPass()
	var fresh, relabel []store.BlobInfo
	err := tw.dir.List(ctx, "", func(p store.Page) error { // page by page: a million known blobs are not listed whole
		for _, bi := range p.Blobs {
			k.markSeen(bi.Name)
			switch {
			case k.same(bi.Name, bi.ETag):
			case k.same(bi.Name, dirstore.LegacyETag(bi.ETag)):
				relabel = append(relabel, bi) // known by the ETag an earlier deadletter gave this same version
			default:
				fresh = append(fresh, bi)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, bi := range relabel {
		k.set(bi.Name, bi.ETag, bi.LastModified)
	}
	k.sweep()
	sort.Slice(fresh, func(i, j int) bool {
		if !fresh[i].LastModified.Equal(fresh[j].LastModified) {
			return fresh[i].LastModified.Before(fresh[j].LastModified)
		}
		return fresh[i].Name < fresh[j].Name
	})
	for _, bi := range fresh {
		k.set(bi.Name, bi.ETag, bi.LastModified)
		tw.acted(bi)
		at := bi.LastModified
		if at.Before(tw.st.Now.Add(-tw.cfg.TTL)) {
			at = tw.st.Now // (written while the twin's clock stood further back: delivered now)
		}
		tw.created(bi.Name, maxTime(at, tw.st.Now))
	}
	return nil
}

// acted records the action another command's write was, by what it stamped in the blob's metadata.
func (tw *Twin) acted(bi store.BlobInfo) {
	var a Act
	if id, ok := blob.MetaGet(bi.Metadata, rules.MetaDrainID); ok {
		a = Act{Kind: "drain", ID: id, At: bi.LastModified}
	} else if id, ok := blob.MetaGet(bi.Metadata, rules.MetaRestoreID); ok {
		from, _ := blob.MetaGet(bi.Metadata, rules.MetaRestoredFrom)
		a = Act{Kind: "restore", ID: id, At: bi.LastModified, From: from}
	} else {
		return
	}
	if tw.st.Acted == nil {
		tw.st.Acted = map[string][]Act{}
	}
	tw.st.Acted[bi.Name] = append(tw.st.Acted[bi.Name], a)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// recorder is the container as the twin's own hands write it (Event Grid, the replay function, the lifecycle
// rule): every write is a BlobCreated, and the twin knows it wrote it.
type recorder struct {
	store.Container
	tw *Twin
}

// errCrash is the panic crashAfter raises.
var errCrash = errors.New("twin: stopped here by the test, as kill -9 would")

func (tw *Twin) crashPoint() {
	if tw.crashAfter > 0 {
		if tw.crashAfter--; tw.crashAfter == 0 {
			panic(errCrash)
		}
	}
}

func (r *recorder) Write(ctx context.Context, name string, body []byte, opts store.WriteOptions) (store.BlobInfo, error) {
	bi, err := r.Container.Write(ctx, name, body, opts)
	r.tw.crashPoint()
	if err == nil {
		r.tw.st.known.set(name, bi.ETag, bi.LastModified)
		r.tw.created(name, r.tw.st.Now)
	}
	return bi, err
}

func (r *recorder) Delete(ctx context.Context, name, ifMatch string) error {
	err := r.Container.Delete(ctx, name, ifMatch)
	r.tw.crashPoint()
	if err == nil || errors.Is(err, store.ErrNotFound) {
		r.tw.st.known.del(name)
	}
	return err
}
