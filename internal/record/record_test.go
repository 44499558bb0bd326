package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func testRecorder(t *testing.T) (*Recorder, *Dir) {
	t.Helper()
	d := OpenDir(filepath.Join(t.TempDir(), "record"))
	return &Recorder{Local: d, Who: Who{User: "alice", Host: "laptop"}, Estate: EstateOf("prod", "acct/deadletter")}, d
}

// An intent and an outcome under one id read back as one record; an intent alone is interrupted; newest first.
func TestARecordIsAnIntentAndAnOutcome(t *testing.T) {
	ctx := context.Background()
	r, d := testRecorder(t)
	clock := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	r.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	act, err := r.Begin(ctx, ActDrain, "deadletter drain --yes", clock, []Blob{{Name: "S/2026/12/1/2/a.json", ETag: `"1"`}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := act.End(ctx, clock, []Blob{{Name: "S/2026/12/1/2/a.json", ETag: `"1"`, ETagAfter: `"2"`, Outcome: "drained"}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Begin(ctx, ActRestore, "dashboard: r", time.Time{}, []Blob{{Name: "quarantine/S/2026/12/1/2/b.json"}}, ""); err != nil {
		t.Fatal(err)
	}
	recs, _, err := Read(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	if recs[0].Intent.Action != ActRestore || !recs[0].Interrupted() || recs[0].State() != "interrupted" {
		t.Fatalf("newest first, interrupted: %+v", recs[0])
	}
	if got := recs[1]; got.Interrupted() || got.State() != "done" || got.Outcome.Blobs[0].ETagAfter != `"2"` || got.Intent.Who.User != "alice" ||
		got.Intent.Estate.Account != "acct" || got.Intent.Estate.Container != "deadletter" || got.Intent.Estate.Context != "prod" {
		t.Fatalf("the drain: %+v", got)
	}
}

// A local record that cannot be written stops the action before it writes: Begin fails, saying nothing was done.
func TestAnUnwritableLocalRecordIsAnError(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "record")
	os.WriteFile(blocker, []byte("a file where the folder goes"), 0o600)
	r := &Recorder{Local: OpenDir(blocker), Who: Who{User: "u", Host: "h"}}
	if _, err := r.Begin(context.Background(), ActDrain, "x", time.Time{}, nil, ""); err == nil || !strings.Contains(err.Error(), "nothing was done") {
		t.Fatalf("Begin on an unwritable log: %v", err)
	}
}

type failingSink struct{}

func (failingSink) Append(context.Context, []byte) error {
	return errors.New("403 AuthorizationPermissionMismatch")
}
func (failingSink) Read(context.Context) ([]Source, error) { return nil, nil }
func (failingSink) Describe() string                       { return "audit container acct/audit" }

// A shared record that cannot be written is said and kept locally: the action goes on.
func TestASharedRecordThatFailsIsSaidAndKeptLocally(t *testing.T) {
	r, d := testRecorder(t)
	var said []string
	r.Shared, r.Warn = failingSink{}, func(s string) { said = append(said, s) }
	if _, err := r.Begin(context.Background(), ActAck, "x", time.Time{}, nil, ""); err != nil {
		t.Fatal(err)
	}
	if len(said) != 1 || !strings.Contains(said[0], "kept locally") || !r.SharedFailed() {
		t.Fatalf("said %q", said)
	}
	if recs, _, _ := Read(context.Background(), d); len(recs) != 1 {
		t.Fatalf("the local log holds %d records", len(recs))
	}
}

// A hostile or truncated line is skipped and named (file and line), never a crash nor records taken on trust.
func TestAHostileLineIsSkippedAndNamed(t *testing.T) {
	good := `{"v":1,"id":"ab12","phase":"intent","action":"drain","wall":"2026-12-02T04:00:00Z","who":{"user":"u","host":"h"},"estate":{"where":"w"},"via":"x","blobs":[]}` + "\n"
	for _, c := range []struct{ name, data, want string }{
		{"cut", good + good[:40], "line 2: cut short"},
		{"garbage", good + "\x1b[31mnot json\n", "line 2: not a record"},
		{"version", strings.Replace(good, `"v":1`, `"v":9`, 1), "line 1: version 9"},
		{"no id", strings.Replace(good, `"ab12"`, `""`, 1), "line 1: no record id"},
		// a record id is what the tool makes: up to 64 lower-case hex digits — nothing a path, a terminal or a
		// second spelling of one id could be made of
		{"id too long", strings.Replace(good, `"ab12"`, `"`+strings.Repeat("a", 65)+`"`, 1), "line 1: no record id"},
		{"id in capitals", strings.Replace(good, `"ab12"`, `"AB12"`, 1), "line 1: no record id"},
		{"id a path", strings.Replace(good, `"ab12"`, `"../ab12"`, 1), "line 1: no record id"},
		{"id an escape", strings.Replace(good, `"ab12"`, `"\u001b[2Jab12"`, 1), "line 1: no record id"},
		{"phase", strings.Replace(good, `"intent"`, `"maybe"`, 1), "line 1: no phase"},
		{"two values", strings.TrimSuffix(good, "\n") + " {}\n", "line 1: not a record: more than one value"},
		// the decoder matches keys in any case: a field's name in another case, or a key twice, would override it
		{"case", strings.Replace(good, `"via"`, `"ACTION":"restore","via"`, 1), `line 1: not a record: field "ACTION" is not "action"`},
		{"case nested", strings.Replace(good, `"user":"u"`, `"user":"u","User":"mallory"`, 1), `line 1: not a record: field "User" is not "user"`},
		{"twice", strings.Replace(good, `"via"`, `"action":"restore","via"`, 1), `line 1: not a record: field "action" twice`},
		{"long s", strings.Replace(good, `"user":"u"`, `"user":"u","u\u017fer":"mallory"`, 1), `line 1: not a record: field "uſer" is not "user"`},
		{"long s twice", strings.Replace(good, `"via"`, `"x\u017f":1,"XS":2,"via"`, 1), `line 1: not a record: field "XS" twice`},
		{"case in a blob", strings.Replace(good, `"blobs":[]`, `"blobs":[{"name":"a","NAME":"b"}]`, 1), `line 1: not a record: field "NAME" is not "name"`},
		{"deep", strings.Repeat("[", 100000) + "\n", "line 1: not a record"},
	} {
		// Each bad line is skipped and named; a good line beside it is still read.
		data := c.data
		if strings.HasSuffix(data, "\n") && !strings.HasPrefix(data, good) {
			data += good
		}
		ls, bad := Parse(Source{Name: "2026-12-02.jsonl", Data: []byte(data)})
		if len(bad) != 1 || !strings.Contains(bad[0].Error(), c.want) || !strings.HasPrefix(bad[0].Error(), "2026-12-02.jsonl ") || len(ls) != 1 {
			t.Errorf("%s: %v and %d line(s) read, want %q and the good line", c.name, bad, len(ls), c.want)
		}
	}
	if ls, bad := Parse(Source{Name: "f", Data: []byte(good + "\n" + good)}); len(bad) > 0 || len(ls) != 2 {
		t.Fatalf("a good log: %d lines, %v", len(ls), bad)
	}
}

// The local log is bounded: a new file once one passes its size, a file per day, the oldest removed past the count.
func TestTheLocalLogRotatesBySizeAndDay(t *testing.T) {
	ctx := context.Background()
	d := OpenDir(filepath.Join(t.TempDir(), "record"))
	d.maxBytes, d.maxFiles = 600, 4
	day := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	d.now = func() time.Time { return day }
	r := &Recorder{Local: d, Who: Who{User: "u", Host: "h"}, Estate: EstateOf("", "dir:/x"), Now: d.now}
	for i := 0; i < 6; i++ {
		if _, err := r.Begin(ctx, ActAck, "x", time.Time{}, []Blob{{Name: "n"}}, ""); err != nil {
			t.Fatal(err)
		}
	}
	names, _ := d.files()
	if len(names) < 2 || names[0] != "2026-12-01.jsonl" || names[1] != "2026-12-01.1.jsonl" {
		t.Fatalf("files by size: %v", names)
	}
	for _, n := range names {
		if fi, _ := os.Stat(filepath.Join(d.path, n)); fi.Size() > d.maxBytes {
			t.Fatalf("%s is %d bytes, over %d", n, fi.Size(), d.maxBytes)
		}
		if fi, _ := os.Stat(filepath.Join(d.path, n)); fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s is %v", n, fi.Mode())
		}
	}
	day = day.Add(2 * time.Hour)
	for i := 0; i < 8; i++ {
		r.Begin(ctx, ActAck, "x", time.Time{}, nil, "")
	}
	names, _ = d.files()
	if len(names) != d.maxFiles || !strings.HasPrefix(names[len(names)-1], "2026-12-02") {
		t.Fatalf("after a day and more: %v (at most %d kept)", names, d.maxFiles)
	}
	recs, _, err := Read(ctx, d)
	if err != nil || len(recs) == 0 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
}

// A log file planted as a link is refused, not followed.
func TestALinkedLogFileIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "record")
	os.MkdirAll(dir, 0o700)
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, nil, 0o600)
	d := OpenDir(dir)
	if err := os.Symlink(target, filepath.Join(dir, time.Now().UTC().Format("2006-01-02")+".jsonl")); err != nil {
		t.Skip(err)
	}
	if err := d.Append(context.Background(), []byte("{}\n")); err == nil {
		t.Fatal("appended through a link")
	}
	if b, _ := os.ReadFile(target); len(b) != 0 {
		t.Fatalf("the link's target was written: %q", b)
	}
}

