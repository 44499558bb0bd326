package session

import (
	"context"
	"fmt"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/azureblob"
)

// Run is how an action runs beyond its plan: what the front end asked it with.
type Run struct {
	// DryRun says what would be done and writes nothing — not even the record.
	DryRun bool
	// Concurrency bounds the blobs handled at once (rules.DefaultConcurrency when ≤ 0).
	Concurrency int
	// Progress is told each blob's result as it finishes (nil: nobody listens).
	Progress func(rules.Result)
	// Via is what asked, as the record names it: the command's words and the names of its flags (never their
	// values), or the dashboard's key.
	Via string
	// Rate paces a drain (blobs a second; 0: unpaced). A paced drain goes out in waves of about ten seconds
	// each, and between two waves asks Event Grid's witness whether a drained subscription's handler fails
	// again: its blobs not yet drained are then left stranded (rules.ReasonHandlerFailing).
	Rate float64
	// Wave is how many blobs a paced drain sends between two looks (0: ten seconds' worth, WaveOf).
	Wave int
	// Say is told, as it goes, what a drain waits for (a canary drain's canaries); nil: nobody listens.
	Say func(string)
}

func (r Run) concurrency() int {
	if r.Concurrency <= 0 {
		return rules.DefaultConcurrency
	}
	return r.Concurrency
}

// Done is what an action did: a result per blob, and what the record could not keep (a shared record that
// refused a line, kept locally; an outcome that could not be written).
type Done struct {
	Results  []rules.Result
	Warnings []string
}

// Who is the operator as the record names them: the OS user and host, and — signed in with Entra ID — the
// principal (known once the first action's record is begun).
func (s *Session) Who() record.Who {
	if rec, _ := s.recorder(); rec != nil {
		return rec.Who
	}
	if s.spec.Who != nil {
		return *s.spec.Who
	}
	return record.DefaultWho()
}

// recorder is the record of this session's actions, made on the first: the local log, and the shared audit
// container when the spec names one. Nil in read-only mode: nothing is acted on.
func (s *Session) recorder() (*record.Recorder, error) {
	s.recOnce.Do(func() {
		if s.spec.ReadOnly {
			return
		}
		local, err := s.localRecord()
		if err != nil {
			s.recErr = NoRecordError{fmt.Errorf("no record can be kept: %w — nothing was done", err)}
			return
		}
		shared, err := s.AuditLog()
		if err != nil {
			s.recErr = err
			return
		}
		who := record.DefaultWho()
		if s.spec.Who != nil {
			who = *s.spec.Who
		} else if ab, ok := s.Container().(*azureblob.Container); ok {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			who.Principal = ab.Principal(ctx) // (signed in with Entra ID: who it is; "" for a key or a SAS)
			cancel()
		}
		s.rec = &record.Recorder{Local: local, Who: who, Estate: s.recordEstate()}
		if shared != nil {
			s.rec.Shared = sharedSink{shared}
		}
	})
	return s.rec, s.recErr
}

// localRecord is the local log: the spec's folder, else the operator's state directory.
func (s *Session) localRecord() (*record.Dir, error) {
	if s.spec.RecordDir != "" {
		return record.OpenDir(s.spec.RecordDir), nil
	}
	return record.LocalDir()
}

// recordEstate is the estate as a record names it.
func (s *Session) recordEstate() record.Estate {
	e := record.EstateOf(s.spec.Context, s.Where())
	if e.Directory != "" {
		if p, err := made.Find(e.Directory); err == nil {
			e.Made = p.ID
		}
	}
	return e
}

// AuditLog is the shared audit container the spec names, nil when none. It is an Azure append-blob container:
// never the dead-letter container itself (a blob at its root is a BlobCreated for the replay), and never for a
// directory estate (a line planted beside its blobs would forge the report).
func (s *Session) AuditLog() (*azureblob.AuditLog, error) {
	name := s.spec.AuditContainer
	if name == "" {
		return nil, nil
	}
	ab, ok := s.Container().(*azureblob.Container)
	if !ok {
		return nil, Inputf("--audit-container: a shared record is an Azure append-blob container; %s is a directory, whose record is kept locally only", s.Where())
	}
	return ab.AuditLog(name)
}

