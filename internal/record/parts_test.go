package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// A drain of a backlog is recorded, not refused (issue 52: a drain of 30,000 blobs failed at its intent, "over
// 4194304 bytes", and did nothing): an action over more blobs than a line holds is written in parts — none over
// the line's bounds — and read back as one record with every blob in order, intent and outcome alike; in the
// shared place as well, each part once.
func TestAnActionOverManyBlobsIsWrittenInParts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, d := testRecorder(t)
	shared := OpenDir(filepath.Join(t.TempDir(), "shared"))
	r.Shared = shared
	var blobs, done []Blob
	for i := 0; i < 45_000; i++ {
		name := fmt.Sprintf("PUSH-NOTIFICATIONS/2026/12/7/3/%08x-aaaa-bbbb-cccc-%012d.json", i, i)
		blobs = append(blobs, Blob{Name: name, ETag: `"0x8DD1234567890AB"`})
		done = append(done, Blob{Name: name, ETag: `"0x8DD1234567890AB"`, ETagAfter: `"0x8DD1234567890AC"`, Outcome: "drained"})
	}
	act, err := r.Begin(ctx, ActDrain, "deadletter drain --yes", testNow, blobs, "")
	if err != nil {
		t.Fatalf("a drain of %d blobs was refused: %v", len(blobs), err)
	}
	if err := act.End(ctx, testNow, done, nil); err != nil {
		t.Fatal(err)
	}
	for _, sink := range []*Dir{d, shared} {
		lines := readLines(t, sink)
		if len(lines) < 6 {
			t.Fatalf("%s: %d lines for an intent and an outcome of %d blobs, want parts", sink.Describe(), len(lines), len(blobs))
		}
		for _, l := range lines {
			if len(l) > maxLineBytes {
				t.Fatalf("a part of %d bytes", len(l))
			}
		}
		recs, skipped, err := Read(ctx, sink)
		if err != nil || len(skipped) > 0 || len(recs) != 1 {
			t.Fatalf("%s: %d records, skipped %v, %v", sink.Describe(), len(recs), skipped, err)
		}
		got := recs[0]
		if !reflect.DeepEqual(got.Intent.Blobs, blobs) || got.Outcome == nil || !reflect.DeepEqual(got.Outcome.Blobs, done) || got.PartsMissing != 0 {
			t.Fatalf("%s: read back %d intent and %v outcome blobs (missing %d), want %d in order", sink.Describe(), len(got.Intent.Blobs), got.Outcome != nil, got.PartsMissing, len(blobs))
		}
		if got.State() != "done" || got.Intent.Part != 0 || got.Intent.Parts != 0 {
			t.Fatalf("%s: %s, part %d of %d", sink.Describe(), got.State(), got.Intent.Part, got.Intent.Parts)
		}
	}
	recs, _, err := Read(ctx, d, shared) // (both places: each part once, and shared)
	if err != nil || len(recs) != 1 || len(recs[0].Intent.Blobs) != len(blobs) || !recs[0].Shared {
		t.Fatalf("read from both places: %d records, %v", len(recs), err)
	}

	// A part that is not read leaves the others' blobs, and says how many lines are missing.
	lines := readLines(t, d)
	kept := append(append([]string{}, lines[:1]...), lines[2:]...)
	writeLines(t, d, kept)
	recs, _, err = Read(ctx, d)
	if err != nil || len(recs) != 1 || recs[0].PartsMissing != 1 || len(recs[0].Intent.Blobs) >= len(blobs) || len(recs[0].Intent.Blobs) == 0 {
		t.Fatalf("a part gone: %d records, missing %d, %d blobs, %v", len(recs), recs[0].PartsMissing, len(recs[0].Intent.Blobs), err)
	}
}

// Parts are cut by bytes as well as by blobs: a few thousand blobs with long names are over 4 MiB together.
func TestPartsAreCutByBytesToo(t *testing.T) {
	t.Parallel()
	var blobs []Blob
	for i := 0; i < 3000; i++ {
		blobs = append(blobs, Blob{Name: fmt.Sprintf("%s-%d.json", strings.Repeat("N", 2000), i)})
	}
	parts, err := split(Line{V: Version, ID: "ab", Phase: PhaseIntent, Action: ActDrain, Wall: testNow, Blobs: blobs})
	if err != nil || len(parts) < 2 {
		t.Fatalf("%d parts, %v", len(parts), err)
	}
	n := 0
	for i, p := range parts {
		if p.Part != i+1 || p.Parts != len(parts) {
			t.Fatalf("part %d says %d of %d", i+1, p.Part, p.Parts)
		}
		n += len(p.Blobs)
	}
	if n != len(blobs) {
		t.Fatalf("%d blobs in the parts, want %d", n, len(blobs))
	}
	if one, _ := split(Line{V: Version, ID: "ab", Phase: PhaseIntent, Action: ActDrain, Wall: testNow, Blobs: blobs[:3]}); len(one) != 1 || one[0].Parts != 0 {
		t.Fatalf("a line that fits is cut: %+v", one)
	}
}

