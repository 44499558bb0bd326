package record

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// ctxSink is a shared record that refuses a write whose context has ended — as the Azure SDK does: a request
// under a cancelled context is never sent.
type ctxSink struct{ memorySink }

func (c *ctxSink) Append(ctx context.Context, line []byte) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return c.memorySink.Append(ctx, line)
}

// Ctrl-C during an action cancels its context; the outcome written after must still reach the shared record, or
// every other operator reads the action as interrupted for ever.
func TestTheOutcomeReachesTheSharedRecordAfterCtrlC(t *testing.T) {
	t.Parallel()
	shared := &ctxSink{}
	r := &Recorder{Local: OpenDir(filepath.Join(t.TempDir(), "record")), Shared: shared, Who: Who{User: "u", Host: "h"}, Warn: func(string) {}}
	ctx, cancel := context.WithCancel(context.Background())
	act, err := r.Begin(ctx, ActDrain, "x", time.Time{}, []Blob{{Name: "S/a.json", ETag: `"1"`}}, "")
	if err != nil {
		t.Fatal(err)
	}
	cancel() // Ctrl-C
	if err := act.End(ctx, time.Time{}, []Blob{{Name: "S/a.json", ETag: `"1"`, Outcome: "cancelled"}}, context.Canceled); err != nil {
		t.Fatal(err)
	}
	recs, _, _ := Read(context.Background(), shared)
	if len(recs) != 1 || recs[0].Interrupted() {
		t.Fatalf("the shared record after Ctrl-C: %+v", recs)
	}
}

// A record is shared when it was read from the shared place, and only then: the local log's own copy of an action
// whose lines reached the audit container is shared; one that never reached it is not.
func TestARecordIsSharedOnlyWhenTheSharedPlaceHoldsIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := OpenDir(filepath.Join(t.TempDir(), "record"))
	shared := &memorySink{}
	r := &Recorder{Local: d, Shared: shared, Who: Who{User: "u", Host: "h"}, Warn: func(string) {}}
	act, err := r.Begin(ctx, ActDrain, "sent", time.Time{}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	act.End(ctx, time.Time{}, nil, nil)
	shared.down = true
	if _, err := r.Begin(ctx, ActAck, "kept locally", time.Time{}, nil, ""); err != nil {
		t.Fatal(err)
	}
	shared.down = false
	recs, _, _ := Read(ctx, d)
	for _, rec := range recs {
		if rec.Shared {
			t.Fatalf("read from the local log alone, %s is said shared", rec.Intent.Via)
		}
	}
	recs, _, _ = Read(ctx, d, shared)
	got := map[string]bool{}
	for _, rec := range recs {
		got[rec.Intent.Via] = rec.Shared
	}
	if len(got) != 2 || !got["sent"] || got["kept locally"] {
		t.Fatalf("shared: %v", got)
	}
}

// An outcome whose intent was rotated away (a log read past its oldest file) is still a record: finished, its
// blobs told — and it says its intent is gone rather than pass the outcome's time off as the intent's.
func TestAnOutcomeWhoseIntentIsGoneIsStillARecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shared := &memorySink{}
	r := &Recorder{Local: OpenDir(filepath.Join(t.TempDir(), "record")), Shared: shared, Who: Who{User: "u", Host: "h"}, Warn: func(string) {}}
	act, err := r.Begin(ctx, ActDrain, "x", time.Time{}, []Blob{{Name: "S/a.json", ETag: `"1"`}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := act.End(ctx, time.Time{}, []Blob{{Name: "S/a.json", ETag: `"1"`, ETagAfter: `"2"`, Outcome: "drained"}}, nil); err != nil {
		t.Fatal(err)
	}
	if len(shared.lines) != 2 {
		t.Fatalf("%d lines", len(shared.lines))
	}
	shared.lines = shared.lines[1:] // the intent rotated away
	recs, bad, err := Read(ctx, shared)
	if err != nil || len(bad) > 0 {
		t.Fatal(errors.Join(err, errors.New(fmtErrs(bad))))
	}
	if len(recs) != 1 || recs[0].Interrupted() || !recs[0].IntentGone || recs[0].Intent.Action != ActDrain || recs[0].Shared ||
		len(recs[0].Outcome.Blobs) != 1 || recs[0].Outcome.Blobs[0].Outcome != "drained" {
		t.Fatalf("%+v", recs)
	}
	// Read beside an (empty) local log, the outcome comes from the shared place: the record is shared.
	recs, _, _ = Read(ctx, OpenDir(filepath.Join(t.TempDir(), "empty")), shared)
	if len(recs) != 1 || !recs[0].Shared || !recs[0].IntentGone {
		t.Fatalf("an outcome read from the shared place: %+v", recs)
	}
}

func fmtErrs(bad []*LineError) string {
	s := ""
	for _, b := range bad {
		s += b.Error() + "; "
	}
	return s
}
