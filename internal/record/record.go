// Package record is the record of what was done to an estate: every action — drain, restore, ack and clear,
// edit and resubmit, a twin's script — appends two JSON lines under one id, its intent before it writes anything
// and its outcome after, saying when (service and wall time), who (OS user and host, the Entra ID principal when
// known), the estate, the command or key that asked, and each blob with its ETag before and after and its
// outcome. A record never holds a payload, a key, a SAS or a token: only names, ETags, outcomes and
// deadletter's own words.
//
// Records are kept by sinks: a log in the operator's state directory (Dir, always), and, when the context names
// one, a shared append-blob container every operator on call writes to (store/azureblob's AuditLog). Reading
// merges them, pairs each intent with its outcome, and calls an intent without one interrupted.
package record

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/deadletter/deadletter/replay/rules"
)

// Version is the version of the record's lines this build writes and reads.
const Version = 1

// Phase is which of a record's two lines a line is.
type Phase string

// The two phases of a record.
const (
	PhaseIntent  Phase = "intent"
	PhaseOutcome Phase = "outcome"
)

// The actions a record names.
const (
	ActDrain       = "drain"
	ActRestore     = "restore"
	ActAck         = "ack"
	ActClear       = "clear"
	ActEdit        = "edit"
	ActResubmit    = "resubmit"
	ActRepair      = "repair"
	ActTwinScript  = "twin-script"
	maxLineBytes   = 4 << 20 // one line (an action over a few thousand blobs)
	maxBlobsOfLine = 20000
	maxParts       = 1 << 20 // (a part per blob of a million-blob action at the very most)
)

// Actions are every action a record can name, in the order the docs list them.
var Actions = []string{ActDrain, ActRestore, ActAck, ActClear, ActEdit, ActResubmit, ActRepair, ActTwinScript}

// Who acted.
type Who struct {
	User string `json:"user"`
	Host string `json:"host"`
	// Principal is the Microsoft Entra ID principal's name or object id, when the estate is reached with one.
	Principal string `json:"principal,omitempty"`
}

// String is who in a few words: user@host, and the principal.
func (w Who) String() string {
	s := w.User + "@" + w.Host
	if w.Principal != "" {
		s += " (" + w.Principal + ")"
	}
	return s
}

// Estate is where an action wrote.
type Estate struct {
	// Context is the context of the config file the command ran in ("" for none).
	Context string `json:"context,omitempty"`
	// Where is the container as deadletter describes it (account/container, or dir:/path): the key records
	// are matched to an estate by.
	Where     string `json:"where"`
	Account   string `json:"account,omitempty"`
	Directory string `json:"directory,omitempty"`
	Container string `json:"container,omitempty"`
	// Made is the id deadletter gave a directory it made (internal/made: a twin, the demo, a seed) when the
	// action ran: its records are that directory's only while the same one is at the path — not a twin started
	// again there, nor a plain directory made after twin rm.
	Made string `json:"made,omitempty"`
}

