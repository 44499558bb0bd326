package twin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// A twin is the directory deadletter recorded, at its path: a copy of it elsewhere is no twin, and neither is
// another directory put in its place (a real snapshot copied where a rehearsal was).
func TestATwinIsTheDirectoryRecorded(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	tw.Close()
	if _, err := Find(tw.root); err != nil {
		t.Fatalf("the twin is not found: %v", err)
	}
	copied := t.TempDir()
	if err := os.CopyFS(copied, os.DirFS(tw.root)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), copied, "test"); !made.IsNotMade(err) {
		t.Fatalf("a copy of a twin opened as one: %v", err)
	}
	if err := os.RemoveAll(tw.root); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(tw.root, ".deadletter"), 0o755)
	os.WriteFile(filepath.Join(tw.root, ".deadletter", "made"), []byte("0123\n"), 0o644)
	if _, err := Open(context.Background(), tw.root, "test"); !made.IsNotMade(err) || !strings.Contains(err.Error(), "replaced since") {
		t.Fatalf("a directory put where the twin was opened as it: %v", err)
	}
}

// writeState puts a state file where the twin keeps it (what a damaged disk or a hostile hand leaves).
func writeState(t *testing.T, tw *Twin, body []byte) {
	t.Helper()
	if err := os.WriteFile(tw.place.File(stateFile), body, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A damaged or hostile state is an error naming the field, never a panic: a delivery without its event (which
// once panicked twin advance), a subscription the scenario does not have, attempts past the cap, times out of
// range, a newer format.
func TestADamagedStateNamesTheField(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	tw.Close()
	good, err := os.ReadFile(tw.place.File(stateFile))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		json.Unmarshal(good, &m)
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	q0 := func(m map[string]any) map[string]any { return m["queue"].([]any)[0].(map[string]any) }
	for want, body := range map[string][]byte{
		"queue[0]: event": edit(func(m map[string]any) {
			m["queue"] = []any{map[string]any{"sub": "webhooks", "due": "2026-12-01T00:00:00Z", "first": "2026-12-01T00:00:00Z"}}
		}),
		"queue[0]: sub \"nope\"": edit(func(m map[string]any) { q0(m)["sub"] = "nope" }),
		"attempts -1":            edit(func(m map[string]any) { q0(m)["attempts"] = -1 }),
		"now 0273":               edit(func(m map[string]any) { m["now"] = "0273-01-01T00:00:00Z" }),
		"format 9":               edit(func(m map[string]any) { m["format"] = 9 }),
		"nextPoison 99":          edit(func(m map[string]any) { m["nextPoison"] = 99 }),
		"scenario": edit(func(m map[string]any) { // a format-1 state names its scenario, and has no script of its own
			m["format"], m["scenario"] = 1, "x"
			delete(m, "script")
		}),
		"script: windows[0].sub \"nope\"": edit(func(m map[string]any) {
			m["script"].(map[string]any)["windows"].([]any)[0].(map[string]any)["sub"] = "nope"
		}),
		"rules.ttl":    edit(func(m map[string]any) { m["rules"].(map[string]any)["ttl"] = -1 }),
		"state.json":   []byte(`{"format":1,`),
		"queue[0].due": edit(func(m map[string]any) { q0(m)["due"] = "soon" }),
	} {
		writeState(t, tw, body)
		_, err := Open(context.Background(), tw.root, "test")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("state with %s: %v", want, err)
		}
	}
}

// FuzzState: whatever the state file holds, opening and stepping the twin errs or works — it never panics or
// runs without end.
func FuzzState(f *testing.F) {
	f.Add([]byte(`{"format":1,"scenario":"incident","start":"2026-11-01T00:00:00Z","now":"2026-11-01T00:00:00Z","queue":[{"sub":"webhooks","due":"2026-11-01T00:00:00Z","first":"2026-11-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"format":1,"scenario":"incident","start":"2026-11-01T00:00:00Z","now":"2026-11-01T00:00:00Z","queue":[{"sub":"replay","blob":"A/x.json","due":"2026-11-01T00:00:00Z","first":"2026-11-01T00:00:00Z","attempts":10}],"batches":{"webhooks":[{"id":"e"}]},"batchDue":{"webhooks":"2026-11-01T00:01:00Z"},"known":{"A/x.json":{"etag":"x","lastModified":"2026-10-01T00:00:00Z"}}}`))
	f.Add([]byte(`{"format":1,"scenario":"replay-stopped","start":"2026-11-01T00:00:00Z","now":"2026-11-02T00:00:00Z","nextPublish":{"webhooks":"8999-12-31T00:00:00Z"},"nextPoison":2,"queue":[null]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, script, err := parseState(b)
		if err != nil {
			return
		}
		d, err := dirstore.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		tw := &Twin{root: d.Root(), dir: d, cfg: Config(), script: script, st: st}
		tw.c = &recorder{Container: d, tw: tw}
		d.SetClock(func() time.Time { return tw.st.Now })
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tw.step(ctx, tw.st.Now.Add(time.Hour)); errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("an hour of the twin did not end in 5 s")
		}
	})
}

// The state has no size cliff: what is written is read back — 6,000 blobs known under 950-character names and
// a full memory of runs is several megabytes, once more than could be read.
func TestALargeStateReopens(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	long := strings.Repeat("n", 940)
	for i := range 6000 {
		tw.st.known.set(long+strings.Repeat("x", i%7)+string(rune('a'+i%26))+itoa(i), `"e"`, tw.st.Now)
	}
	for range maxRuns {
		tw.remember(Run{At: tw.st.Now, Blob: long})
	}
	if err := tw.save(dirstore.Clock{At: tw.st.Now, Wall: time.Now()}); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(tw.place.File(stateFile))
	kfi, _ := os.Stat(tw.place.File(knownFile(tw.st.KnownSeq)))
	if fi.Size()+kfi.Size() < 2<<20 {
		t.Fatalf("the state and its known file are only %d bytes: not the size that broke it", fi.Size()+kfi.Size())
	}
	tw.Close()
	again, err := Open(context.Background(), tw.root, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.st.known.len() != tw.st.known.len() {
		t.Fatalf("reopened with %d blobs known, saved %d", again.st.known.len(), tw.st.known.len())
	}
	for _, n := range tw.st.known.names() {
		if !again.st.known.same(n, `"e"`) && strings.HasPrefix(n, long) {
			t.Fatalf("reopened without %s…", n[:40])
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// A blob removed behind the twin's back leaves its events nowhere: the account says so (and twin status and
// advance exit 1 on it: cmd/deadletter's tests).
func TestAnEventNowhereIsSeen(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	ctx := context.Background()
	l, err := store.ListAll(ctx, tw.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, bi := range l.Blobs {
		if !isArchived(bi.Name) {
			os.Remove(filepath.Join(tw.root, filepath.FromSlash(bi.Name)))
			break
		}
	}
	a, err := tw.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a.Balanced() {
		t.Fatalf("a dead letter removed by hand left the account balanced: %s", a)
	}
}
