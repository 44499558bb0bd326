package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/store"
)

// withRecord gives the dashboard's session a record kept in a folder of the test's.
func withRecord(t testing.TB, c store.Container) (opt, *record.Dir) {
	dir := filepath.Join(t.TempDir(), "record")
	return func(o *Options) {
		sp := o.Session.Spec()
		sp.RecordDir = dir
		o.Session = session.Over(o.Session.Loader(), sp)
	}, record.OpenDir(dir)
}

// L is the record: the dashboard's own drain recorded with the key that asked, another operator's ack beside it
// unmarked, the operator's marked; enter on the drain opens its blob where it is now.
func TestLShowsTheRecordAndOpensTheBlobWhereItIsNow(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	ctx := context.Background()
	o, d := withRecord(t, mem)
	hs := newHarness(t, mem, cfg, 120, 40, o)
	other := &record.Recorder{Local: d, Who: record.Who{User: "bob", Host: "desk"}, Estate: record.EstateOf("", mem.Describe()),
		Now: func() time.Time { return time.Now().Add(-time.Hour) }}
	hs.press("<enter>")
	name := hs.m.detail().name
	act, err := other.Begin(ctx, record.ActAck, "deadletter ack", fixedNow, []record.Blob{{Name: name, ETag: `"e"`}}, "")
	if err != nil {
		t.Fatal(err)
	}
	act.End(ctx, fixedNow, []record.Blob{{Name: name, ETag: `"e"`, ETagAfter: `"e"`, Outcome: "acked"}}, nil)
	hs.press("d", "y")
	hs.shows("Drain finished", "1 drained")
	hs.press("<esc>", "<esc>", "L")
	hs.shows("The record: every action on", "drain by tester@host (you)", "dashboard: key d", "ack by bob@desk", "1 drained")
	screen := hs.screen()
	if !strings.Contains(screen, "★") || strings.Index(screen, "drain by") > strings.Index(screen, "ack by bob") {
		t.Fatalf("yours marked, newest first:\n%s", screen)
	}
	if strings.Contains(screen[strings.Index(screen, "ack by bob")-4:strings.Index(screen, "ack by bob")], "★") {
		t.Fatalf("another's record marked as yours:\n%s", screen)
	}
	recs, _, _ := record.Read(ctx, d)
	if len(recs) != 2 || recs[0].Intent.Action != record.ActDrain || recs[0].Outcome == nil || recs[0].Outcome.Blobs[0].ETagAfter == "" ||
		recs[0].Intent.Blobs[0].ETag == "" {
		t.Fatalf("the dashboard's drain as recorded: %+v", recs)
	}

	// The replay takes the drained blob: the history says so, and enter opens its archived record.
	b, err := mem.Read(ctx, name, store.MaxBlobBytes)
	if err != nil {
		t.Fatal(err)
	}
	mem.Clock = mem.Clock.Add(time.Minute)
	archived := "archived/" + name
	mem.Write(ctx, archived, b.Body, store.WriteOptions{ContentType: "application/json"})
	mem.Delete(ctx, name, b.ETag)
	hs.advance(time.Minute)
	hs.press("g", "j") // the drained blob's row, whole under the cursor
	hs.shows("replayed: archived at 2026-11-30 12:01:00Z", "(archived/")
	// e follows the drain's events by their ids: each republished from its archived copy, and where it is now.
	hs.press("e")
	hs.shows("  event ", "republished as |1 11-30 12:01Z")
	hs.press("j") // (the row under the cursor is whole)
	hs.shows("→ now", "delivering")
	hs.press("k", "<enter>")
	if dv := hs.m.detail(); dv == nil || dv.name != archived {
		t.Fatalf("enter on the drain's record did not open %s:\n%s", archived, hs.screen())
	}
}

// Read-only: no recorder, nothing recorded; L still reads the record.
func TestReadOnlyRecordsNothing(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	o, d := withRecord(t, mem)
	hs := newHarness(t, mem, cfg, 120, 40, o, readOnly)
	hs.press("L")
	hs.shows("No action is recorded on this estate yet.")
	if recs, _, _ := record.Read(context.Background(), d); len(recs) != 0 {
		t.Fatalf("%d records", len(recs))
	}
}

// A drain from the dashboard keeps, in the record, the filter its blobs were chosen under — as a command line's
// --filter words are kept — not only the key (issue 51, found by a fresh-eyes audit).
func TestADashboardDrainRecordsItsFilter(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	o, d := withRecord(t, mem)
	hs := newHarness(t, mem, cfg, 120, 40, o)
	hs.press("/", "sub:webhooks", "<enter>", "<ctrl+a>", "d", "y")
	hs.shows("Drain finished")
	recs, _, err := record.Read(context.Background(), d)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	if via := recs[0].Intent.Via; via != `dashboard: key d · filter "sub:webhooks"` {
		t.Fatalf("the drain was recorded as asked by %q", via)
	}
}
