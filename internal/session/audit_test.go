package session_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/azureblob"
	"github.com/deadletter/deadletter/store/storetest"
)

// auditPair is two writers of one audit container, each through its own client (two operators' machines).
func auditPair(t *testing.T) (*azureblob.AuditLog, *azureblob.AuditLog, string) {
	t.Helper()
	c := storetest.Azure(t)
	audit := storetest.NewName()
	var logs [2]*azureblob.AuditLog
	for i := range logs {
		o, err := azureblob.Open(azureblob.Options{ConnectionString: storetest.AzuriteConnectionString(t), Container: strings.TrimPrefix(c.Describe(), "devstoreaccount1/")})
		if err != nil {
			t.Fatal(err)
		}
		if logs[i], err = o.AuditLog(audit); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if made, err := logs[0].Create(ctx); err != nil || !made {
		t.Fatalf("audit init: %v %v", made, err)
	}
	if made, err := logs[1].Create(ctx); err != nil || made {
		t.Fatalf("audit init again: %v %v", made, err)
	}
	t.Cleanup(func() {
		cl, _ := azureblob.Open(azureblob.Options{ConnectionString: storetest.AzuriteConnectionString(t), Container: audit})
		cl.DeleteContainer(context.Background())
	})
	return logs[0], logs[1], c.Describe()
}

// Two writers, 50 actions at once between them (each an intent and an outcome line, through the real azblob
// client with AppendPosition conditions): every line is read back whole, none lost, none interleaved or twice,
// and each writer sees the other's records.
func TestFiftyConcurrentActionsNeverInterleaveALine(t *testing.T) {
	a, b, where := auditPair(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	ids := make(chan string, 50)
	for i := 0; i < 50; i++ {
		shared := a
		if i%2 == 1 {
			shared = b
		}
		r := &record.Recorder{Local: record.OpenDir(t.TempDir()), Shared: session.SharedRecord(shared), Who: record.Who{User: fmt.Sprintf("op%d", i%2), Host: "h"},
			Estate: record.EstateOf("", where), Warn: func(s string) { errs <- fmt.Errorf("%s", s) }}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A line of some length, so a torn append would show.
			blobs := []record.Blob{{Name: fmt.Sprintf("S/2026/12/1/2/%02d-%s.json", i, strings.Repeat("x", 200+i*7)), ETag: `"0x1"`}}
			act, err := r.Begin(ctx, record.ActAck, "deadletter ack --yes", time.Now(), blobs, "")
			if err != nil {
				errs <- err
				return
			}
			blobs[0].Outcome, blobs[0].ETagAfter = "acked", `"0x1"`
			if err := act.End(ctx, time.Now(), blobs, nil); err != nil {
				errs <- err
			}
			ids <- act.ID()
		}()
	}
	wg.Wait()
	close(errs)
	close(ids)
	for err := range errs {
		t.Error(err)
	}
	srcs, err := session.SharedRecord(a).Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, s := range srcs {
		ls, bad := record.Parse(s)
		if len(bad) > 0 {
			t.Fatalf("the shared log does not parse: %v", bad[0])
		}
		lines += len(ls)
	}
	if lines != 100 {
		t.Fatalf("%d lines in the shared log, want 100 (50 intents, 50 outcomes)", lines)
	}
	for _, reader := range []*azureblob.AuditLog{a, b} {
		recs, skipped, err := record.Read(ctx, session.SharedRecord(reader))
		if err != nil || len(skipped) > 0 {
			t.Fatal(err, skipped)
		}
		users := map[string]int{}
		for _, r := range recs {
			if r.Interrupted() {
				t.Fatalf("record %s has no outcome", r.Intent.ID)
			}
			users[r.Intent.Who.User]++
		}
		if len(recs) != 50 || users["op0"] != 25 || users["op1"] != 25 {
			t.Fatalf("%d records, by user %v", len(recs), users)
		}
	}
	want := map[string]bool{}
	for id := range ids {
		want[id] = true
	}
	if len(want) != 50 {
		t.Fatalf("%d distinct ids", len(want))
	}
}

// The audit container is never the dead-letter container, and a name Azure refuses is said as such.
func TestTheAuditContainerIsNeverTheDeadLetterContainer(t *testing.T) {
	c, err := azureblob.Open(azureblob.Options{ConnectionString: "UseDevelopmentStorage=true", Container: "deadletter"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AuditLog("deadletter"); err == nil || !strings.Contains(err.Error(), "never the dead-letter container") {
		t.Fatalf("the dead-letter container as the audit container: %v", err)
	}
	if _, err := c.AuditLog("Bad_Name"); err == nil {
		t.Fatal("an invalid container name was taken")
	}
	if _, err := c.AuditLog("https://acct.blob.core.windows.net/audit?sig=SECRET"); err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("a SAS URL: %v", err)
	}
}

// The dead-letter container named by its URL, path-style as the emulator has it, is refused too.
func TestTheAuditContainerURLIsNeverTheDeadLetterContainer(t *testing.T) {
	c, err := azureblob.Open(azureblob.Options{ConnectionString: "UseDevelopmentStorage=true", Container: "deadletter"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AuditLog("http://127.0.0.1:10000/devstoreaccount1/deadletter"); err == nil || !strings.Contains(err.Error(), "never the dead-letter container") {
		t.Fatalf("the dead-letter container by URL: %v", err)
	}
}

// A line a newer build wrote into the shared audit container (version 2) is skipped and named by every reader; the
// records around it are read. An append whose answer is lost (the connection dropped after the block landed) is
// found where it went and not called failed; a refusal with no storage code (a proxy's 503) names its status.
func TestTheSharedRecordSurvivesAForeignLineAndALostAnswer(t *testing.T) {
	a, _, where := auditPair(t)
	ctx := context.Background()
	recordAnAck(t, a, where)
	foreign := `{"v":2,"id":"ff","phase":"intent","action":"drain","wall":"2026-12-02T04:00:00Z","who":{"user":"x","host":"y"},"estate":{"where":"` + where + `"},"via":"newer","blobs":[],"newField":{"x":1}}` + "\n"
	if err := a.Append(ctx, []byte(foreign)); err != nil {
		t.Fatal(err)
	}
	recs, skipped, err := record.Read(ctx, session.SharedRecord(a))
	if err != nil || len(recs) != 1 || recs[0].Interrupted() || len(skipped) != 1 || !strings.Contains(skipped[0].Error(), "line 3: version 2") {
		t.Fatalf("read around a foreign line: %d records, skipped %v, %v", len(recs), skipped, err)
	}

	// The answer to the next append is lost: the line is there, and the append says so.
	p := storetest.NewFaultProxy(t, storetest.AzuriteConnectionString(t))
	viaProxy, err := azureblob.Open(azureblob.Options{ConnectionString: p.ConnectionString(storetest.AzuriteConnectionString(t)),
		Container: strings.TrimPrefix(where, "devstoreaccount1/")})
	if err != nil {
		t.Fatal(err)
	}
	lossy, _ := viaProxy.AuditLog(strings.TrimPrefix(a.Describe(), "audit container devstoreaccount1/"))
	lost := false
	p.SetFaults(func(req *http.Request) storetest.Fault {
		if strings.Contains(req.URL.RawQuery, "comp=appendblock") && !lost {
			lost = true
			return storetest.Fault{LoseResponse: true}
		}
		return storetest.Fault{}
	})
	line := `{"v":1,"id":"ab","phase":"intent","action":"ack","wall":"2026-12-02T05:00:00Z","who":{"user":"op","host":"h"},"estate":{"where":"` + where + `"},"via":"x","blobs":[]}` + "\n"
	if err := lossy.Append(ctx, []byte(line)); err != nil || !lost {
		t.Fatalf("an append whose answer was lost: %v (lost %v)", err, lost)
	}
	recs, _, _ = record.Read(ctx, session.SharedRecord(a))
	if len(recs) != 2 {
		t.Fatalf("%d records after the lost answer, want 2 (the line once)", len(recs))
	}
	p.SetFaults(func(req *http.Request) storetest.Fault {
		if strings.Contains(req.URL.RawQuery, "comp=appendblock") {
			return storetest.Fault{Status: http.StatusServiceUnavailable, Bare: true}
		}
		return storetest.Fault{}
	})
	if err := lossy.Append(ctx, []byte(line)); err == nil || !strings.Contains(err.Error(), "(503)") || strings.Contains(err.Error(), ":  (") {
		t.Fatalf("a 503 with no code: %v", err)
	}
}

// What else may sit in the audit container — a blob under another name (notes, an export someone parked there)
// and one under an audit name that is not deadletter's (a block blob of text) — never stops the shared record
// being read nor is taken for a record: the other name is not read, the text's lines are skipped and named.
func TestForeignBlobsInTheAuditContainerAreNotRecords(t *testing.T) {
	a, _, where := auditPair(t)
	ctx := context.Background()
	recordAnAck(t, a, where)
	plain, err := azureblob.Open(azureblob.Options{ConnectionString: storetest.AzuriteConnectionString(t),
		Container: strings.TrimPrefix(a.Describe(), "audit container devstoreaccount1/")})
	if err != nil {
		t.Fatal(err)
	}
	line := `{"v":1,"id":"ab","phase":"intent","action":"drain","wall":"2026-12-02T05:00:00Z","who":{"user":"mallory","host":"h"},"estate":{"where":"` + where + `"},"via":"planted","blobs":[]}` + "\n"
	for name, body := range map[string]string{
		"notes.jsonl":           line,                                // not an audit name: never read
		"2020-01-01.0000.jsonl": "\x1b[2Jnot a record\n" + line[:20], // an audit name, not deadletter's lines
	} {
		if _, err := plain.Write(ctx, name, []byte(body), store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	recs, skipped, err := record.Read(ctx, session.SharedRecord(a))
	if err != nil || len(recs) != 1 || recs[0].Intent.Via != "deadletter ack" {
		t.Fatalf("read beside foreign blobs: %+v, %v", recs, err)
	}
	if len(skipped) != 2 || !strings.Contains(skipped[0].Error(), "2020-01-01.0000.jsonl line 1") {
		t.Fatalf("the foreign lines are not named: %v", skipped)
	}
}

// recordAnAck records one finished ack of the estate at where in the shared audit log a (and a local log of the
// test's own).
func recordAnAck(t *testing.T, a *azureblob.AuditLog, where string) {
	t.Helper()
	ctx := context.Background()
	r := &record.Recorder{Local: record.OpenDir(t.TempDir()), Shared: session.SharedRecord(a), Who: record.Who{User: "op", Host: "h"},
		Estate: record.EstateOf("", where)}
	act, err := r.Begin(ctx, record.ActAck, "deadletter ack", time.Now(), []record.Blob{{Name: "S/1.json", ETag: `"1"`}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := act.End(ctx, time.Now(), []record.Blob{{Name: "S/1.json", ETag: `"1"`, Outcome: "acked"}}, nil); err != nil {
		t.Fatal(err)
	}
}