// A part number that is no part — past the count, a count without a part, below one — is refused as a record.
func TestANonsensePartIsRefused(t *testing.T) {
	t.Parallel()
	for _, p := range []string{`"part":3,"parts":2`, `"part":0,"parts":2`, `"part":1`, `"part":-1,"parts":-1`, `"part":1,"parts":99999999`} {
		raw := `{"v":1,"id":"ab","phase":"intent","action":"drain","wall":"2026-12-07T03:00:00Z","who":{"user":"u","host":"h"},"estate":{"where":"dir:/x"},"via":"x","blobs":[],` + p + `}`
		if _, why := parseLine([]byte(raw)); why == "" {
			t.Errorf("%s was read as a record", p)
		}
	}
}

var testNow = time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)

func readLines(t *testing.T, d *Dir) []string {
	t.Helper()
	var out []string
	srcs, err := d.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range srcs {
		out = append(out, strings.Split(strings.TrimSuffix(string(s.Data), "\n"), "\n")...)
	}
	return out
}

// writeLines replaces the log with these lines, in one file.
func writeLines(t *testing.T, d *Dir, lines []string) {
	t.Helper()
	if err := os.MkdirAll(d.Path(), 0o700); err != nil {
		t.Fatal(err)
	}
	es, _ := os.ReadDir(d.Path())
	for _, e := range es {
		os.Remove(filepath.Join(d.Path(), e.Name()))
	}
	if err := os.WriteFile(filepath.Join(d.Path(), "2026-12-07.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A line appended under another action's id cannot add blobs to it: beside a whole line, a part is not its; among
// parts, one of another count, action, operator or estate is not one of them.
func TestAForgedPartAddsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := `{"v":1,"id":"ab","phase":"intent","action":"drain","wall":"2026-12-07T03:00:00Z","who":{"user":"u","host":"h"},"estate":{"where":"dir:/x"},"via":"x"`
	blob := func(n string) string { return `,"blobs":[{"name":"` + n + `"}]` }
	for _, c := range []struct {
		what  string
		lines []string
		want  []string
	}{
		{"a part beside a whole line", []string{base + blob("A") + `}`, base + blob("FORGED") + `,"part":2,"parts":2}`}, []string{"A"}},
		{"a part of another count", []string{base + blob("A") + `,"part":1,"parts":2}`, base + blob("B") + `,"part":2,"parts":2}`, base + blob("FORGED") + `,"part":3,"parts":3}`}, []string{"A", "B"}},
		{"a part by another operator", []string{base + blob("A") + `,"part":1,"parts":2}`, strings.Replace(base, `"user":"u"`, `"user":"mallory"`, 1) + blob("FORGED") + `,"part":2,"parts":2}`}, []string{"A"}},
		{"a part of another action", []string{base + blob("A") + `,"part":1,"parts":2}`, strings.Replace(base, `"drain"`, `"restore"`, 1) + blob("FORGED") + `,"part":2,"parts":2}`}, []string{"A"}},
	} {
		_, d := testRecorder(t)
		writeLines(t, d, c.lines)
		recs, _, err := Read(ctx, d)
		if err != nil || len(recs) != 1 {
			t.Fatalf("%s: %d records, %v", c.what, len(recs), err)
		}
		var got []string
		for _, b := range recs[0].Intent.Blobs {
			got = append(got, b.Name)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: blobs %v, want %v", c.what, got, c.want)
		}
	}
}

// flakySink is a shared place that refuses appends while fail says so.
type flakySink struct {
	mu    sync.Mutex
	fail  bool
	lines [][]byte
}

func (s *flakySink) Append(_ context.Context, line []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return errors.New("503 Server Busy")
	}
	s.lines = append(s.lines, slices.Clone(line))
	return nil
}

func (s *flakySink) Read(context.Context) ([]Source, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return []Source{{Name: "shared", Data: bytes.Join(s.lines, nil)}}, nil
}

func (s *flakySink) Describe() string { return "https://acct.blob.core.windows.net/audit" }

func drainBlobs(n int) (in, out []Blob) {
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("PUSH-NOTIFICATIONS/2026/12/7/3/%08x-aaaa-bbbb-cccc-%012d.json", i, i)
		in = append(in, Blob{Name: name, ETag: `"0x8DD1234567890AB"`})
		out = append(out, Blob{Name: name, ETag: `"0x8DD1234567890AB"`, ETagAfter: `"0x8DD1234567890AC"`, Outcome: "drained"})
	}
	return in, out
}