// Blob is one blob an action took: the ETag it had before, and — in the outcome — the ETag after, the outcome
// and the reason for anything left.
type Blob struct {
	Name string `json:"name"`
	ETag string `json:"etag,omitempty"`
	// Target is the blob the action wrote, where that is another (a restore's copy, a repair's new blob).
	Target    string `json:"target,omitempty"`
	ETagAfter string `json:"etagAfter,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
	// Why is why the blob was left, refused or failed: the reason's code and facts, worded when read.
	Why *Why `json:"why,omitempty"`
	// Reason is an older build's words for it (read, never written: a record keeps codes, not sentences).
	Reason string `json:"reason,omitempty"`
	// Retired is the original a repair deleted.
	Retired string `json:"retired,omitempty"`
}

// Why is a reason as a record keeps it: its code (rules.ReasonKind.Code) and the facts its words need — never the
// words, so rewording a message changes nothing the record holds. A code this build does not know (a newer
// build's) is read and shown as the code.
type Why struct {
	Code string `json:"code"`
	// Name is the other blob concerned.
	Name       string         `json:"name,omitempty"`
	AgeSeconds int64          `json:"ageSeconds,omitempty"`
	TTLSeconds int64          `json:"ttlSeconds,omitempty"`
	Depth      int            `json:"depth,omitempty"`
	Count      int            `json:"count,omitempty"`
	Verdicts   map[string]int `json:"verdicts,omitempty"`
	Err        string         `json:"error,omitempty"`
	Forceable  bool           `json:"forceable,omitempty"`
}

// WhyOf is a reason as a record keeps it (nil for none).
func WhyOf(r rules.Reason) *Why {
	if r.Kind == rules.ReasonNone {
		return nil
	}
	w := &Why{Code: r.Kind.Code(), Name: r.Name, AgeSeconds: int64(r.Age / time.Second), TTLSeconds: int64(r.TTL / time.Second),
		Depth: r.Depth, Count: r.Count, Err: r.Err, Forceable: r.Forceable}
	for _, v := range rules.AllVerdicts {
		if n := r.Verdicts.Of(v); n > 0 {
			if w.Verdicts == nil {
				w.Verdicts = map[string]int{}
			}
			w.Verdicts[v.String()] = n
		}
	}
	return w
}

// Reason is the reason a record kept, to word as any other (false: a code this build does not know).
func (w *Why) Reason() (rules.Reason, bool) {
	k, ok := rules.ReasonKindOf(w.Code)
	if !ok {
		return rules.Reason{}, false
	}
	r := rules.Reason{Kind: k, Name: w.Name, Age: time.Duration(w.AgeSeconds) * time.Second, TTL: time.Duration(w.TTLSeconds) * time.Second,
		Depth: w.Depth, Count: w.Count, Err: w.Err, Forceable: w.Forceable}
	for _, v := range rules.AllVerdicts {
		r.Verdicts[v] = w.Verdicts[v.String()]
	}
	return r, true
}

// Line is one line of a record: its intent or its outcome.
type Line struct {
	V      int    `json:"v"`
	ID     string `json:"id"`
	Phase  Phase  `json:"phase"`
	Action string `json:"action"`
	// Wall is the operator's clock; Service the estate's (the service's, or a twin's) when known.
	Wall    time.Time  `json:"wall"`
	Service *time.Time `json:"serviceTime,omitempty"`
	Who     Who        `json:"who"`
	Estate  Estate     `json:"estate"`
	// Via is the command (its words and the names of the flags given, never their values) or the dashboard's key.
	Via   string `json:"via"`
	Blobs []Blob `json:"blobs"`
	// Detail is deadletter's words about the action as a whole (an ack's length, a twin script's change).
	Detail string `json:"detail,omitempty"`
	// Error is why the action as a whole failed.
	Error string `json:"error,omitempty"`
	// Part and Parts: an action over more blobs than one line holds (maxLineBytes, maxBlobsOfLine) is written as
	// Parts lines of one id and phase, part 1 to Parts, each with its share of the blobs; Read joins them. Zero in
	// a line that is the whole of its phase.
	Part  int `json:"part,omitempty"`
	Parts int `json:"parts,omitempty"`
}

// Sink keeps records: appends one line at a time, whole or not at all, and gives back everything it holds.
type Sink interface {
	Append(ctx context.Context, line []byte) error
	Read(ctx context.Context) ([]Source, error)
	// Describe says where the records are kept.
	Describe() string
}

// Source is one file or blob of records, as read: its bytes, or why they could not be read (Err: it is skipped
// and said, the others read).
type Source struct {
	Name string
	Data []byte
	Err  string
}

// Recorder writes the records of one front end's actions in one estate. A nil Recorder records nothing (read-only
// mode: it acts on nothing).
type Recorder struct {
	Local Sink
	// Shared is the audit container everyone on call writes to (nil: none).
	Shared Sink
	Who    Who
	Estate Estate
	// Warn says a shared record that could not be written (it is kept locally); nil: stderr.
	Warn func(string)
	// Now is the wall clock (time.Now when nil).
	Now func() time.Time

	mu sync.Mutex
	// sharedFailed says a shared append failed during this recorder's life.
	sharedFailed bool
	// flushed says the lines an earlier action left for the shared place were sent (or tried) once.
	flushed bool
}

// DefaultWho is the operator as the machine knows them: the OS user and the host name.
func DefaultWho() Who {
	w := Who{User: os.Getenv("USER"), Host: "?"}
	if u, err := user.Current(); err == nil && u.Username != "" {
		w.User = u.Username
	}
	if w.User == "" {
		w.User = "?"
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		w.Host = h
	}
	return w
}

// Act is a record begun: its intent written, its outcome to come.
type Act struct {
	r    *Recorder
	line Line
	// warned and endWarned say what the shared record could not keep of the intent and of the outcome.
	warned, endWarned []string
}

// Warnings say what the shared record could not keep of the intent (kept locally).
func (a *Act) Warnings() []string {
	if a == nil {
		return nil
	}
	return a.warned
}

// EndWarnings say what the shared record could not keep of the outcome (kept locally).
func (a *Act) EndWarnings() []string {
	if a == nil {
		return nil
	}
	return a.endWarned
}

// ID is the record's id ("" for a nil recorder's).
func (a *Act) ID() string {
	if a == nil {
		return ""
	}
	return a.line.ID
}

func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (r *Recorder) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Begin writes the intent of an action before it writes anything: the blobs it means to take, each with the
// ETag it was shown at. An intent that cannot be written locally is an error: the action must not run unrecorded.
// One the shared place refuses is said (Warn) and kept locally.
func (r *Recorder) Begin(ctx context.Context, action, via string, service time.Time, blobs []Blob, detail string) (*Act, error) {
	if r == nil {
		return nil, nil
	}
	l := Line{V: Version, ID: newID(), Phase: PhaseIntent, Action: action, Wall: r.now().UTC(), Who: r.Who, Estate: r.Estate, Via: via,
		Blobs: blobs, Detail: detail}
	if !service.IsZero() {
		s := service.UTC()
		l.Service = &s
	}
	if l.Blobs == nil {
		l.Blobs = []Blob{}
	}
	warned, written, err := r.writeAll(ctx, l)
	if err != nil {
		if written > 0 {
			// Parts of the intent are in the record: its outcome says there, best effort, that nothing was done.
			o := l
			o.Phase, o.Wall, o.Blobs = PhaseOutcome, r.now().UTC(), []Blob{}
			o.Error = fmt.Sprintf("its intent could not be written whole (%v): nothing was done", err)
			r.writeAll(context.WithoutCancel(ctx), o)
		}
		return nil, fmt.Errorf("cannot write the record (%s): %w — nothing was done", r.Local.Describe(), err)
	}
	return &Act{r: r, line: l, warned: warned}, nil
}

// End writes the outcome: each blob's outcome, ETag after and reason, and the action's error if it failed as a
// whole. A local write that fails now is returned (the action has happened: the caller says so).
func (a *Act) End(ctx context.Context, service time.Time, blobs []Blob, failure error) error {
	if a == nil {
		return nil
	}
	l := a.line
	l.Phase, l.Wall, l.Service, l.Blobs, l.Error = PhaseOutcome, a.r.now().UTC(), nil, blobs, ""
	if !service.IsZero() {
		s := service.UTC()
		l.Service = &s
	}
	if l.Blobs == nil {
		l.Blobs = []Blob{}
	}
	if failure != nil {
		l.Error = failure.Error()
	}
	// The outcome is written even if the action's own context was cancelled: a cancel is an outcome too. One that
	// cannot be written locally says so as what it is: the action ran, and its record reads interrupted.
	warned, _, err := a.r.writeAll(context.WithoutCancel(ctx), l)
	a.endWarned = warned
	if err != nil {
		return fmt.Errorf("the action ran, but its outcome could not be written to the record (%s): %w — the record calls it interrupted; what it did is said above", a.r.Local.Describe(), err)
	}
	return nil
}

// writeAll writes a phase of an action: one line, or — over more blobs than a line holds — its parts, in order.
// The shared place's warnings are said once each.
// It returns how many lines were written locally before any error.
func (r *Recorder) writeAll(ctx context.Context, l Line) (warned []string, written int, err error) {
	parts, err := split(l)
	if err != nil {
		return nil, 0, err
	}
	for _, p := range parts {
		w, err := r.write(ctx, p)
		for _, m := range w {
			if !slices.Contains(warned, m) {
				warned = append(warned, m)
			}
		}
		if err != nil {
			return warned, written, err
		}
		written++
	}
	return warned, written, nil
}

// split cuts a line over more blobs than one line holds into parts of at most maxBlobsOfLine blobs and
// maxLineBytes each (a drain of a million blobs is fifty-odd lines, not one refused). A line that fits is itself.
func split(l Line) ([]Line, error) {
	l.Part, l.Parts = 0, 0
	if len(l.Blobs) <= maxBlobsOfLine {
		if b, err := json.Marshal(l); err != nil || len(b) <= maxLineBytes {
			return []Line{l}, err
		}
	}
	for n := min(len(l.Blobs), maxBlobsOfLine); ; n = max(1, n/2) {
		parts, fits := make([]Line, 0, (len(l.Blobs)+n-1)/n), true
		for c := range slices.Chunk(l.Blobs, n) {
			p := l
			p.Blobs, p.Part = c, len(parts)+1
			parts = append(parts, p)
		}
		for i := range parts {
			parts[i].Parts = len(parts)
			if b, err := json.Marshal(parts[i]); err != nil {
				return nil, err
			} else if len(b) > maxLineBytes {
				fits = false
				break
			}
		}
		if fits {
			return parts, nil
		}
		if n == 1 {
			return nil, fmt.Errorf("the record of this %s is over %d bytes for a single blob", l.Action, maxLineBytes)
		}
	}
}

// write appends a line to the local log, then to the shared one. A local append that fails is the error; a
// shared one that fails is said in what it returns (the line is kept locally).
func (r *Recorder) write(ctx context.Context, l Line) ([]string, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	if len(b) > maxLineBytes {
		return nil, fmt.Errorf("the record of this %s is over %d bytes: act on fewer blobs at once", l.Action, maxLineBytes)
	}
	b = append(b, '\n')
	if r.Local == nil {
		return nil, errors.New("no local record")
	}
	if err := r.Local.Append(ctx, b); err != nil {
		return nil, err
	}
	if r.Shared == nil {
		return nil, nil
	}
	var warned []string
	if err := r.flushPending(ctx); err != nil {
		warned = append(warned, fmt.Sprintf("lines kept for the shared record (%s) could not be sent again: %v", r.Shared.Describe(), err))
	}
	if err := r.Shared.Append(ctx, b); err != nil {
		r.mu.Lock()
		r.sharedFailed = true
		r.mu.Unlock()
		again := "it is sent again with this machine's next action"
		if d, ok := r.Local.(*Dir); !ok || d.pend(r.Shared.Describe(), b) != nil {
			again = "it is not sent again"
		}
		msg := fmt.Sprintf("the shared record (%s) could not be written: %v; kept locally in %s, and %s", r.Shared.Describe(), err, r.Local.Describe(), again)
		if r.Warn != nil {
			r.Warn(msg)
		}
		return append(warned, msg), nil
	}
	return warned, nil
}

// flushPending sends, once a recorder's life, the lines an earlier action could not append to the shared place.
func (r *Recorder) flushPending(ctx context.Context) error {
	r.mu.Lock()
	done := r.flushed
	r.flushed = true
	r.mu.Unlock()
	if d, ok := r.Local.(*Dir); ok && !done {
		return d.flushPending(ctx, r.Shared)
	}
	return nil
}

// SharedFailed reports whether a shared append failed during this recorder's life.
func (r *Recorder) SharedFailed() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sharedFailed
}

// LineError is a record line that is not one deadletter writes: where it is, and why.
type LineError struct {
	Source string
	Line   int
	Why    string
}

func (e *LineError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.Source, e.Why)
	}
	return fmt.Sprintf("%s line %d: %s", e.Source, e.Line, e.Why)
}

// Parse reads a source's lines. A line that is not a record deadletter writes — not JSON, another version, no
// id, an unknown phase, a last line cut short — is skipped and named in what it returns (a hostile, newer or
// truncated log is never taken for records, nor stops the reading of the rest). Empty lines are skipped.
func Parse(src Source) ([]Line, []*LineError) {
	var out []Line
	var bad []*LineError
	data := src.Data
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			bad = append(bad, &LineError{src.Name, n, "cut short (no line end): a write was interrupted, or the file was truncated"})
			break
		}
		raw := data[:i]
		data = data[i+1:]
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		l, why := parseLine(raw)
		if why != "" {
			bad = append(bad, &LineError{src.Name, n, why})
			continue
		}
		out = append(out, l)
	}
	return out, bad
}

func parseLine(raw []byte) (Line, string) {
	var l Line
	if len(raw) > maxLineBytes {
		return l, fmt.Sprintf("over %d bytes", maxLineBytes)
	}
	// A field this build does not know is read past, never kept: a newer deadletter adds fields within a version
	// (estate.made came so), and an operator on an older build must still read the estate's record; a change of
	// meaning raises the version, which is refused. Nothing unknown is shown, so nothing smuggled in is either.
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&l); err != nil {
		return l, "not a record: " + clipErr(err.Error())
	}
	if dec.More() {
		return l, "not a record: more than one value on the line"
	}
	if why := exactKeys(raw); why != "" {
		return l, "not a record: " + why
	}
	if why := invalid(&l); why != "" {
		return l, why
	}
	if cap(l.Blobs) > len(l.Blobs)+len(l.Blobs)/8 {
		// The decoder grew the list by doubling: kept as it is, a part of 20,000 blobs holds room for 32,768, and
		// a million-blob drain's record is read whole.
		l.Blobs = append(make([]Blob, 0, len(l.Blobs)), l.Blobs...)
	}
	return l, ""
}

// invalid says why a decoded line is no record ("" when it is one).
func invalid(l *Line) string {
	switch {
	case l.V != Version:
		return fmt.Sprintf("version %d (this deadletter reads version %d)", l.V, Version)
	case l.ID == "" || len(l.ID) > 64 || !isHex(l.ID):
		return "no record id"
	case l.Phase != PhaseIntent && l.Phase != PhaseOutcome:
		return "no phase (intent or outcome)"
	case l.Action == "" || len(l.Action) > 32:
		return "no action"
	case l.Wall.IsZero():
		return "no time"
	case len(l.Blobs) > maxBlobsOfLine:
		return fmt.Sprintf("over %d blobs", maxBlobsOfLine)
	case l.Part < 0 || l.Parts < 0 || l.Part > l.Parts || (l.Part == 0) != (l.Parts == 0) || l.Parts > maxParts:
		return fmt.Sprintf("part %d of %d is no part of a record", l.Part, l.Parts)
	}
	return ""
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func clipErr(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// Record is one action as read back: its intent, its outcome (nil: interrupted — the intent was written and
// nothing after it), and where it was read from.
type Record struct {
	Intent  Line
	Outcome *Line
	// Shared says the record was read from the shared place (else only from the local log).
	Shared bool
	// IntentGone: its intent line was not read — rotated away, refused by the shared place when it was written,
	// or skipped as unreadable: what it shows of the intent (its time, who, the estate) is its outcome's.
	IntentGone bool
	// PartsMissing counts the lines of an action written in parts (over more blobs than a line holds) that were
	// not read: its blobs are those of the parts read. OutcomePartsMissing are those of its outcome: the action then
	// reads interrupted (what came of the blobs of the missing lines is not known).
	PartsMissing, OutcomePartsMissing int
}

// Interrupted reports whether the action's outcome was never written (killed mid-action, or still running).
func (r Record) Interrupted() bool { return r.Outcome == nil }

// Last is the record's latest line: its outcome, or its intent when interrupted.
func (r Record) Last() Line {
	if r.Outcome != nil {
		return *r.Outcome
	}
	return r.Intent
}

// Read reads every sink given (nil ones skipped), merges their lines — a record written to both is one — and
// pairs intents with outcomes, newest first (by the intent's wall time, then id). A line it cannot read is skipped
// and returned, naming its file and line, as is a file it cannot read; a sink that cannot be listed at all is an
// error naming it.
func Read(ctx context.Context, sinks ...Sink) ([]Record, []*LineError, error) {
	type key struct {
		id    string
		phase Phase
		part  int
	}
	seen := map[key]bool{}
	intents, outcomes := map[string][]Line{}, map[string][]Line{} // each id's lines of the phase: one, or its parts
	shared := map[string]bool{}                                   // the intent is in the shared place too
	sharedOutcome := map[string]bool{}                            // an outcome read from the shared place (its intent may not be)
	var order []string
	var skipped []*LineError
	for si, s := range sinks {
		if s == nil {
			continue
		}
		err := eachSource(ctx, s, func(src Source) error {
			if src.Err != "" {
				skipped = append(skipped, &LineError{Source: src.Name, Why: src.Err})
				return nil
			}
			lines, bad := Parse(src)
			skipped = append(skipped, bad...)
			for _, l := range lines {
				k := key{l.ID, l.Phase, l.Part}
				if si > 0 && l.Phase == PhaseOutcome {
					sharedOutcome[l.ID] = true
				}
				if seen[k] {
					if _, ok := intents[l.ID]; ok && si > 0 {
						shared[l.ID] = true
					}
					continue
				}
				seen[k] = true
				if l.Phase == PhaseOutcome {
					outcomes[l.ID] = append(outcomes[l.ID], l)
					continue
				}
				if _, ok := intents[l.ID]; !ok {
					order = append(order, l.ID)
				}
				intents[l.ID] = append(intents[l.ID], l)
				shared[l.ID] = shared[l.ID] || si > 0
			}
			return nil
		})
		if err != nil {
			return nil, skipped, fmt.Errorf("cannot read the record (%s): %w", s.Describe(), err)
		}
	}
	out := make([]Record, 0, len(order))
	for _, id := range order {
		rec := Record{Shared: shared[id]}
		rec.Intent, rec.PartsMissing = join(intents[id])
		if o, ok := outcomes[id]; ok {
			oc, missing := join(o)
			shareStrings(oc.Blobs, rec.Intent.Blobs)
			rec.Outcome, rec.PartsMissing, rec.OutcomePartsMissing = &oc, rec.PartsMissing+missing, missing
		}
		out = append(out, rec)
	}
	// An outcome whose intent is not held (a rotated-away intent) is still a record: its own intent.
	for id, o := range outcomes {
		if intents[id] == nil {
			oc, missing := join(o)
			in := oc
			in.Phase = PhaseIntent
			out = append(out, Record{Intent: in, Outcome: &oc, IntentGone: true, Shared: sharedOutcome[id], PartsMissing: missing, OutcomePartsMissing: missing})
		}
	}
	slices.SortStableFunc(out, func(a, b Record) int {
		if c := b.Intent.Wall.Compare(a.Intent.Wall); c != 0 {
			return c
		}
		return strings.Compare(b.Intent.ID, a.Intent.ID)
	})
	return out, skipped, nil
}

// shareStrings points an outcome's names and ETags at its intent's equal ones, blob by blob in their common
// order, so a record of a million blobs holds each name once rather than twice.
func shareStrings(out, in []Blob) {
	for i := range min(len(out), len(in)) {
		if out[i].Name == in[i].Name {
			out[i].Name = in[i].Name
		}
		if out[i].ETag == in[i].ETag {
			out[i].ETag = in[i].ETag
		}
	}
}

// SourcesEach is a Sink that can hand its sources over one at a time, so a record of a million-blob drain is
// parsed a file at a time rather than read whole into memory first.
type SourcesEach interface {
	Each(ctx context.Context, visit func(Source) error) error
}

// eachSource visits a sink's sources one at a time: as they are read where the sink can, else all read first.
func eachSource(ctx context.Context, s Sink, visit func(Source) error) error {
	if e, ok := s.(SourcesEach); ok {
		return e.Each(ctx, visit)
	}
	srcs, err := s.Read(ctx)
	if err != nil {
		return err
	}
	for _, src := range srcs {
		if err := visit(src); err != nil {
			return err
		}
	}
	return nil
}

// join makes one line of a phase's lines — itself, or its parts in order, their blobs one list — and counts the
// parts it was not given (rotated away, skipped, or never written: the action says so rather than look whole).
//
// The first line read of the phase says what the phase is: a whole line is the phase (a part beside it is not
// its), and parts count only where they agree with it — the same count, action, who and estate — so a line
// appended under another action's id cannot add blobs to it.
func join(lines []Line) (Line, int) {
	first := lines[0]
	if first.Parts == 0 {
		return first, 0
	}
	var parts []Line
	for _, p := range lines {
		if p.Parts == first.Parts && p.Action == first.Action && p.Who == first.Who && p.Estate == first.Estate {
			parts = append(parts, p)
		}
	}
	slices.SortFunc(parts, func(a, b Line) int { return a.Part - b.Part })
	n := 0
	for _, p := range parts {
		n += len(p.Blobs)
	}
	l := parts[0]
	l.Blobs = make([]Blob, 0, n) // (one allocation: a drain of a million blobs is fifty parts)
	for _, p := range parts {
		l.Blobs = append(l.Blobs, p.Blobs...)
	}
	l.Part, l.Parts = 0, 0
	return l, first.Parts - len(parts)
}

// EstateOf is the estate a record names: the context, and the container as deadletter describes it —
// account/container for Azure, dir:/path for a directory.
func EstateOf(context, where string) Estate {
	e := Estate{Context: context, Where: where}
	if d, ok := strings.CutPrefix(where, "dir:"); ok {
		e.Directory = d
		return e
	}
	if acct, cont, ok := strings.Cut(where, "/"); ok {
		e.Account, e.Container = acct, cont
	}
	return e
}

// blobWire is Blob as a record line holds it. JSON strings hold only UTF-8, and a blob name need not be UTF-8
// (a directory's file names are bytes): such a name is kept exactly in nameBytes (targetBytes, retiredBytes),
// beside its printable form, so the record names the blob that is there rather than one that never was.
type blobWire struct {
	blobFields
	NameBytes    []byte `json:"nameBytes,omitempty"`
	TargetBytes  []byte `json:"targetBytes,omitempty"`
	RetiredBytes []byte `json:"retiredBytes,omitempty"`
}

type blobFields Blob // Blob's fields without its methods

// exact is s's bytes when JSON cannot hold them as they are.
func exact(s string) []byte {
	if utf8.ValidString(s) {
		return nil
	}
	return []byte(s)
}

// MarshalJSON writes a blob with its names kept exactly.
func (b Blob) MarshalJSON() ([]byte, error) {
	return json.Marshal(blobWire{blobFields: blobFields(b), NameBytes: exact(b.Name), TargetBytes: exact(b.Target), RetiredBytes: exact(b.Retired)})
}

// UnmarshalJSON reads a blob, its names as they were (unknown fields read past, as in the whole line).
func (b *Blob) UnmarshalJSON(data []byte) error {
	var w blobWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*b = Blob(w.blobFields)
	for _, f := range []struct {
		raw []byte
		to  *string
	}{{w.NameBytes, &b.Name}, {w.TargetBytes, &b.Target}, {w.RetiredBytes, &b.Retired}} {
		if f.raw != nil {
			*f.to = string(f.raw)
		}
	}
	return nil
}

// knownKeys are the record's field names: Go's decoder matches a key in any case — Unicode's simple folding, so
// "ACTION", and "uſer" with a long s, are read as action and user — exactKeys refuses that.
var knownKeys = func() []string {
	var m []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeFor[Line]().PkgPath() {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous {
				walk(f.Type)
				continue
			}
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.IsExported() && tag != "" && tag != "-" && !slices.Contains(m, tag) {
				m = append(m, tag)
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[Line]())
	walk(reflect.TypeFor[blobWire]())
	return m
}()

// exactKeys says what is wrong with a line's keys, at any depth: one that is a field's name in another case, or a
// key twice in one object (in any case: the decoder would take the last). "" when they are as deadletter writes
// them. Unknown keys are not its concern: they are read past.
func exactKeys(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type frame struct {
		obj, wantKey bool
		seen         []string
	}
	var stack []*frame
	done := func() { // a value ended: its object, if any, wants a key next
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return "" // (the decode before said what is malformed)
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			top := stack[n-1]
			if k, ok := tok.(string); ok {
				for _, exact := range knownKeys {
					if k != exact && strings.EqualFold(k, exact) { // (EqualFold folds as the decoder does)
						return fmt.Sprintf("field %q is not %q", clipErr(k), exact)
					}
				}
				if slices.ContainsFunc(top.seen, func(s string) bool { return strings.EqualFold(s, k) }) {
					return fmt.Sprintf("field %q twice", clipErr(k))
				}
				top.seen, top.wantKey = append(top.seen, k), false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return ""
			}
			done()
		default:
			if len(stack) == 0 {
				return ""
			}
			done()
		}
	}
}