// History reads the estate's record: the local log and the shared one, merged, newest first.
func (s *Session) History(ctx context.Context) (record.History, error) {
	local, err := s.localRecord()
	if err != nil {
		return record.History{}, err
	}
	h := record.History{Local: local.Describe()}
	shared, err := s.AuditLog()
	if err != nil {
		return h, err
	}
	var sinks []record.Sink
	sinks = append(sinks, local)
	if shared != nil {
		sinks = append(sinks, sharedSink{shared})
		h.Shared = shared.Describe()
	}
	h.Records, h.Skipped, err = record.ReadFor(ctx, s.recordEstate(), sinks...)
	return h, err
}

// recorded runs an action between its intent and its outcome in the record: the intent, with the blobs it means
// to take at the ETags shown, before anything is written — one that cannot be written locally stops the action
// (NoRecordError) — then the action, then each blob's outcome. A dry run records nothing.
func (s *Session) recorded(ctx context.Context, action string, run Run, intent []store.BlobInfo, detail string, do func(context.Context) ([]rules.Result, error)) (Done, error) {
	if run.DryRun {
		res, err := do(ctx)
		return Done{Results: res}, err
	}
	if s.spec.ReadOnly {
		return Done{}, ErrReadOnly
	}
	rec, err := s.recorder()
	if err != nil {
		return Done{}, err
	}
	intended := record.Intended(intent)
	act, err := rec.Begin(ctx, action, run.Via, s.Now(ctx), intended, detail)
	if err != nil {
		return Done{}, NoRecordError{err}
	}
	res, err := do(ctx)
	done := Done{Results: res, Warnings: act.Warnings()}
	if eerr := act.End(ctx, s.Now(ctx), record.Outcomes(ctx, s.Container(), intended, res), err); eerr != nil {
		done.Warnings = append(done.Warnings, eerr.Error())
	}
	done.Warnings = append(done.Warnings, act.EndWarnings()...)
	return done, err
}

// RecordScriptChange records a change to a rehearsal's script: change runs between its intent (a local record
// that cannot be written stops it) and its outcome. now is the twin's clock; said is the change in deadletter's
// words (no payload).
func (s *Session) RecordScriptChange(ctx context.Context, via string, now func() time.Time, said string, change func() error) (Done, error) {
	if s.spec.ReadOnly {
		return Done{}, ErrReadOnly
	}
	rec, err := s.recorder()
	if err != nil {
		return Done{}, err
	}
	act, err := rec.Begin(ctx, record.ActTwinScript, via, now(), []record.Blob{}, said)
	if err != nil {
		return Done{}, NoRecordError{err}
	}
	err = change()
	done := Done{Warnings: act.Warnings()}
	if eerr := act.End(ctx, now(), []record.Blob{}, err); eerr != nil {
		done.Warnings = append(done.Warnings, eerr.Error())
	}
	done.Warnings = append(done.Warnings, act.EndWarnings()...)
	return done, err
}

// SharedRecord is the shared audit container as the record's sink: the store knows nothing of records.
func SharedRecord(l *azureblob.AuditLog) record.Sink { return sharedSink{l} }

type sharedSink struct{ *azureblob.AuditLog }

func (s sharedSink) Read(ctx context.Context) ([]record.Source, error) {
	blobs, err := s.ReadAll(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]record.Source, len(blobs))
	for i, b := range blobs {
		out[i] = record.Source{Name: b.Name, Data: b.Data}
		if b.Err != nil {
			out[i].Err = "not read: " + b.Err.Error()
		}
	}
	return out, nil
}