// A line appended after one a crash cut short starts on a line of its own: the cut line is the one lost (and named
// when read), never the record written after it.
func TestALineAfterACutOneStandsAlone(t *testing.T) {
	d := OpenDir(t.TempDir())
	good := []byte(`{"v":1,"id":"ab12","phase":"intent","action":"drain","wall":"2026-12-02T04:00:00Z","who":{"user":"u","host":"h"},"estate":{"where":"w"},"via":"x","blobs":[]}` + "\n")
	if err := d.Append(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(d.path, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	if err := os.Truncate(files[0], int64(len(good)-10)); err != nil {
		t.Fatal(err)
	}
	next := bytes.Replace(good, []byte(`"ab12"`), []byte(`"cd34"`), 1)
	if err := d.Append(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(files[0])
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 || lines[1] != strings.TrimSuffix(string(next), "\n") {
		t.Fatalf("the log after a cut line:\n%s", data)
	}
	if ls, bad := Parse(Source{Name: "f", Data: data}); len(bad) != 1 || !strings.Contains(bad[0].Error(), "line 1") || len(ls) != 1 {
		t.Fatalf("the cut line is not named and skipped: %v, %d read", bad, len(ls))
	}
}

// A blob name that is not UTF-8 (a directory's file names are bytes) comes back from the record exactly, so log
// follows the blob that is there — not a name with replacement characters that never existed.
func TestANameThatIsNotUTF8IsKeptExactly(t *testing.T) {
	r, d := testRecorder(t)
	name := "WEBHOOKS/2026/12/1/2/\xff\xfe.json"
	act, err := r.Begin(context.Background(), ActDrain, "x", time.Now(), []Blob{{Name: name, ETag: `"1"`}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := act.End(context.Background(), time.Now(), []Blob{{Name: name, Target: name + "\xc0", Outcome: "drained"}}, nil); err != nil {
		t.Fatal(err)
	}
	recs, _, err := Read(context.Background(), d)
	if err != nil || len(recs) != 1 || recs[0].Outcome == nil {
		t.Fatalf("%+v %v", recs, err)
	}
	if got := recs[0].Intent.Blobs[0].Name; got != name {
		t.Fatalf("the intent's name came back %q", got)
	}
	if got := recs[0].Outcome.Blobs[0]; got.Name != name || got.Target != name+"\xc0" {
		t.Fatalf("the outcome's names came back %q, %q", got.Name, got.Target)
	}
}

// A field this build does not know — a newer deadletter's, at the line's top, in its estate or in a blob — is read
// past and never kept: the line reads as it would without it, and nothing of it comes out again.
func TestFieldsOfANewerBuildAreReadPast(t *testing.T) {
	plain := `{"v":1,"id":"ab12","phase":"intent","action":"drain","wall":"2026-12-02T04:00:00Z","who":{"user":"u","host":"h"},"estate":{"where":"w"},"via":"x","blobs":[{"name":"a","etag":"0x1"}]}` + "\n"
	newer := strings.NewReplacer(`"via"`, `"payload":"secret-1","via"`, `"where":"w"`, `"where":"w","region":"secret-2"`, `"name":"a"`, `"name":"a","body":"secret-3"`).Replace(plain)
	want, bad := Parse(Source{Name: "f", Data: []byte(plain)})
	if len(bad) > 0 {
		t.Fatal(bad[0])
	}
	got, bad := Parse(Source{Name: "f", Data: []byte(newer)})
	if len(bad) > 0 {
		t.Fatalf("a line with a newer build's fields: %v", bad[0])
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read as\n%+v\nwant\n%+v", got, want)
	}
	out, _ := json.Marshal(got)
	if strings.Contains(string(out), "secret") {
		t.Fatalf("an unknown field came out again: %s", out)
	}
}

// memorySink is a shared place in memory that refuses while down.
type memorySink struct {
	down  bool
	lines [][]byte
}

func (m *memorySink) Append(_ context.Context, line []byte) error {
	if m.down {
		return errors.New("503 Service Unavailable")
	}
	m.lines = append(m.lines, append([]byte(nil), line...))
	return nil
}
func (m *memorySink) Read(context.Context) ([]Source, error) {
	var b []byte
	for _, l := range m.lines {
		b = append(b, l...)
	}
	return []Source{{Name: "shared", Data: b}}, nil
}
func (m *memorySink) Describe() string { return "audit container acct/audit" }

// An outcome the shared record refused (a 503) is sent again with the next action from this machine: the action
// does not read as interrupted to every other operator for ever, and what was sent twice reads as one.
func TestARefusedOutcomeReachesTheSharedRecordLater(t *testing.T) {
	ctx := context.Background()
	d := OpenDir(filepath.Join(t.TempDir(), "record"))
	shared := &memorySink{}
	r := &Recorder{Local: d, Shared: shared, Who: Who{User: "u", Host: "h"}, Warn: func(string) {}}
	act, err := r.Begin(ctx, ActDrain, "x", time.Time{}, []Blob{{Name: "S/a.json", ETag: `"1"`}}, "")
	if err != nil {
		t.Fatal(err)
	}
	shared.down = true
	if err := act.End(ctx, time.Time{}, []Blob{{Name: "S/a.json", ETag: `"1"`, Outcome: "drained"}}, nil); err != nil {
		t.Fatal(err)
	}
	if w := act.EndWarnings(); len(w) != 1 || !strings.Contains(w[0], "sent again") {
		t.Fatalf("the refused outcome is not said: %q", w)
	}
	recs, _, _ := Read(ctx, shared)
	if len(recs) != 1 || !recs[0].Interrupted() {
		t.Fatalf("before: %+v", recs)
	}
	shared.down = false
	next := &Recorder{Local: d, Shared: shared, Who: Who{User: "u", Host: "h"}}
	if _, err := next.Begin(ctx, ActAck, "y", time.Time{}, nil, ""); err != nil {
		t.Fatal(err)
	}
	recs, _, _ = Read(ctx, shared)
	if len(recs) != 2 || recs[1].Intent.Action != ActDrain || recs[1].Interrupted() {
		t.Fatalf("after the next action, the shared record holds %+v", recs)
	}
	if _, err := os.Stat(d.pendingPath(shared.Describe())); !os.IsNotExist(err) {
		t.Fatalf("the line sent is still waiting: %v", err)
	}
}

// failAfter is a local log that fills up after n lines (a disk that fills mid-action).
type failAfter struct {
	n     int
	lines int
}

func (f *failAfter) Append(context.Context, []byte) error {
	if f.lines >= f.n {
		return errors.New("no space left on device")
	}
	f.lines++
	return nil
}
func (f *failAfter) Read(context.Context) ([]Source, error) { return nil, nil }
func (f *failAfter) Describe() string                       { return "/state/deadletter/record" }

// A local record that fills up after the intent says what happened: the action ran, its outcome is not in the
// record — never "nothing was done" after blobs were drained.
func TestAnOutcomeThatCannotBeWrittenSaysTheActionRan(t *testing.T) {
	r := &Recorder{Local: &failAfter{n: 1}, Who: Who{User: "u", Host: "h"}}
	act, err := r.Begin(context.Background(), ActDrain, "x", time.Time{}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	err = act.End(context.Background(), time.Time{}, []Blob{{Name: "S/a.json", Outcome: "drained"}}, nil)
	if err == nil || strings.Contains(err.Error(), "nothing was done") || !strings.Contains(err.Error(), "the action ran") {
		t.Fatalf("an outcome that could not be written: %v", err)
	}
}

// The local log keeps the files written last: one named for a day to come (a clock that was ahead, a file put
// there) goes before today's, never outliving it.
func TestTheLocalLogPrunesByWhenWrittenNotByName(t *testing.T) {
	d := OpenDir(filepath.Join(t.TempDir(), "record"))
	d.maxFiles = 3
	os.MkdirAll(d.path, 0o700)
	future := filepath.Join(d.path, "2099-01-01.jsonl")
	os.WriteFile(future, []byte("{}\n"), 0o600)
	os.Chtimes(future, time.Now().Add(-48*time.Hour), time.Now().Add(-48*time.Hour))
	day := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		d.now = func() time.Time { return day.Add(time.Duration(i) * 24 * time.Hour) }
		if err := d.Append(context.Background(), []byte("{}\n")); err != nil {
			t.Fatal(err)
		}
	}
	names, _ := d.files()
	if slices.Contains(names, "2099-01-01.jsonl") || !slices.Contains(names, "2026-12-03.jsonl") || len(names) != 3 {
		t.Fatalf("kept %v: the future-named file written two days ago should go first", names)
	}
}