// A shared outage during a drain of a backlog pends its parts — tens of megabytes — and the next action sends
// them all (a bound of twice a log file's size left them, and every line after them, never sent, silently).
func TestPendedPartsOfABigDrainAreSentAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := testRecorder(t)
	shared := &flakySink{fail: true}
	r.Shared = shared
	in, out := drainBlobs(100_000)
	act, err := r.Begin(ctx, ActDrain, "deadletter drain --yes", testNow, in, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := act.End(ctx, testNow, out, nil); err != nil {
		t.Fatal(err)
	}
	shared.fail = false
	next := &Recorder{Local: r.Local, Shared: shared, Who: r.Who, Estate: r.Estate}
	ack, err := next.Begin(ctx, ActAck, "deadletter ack", testNow, []Blob{{Name: "S/2026/12/1/2/a.json"}}, "")
	if err != nil || len(ack.Warnings()) > 0 {
		t.Fatalf("the next action: %v %v", err, ack.Warnings())
	}
	recs, _, err := Read(ctx, shared)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if rec.Intent.Action == ActDrain && len(rec.Intent.Blobs) == len(in) && rec.State() == "done" {
			return
		}
	}
	t.Errorf("the drain of %d blobs never reached the shared record whole (%d records there)", len(in), len(recs))
}

// halfDir is a local log whose appends fail from the failAt-th on (a disk that filled up).
type halfDir struct {
	*Dir
	n, failAt int
}

func (h *halfDir) Append(ctx context.Context, line []byte) error {
	if h.n++; h.n == h.failAt {
		return errors.New("no space left on device")
	}
	return h.Dir.Append(ctx, line)
}

// An intent whose second part could not be written: nothing was done, and the record, holding its first part,
// says so — a failed action, not an interrupted drain of twenty thousand blobs that never ran.
func TestAnIntentWrittenHalfwaySaysNothingWasDone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := OpenDir(filepath.Join(t.TempDir(), "record"))
	r := &Recorder{Local: &halfDir{Dir: d, failAt: 2}, Who: Who{User: "alice", Host: "laptop"}, Estate: EstateOf("prod", "acct/deadletter")}
	in, _ := drainBlobs(45_000)
	if _, err := r.Begin(ctx, ActDrain, "deadletter drain --yes", testNow, in, ""); err == nil || !strings.Contains(err.Error(), "nothing was done") {
		t.Fatalf("Begin: %v", err)
	}
	recs, _, _ := Read(ctx, d)
	if len(recs) != 1 || recs[0].State() != "failed" || !strings.Contains(recs[0].Outcome.Error, "nothing was done") {
		t.Fatalf("the record of an intent written halfway: %d records, %+v", len(recs), recs)
	}
}

// An outcome whose last part could not be written — the part holding the blob that failed — reads interrupted,
// never done, and its blobs are all still told (those of the missing part with no outcome).
func TestAnOutcomeCutShortReadsInterrupted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := OpenDir(filepath.Join(t.TempDir(), "record"))
	in, out := drainBlobs(45_000)
	out[len(out)-1].Outcome = "failed"
	r := &Recorder{Local: &halfDir{Dir: d, failAt: 6}, Who: Who{User: "alice", Host: "laptop"}, Estate: EstateOf("prod", "acct/deadletter")}
	act, err := r.Begin(ctx, ActDrain, "deadletter drain --yes", testNow, in, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := act.End(ctx, testNow, out, nil); err == nil {
		t.Fatal("End wrote an outcome that could not be written whole")
	}
	recs, _, _ := Read(ctx, d)
	rec := recs[0]
	if rec.State() != "interrupted" || rec.OutcomePartsMissing == 0 || len(rec.Blobs()) != len(in) || !strings.Contains(rec.Tally(), "not read") {
		t.Fatalf("state %s, tally %q, outcome parts missing %d, %d blobs of %d", rec.State(), rec.Tally(), rec.OutcomePartsMissing, len(rec.Blobs()), len(in))
	}
}
