package twin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// A twin started --from a container and interrupted mid-copy is resumed by the next start on the same
// directory: it copies what is missing, puts right a Last-Modified the interruption left, copies again a blob cut
// short, and ends with a twin
// that holds every blob as the source does (names, sizes, Last-Modified), its account balanced; a third start
// refuses (the twin exists). The source is never written.
func TestAnInterruptedStartFromResumes(t *testing.T) {
	t.Parallel()
	src, _ := started(t, "incident")
	ctx := context.Background()
	d, err := dirstore.Open(src.root)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config()
	before, _ := store.ListAll(ctx, d)
	if len(before.Blobs) < 20 {
		t.Fatalf("the source holds %d blobs", len(before.Blobs))
	}
	dir := filepath.Join(t.TempDir(), "twin")
	cut, stop := context.WithCancel(ctx)
	n := 0
	f := From{Source: d, Describe: "directory " + src.root, Config: cfg,
		Progress: func(c store.Copied) {
			if n++; n == 10 {
				stop()
			}
		}}
	if _, err := StartFrom(cut, dir, f); err == nil || !strings.Contains(err.Error(), "resumes") {
		t.Fatalf("an interrupted start: %v", err)
	}
	// Until it is resumed, the half-made twin says so to whatever opens it, not that a state file is missing.
	if _, err := Open(ctx, dir, "twin status"); err == nil || !strings.Contains(err.Error(), "never finished") || !strings.Contains(err.Error(), src.root) {
		t.Fatalf("opening a half-made twin: %v", err)
	}
	// The interruption's worst: a blob copied whose Last-Modified was not yet put back.
	copied, _ := store.ListAll(ctx, mustOpen(t, dir))
	if len(copied.Blobs) == 0 || len(copied.Blobs) == len(before.Blobs) {
		t.Fatalf("%d of %d copied before the interruption", len(copied.Blobs), len(before.Blobs))
	}
	if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(copied.Blobs[0].Name)), time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	// …and one cut short (its bytes not flushed when the machine stopped).
	if err := os.Truncate(filepath.Join(dir, filepath.FromSlash(copied.Blobs[1].Name)), 0); err != nil {
		t.Fatal(err)
	}
	f.Progress = nil
	tw, err := StartFrom(ctx, dir, f)
	if err != nil {
		t.Fatalf("the resumed start: %v", err)
	}
	got, _ := store.ListAll(ctx, tw.dir)
	if len(got.Blobs) != len(before.Blobs) {
		t.Fatalf("the twin holds %d blobs, the source %d", len(got.Blobs), len(before.Blobs))
	}
	for i, b := range before.Blobs {
		g := got.Blobs[i]
		if g.Name != b.Name || g.Size != b.Size || !g.LastModified.Equal(b.LastModified) {
			t.Fatalf("blob %d: the twin %s %d %s, the source %s %d %s", i, g.Name, g.Size, g.LastModified, b.Name, b.Size, b.LastModified)
		}
	}
	holds(t, tw, "a resumed twin")
	tw.Close()
	if _, err := StartFrom(ctx, dir, f); err == nil || !strings.Contains(err.Error(), "already holds a twin") {
		t.Fatalf("a third start: %v", err)
	}
	after, _ := store.ListAll(ctx, d)
	for i := range before.Blobs {
		if before.Blobs[i].ETag != after.Blobs[i].ETag {
			t.Fatalf("the source's %s changed", before.Blobs[i].Name)
		}
	}
}

func mustOpen(t *testing.T, dir string) *dirstore.Dir {
	t.Helper()
	d, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A twin of a container of fresh dead letters owes the replay a BlobCreated for each (Event Grid still holds
// them): kept beside the state and put on the queue a chunk at a time, they are delivered all the same — every
// one, in name order, across a reopening between two chunks — and the account balances.
func TestATwinOfFreshBlobsDeliversTheTriggersOwed(t *testing.T) {
	defer func(n int) { owedChunk = n }(owedChunk)
	owedChunk = 3
	ctx := context.Background()
	src := mustOpen(t, t.TempDir())
	gen := scenario.NewBulk(7, time.Now(), Config())
	var roots []string
	for i := 0; len(roots) < 10; i++ {
		name, body := gen.Next()
		name = strings.Replace(name, ".json", "-"+itoa(i)+".json", 1)
		if _, err := src.Write(ctx, name, body, store.WriteOptions{ContentType: "application/json"}); err != nil {
			t.Fatal(err)
		}
		if rules.Triggers(name) {
			roots = append(roots, name)
		}
	}
	sort.Strings(roots)
	dir := filepath.Join(t.TempDir(), "twin")
	tw, err := StartFrom(ctx, dir, From{Source: src, Describe: "fresh", Config: Config()})
	if err != nil {
		t.Fatal(err)
	}
	if len(tw.st.Queue) != 0 || tw.st.OwedCount != len(roots) || len(tw.st.owed) != len(roots) {
		t.Fatalf("queue %d, owed %d (%d in memory): want the %d root blobs owed, none queued", len(tw.st.Queue), tw.st.OwedCount, len(tw.st.owed), len(roots))
	}
	holds(t, tw, "at the start")
	runs := func(tw *Twin) (out []string) {
		for _, r := range tw.st.Runs {
			out = append(out, r.Blob)
		}
		return out
	}
	// The first chunk goes on the queue and the twin is saved there; reopened, it owes the rest.
	tw.materialize()
	if err := tw.save(dirstore.Clock{At: tw.st.Now, Wall: time.Now()}); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	tw, err = Open(ctx, dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	if len(tw.st.Queue) != owedChunk || len(tw.st.owed) != len(roots)-owedChunk || tw.st.owed[0].name != roots[owedChunk] {
		t.Fatalf("reopened with %d queued and %d owed: want %d and %d", len(tw.st.Queue), len(tw.st.owed), owedChunk, len(roots)-owedChunk)
	}
	if _, err := tw.Advance(ctx, tw.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := runs(tw); fmt.Sprint(got[:len(roots)]) != fmt.Sprint(roots) {
		t.Fatalf("the replay ran over\n%v\nwant every root blob once, in name order:\n%v", got, roots)
	}
	if len(tw.st.owed) != 0 || tw.st.OwedNext != len(roots) {
		t.Fatalf("%d still owed, %d taken", len(tw.st.owed), tw.st.OwedNext)
	}
	holds(t, tw, "a minute on")
}

// A blob the twin cannot hold — a name under its directory's own folder in another case, a FIFO or a link in a
// source directory — is left out and said, never a failure every later start meets again.
func TestBlobsATwinCannotHoldAreLeftOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	src := filepath.Join(root, "src")
	body := []byte(`[{"id":"a","subject":"s","eventType":"Webhook","dataVersion":"1","data":1}]`)
	for _, name := range []string{"WEBHOOKS/2026/12/02/05/a.json", ".DEADLETTER/meta/e.json"} {
		p := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "WEBHOOKS", "2026", "12", "02", "05", "link.json")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	var left []string
	f := From{Source: mustOpen(t, src), Describe: "directory " + src, Config: Config(),
		Progress: func(c store.Copied) {
			if c.Err != nil {
				if !LeftOut(c.Err) {
					t.Errorf("%s: %v is a failure, not left out", c.Name, c.Err)
				}
				left = append(left, c.Name)
			}
		}}
	tw, err := StartFrom(ctx, filepath.Join(root, "twin"), f)
	if err != nil {
		t.Fatalf("a start with blobs it cannot hold: %v", err)
	}
	defer tw.Close()
	slices.Sort(left)
	if want := []string{".DEADLETTER/meta/e.json", "WEBHOOKS/2026/12/02/05/link.json"}; !slices.Equal(left, want) {
		t.Fatalf("left out %q, want %q", left, want)
	}
	got, _ := store.ListAll(ctx, tw.dir)
	if len(got.Blobs) != 1 || got.Blobs[0].Name != "WEBHOOKS/2026/12/02/05/a.json" {
		t.Fatalf("the twin holds %v", got.Blobs)
	}
	for _, s := range tw.Script().Windows {
		if strings.EqualFold(s.Sub, ".deadletter") {
			t.Fatalf("the script scripts a subscription no blob of the twin names: %+v", s)
		}
	}
}

// A twin of a container whose handler is failing fails it as the container says: as its newest dead letters' last
// deliveries ended (lastHttpStatusCode and lastDeliveryOutcome), those whose retries ran out first — a poison
// event's 400, dead-lettered at once, says nothing of the handler — not a 503 made up.
func TestTheInferredScriptFailsAsTheNewestDeadLetterSays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := mustOpen(t, t.TempDir())
	now := time.Now().UTC()
	write := func(name string, at time.Time, status int, outcome string) {
		reason, attempts := "MaxDeliveryAttemptsExceeded", 30
		if status == 400 { // a poison event: dead-lettered at once, saying nothing of the handler
			reason, attempts = "UndeliverableDueToHttpBadRequest", 1
		}
		body := fmt.Sprintf(`[{"id":"e-%d","subject":"/s","eventType":"Push","dataVersion":"1","data":{},"deadLetterReason":%q,"deliveryAttempts":%d,"lastDeliveryOutcome":%q,"lastHttpStatusCode":%d}]`, at.Unix(), reason, attempts, outcome, status)
		if _, err := src.Write(ctx, name, []byte(body), store.WriteOptions{ContentType: "application/json"}); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(src.Root(), filepath.FromSlash(name)), at, at); err != nil {
			t.Fatal(err)
		}
	}
	hour := func(at time.Time) string { return at.Format("2006/1/2/15") }
	old, recent := now.Add(-5*time.Hour), now.Add(-20*time.Minute)
	write("WEBHOOKS/"+hour(old)+"/0b8c2f7e-0000-4000-8000-000000000001.json", old, 500, "InternalServerError")
	write("WEBHOOKS/"+hour(recent)+"/0b8c2f7e-0000-4000-8000-000000000002.json", recent, 404, "NotFound")
	poison := now.Add(-5 * time.Minute)
	write("WEBHOOKS/"+hour(poison)+"/0b8c2f7e-0000-4000-8000-000000000003.json", poison, 400, "BadRequest")
	tw, err := StartFrom(ctx, filepath.Join(t.TempDir(), "twin"), From{Source: src, Describe: "failing", Config: Config()})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	if w := tw.script.Down("WEBHOOKS", 0); w == nil || w.Status != 404 || w.Outcome != "NotFound" {
		t.Fatalf("WEBHOOKS down with %+v, want 404 NotFound (its retries' failure, not the poison event's 400)", w)
	}
}

// A source holding a name and a folder of the same name (x.json and x.json/child.json: Azure holds both, a
// directory cannot), or a blob over the largest dead letter, is made a twin of without them, listed — every start
// would meet them again, so none fails for them.
func TestBlobsANameBesideItsFolderOrTooLargeAreLeftOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := storetest.NewMem(time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC))
	body := []byte(`[{"id":"a","subject":"s","eventType":"Webhook","dataVersion":"1","data":1}]`)
	for _, name := range []string{"WEBHOOKS/2026/12/2/5/x.json", "WEBHOOKS/2026/12/2/5/x.json/child.json", "WEBHOOKS/2026/12/2/5/ok.json"} {
		src.Write(ctx, name, body, store.WriteOptions{})
	}
	src.Write(ctx, "WEBHOOKS/2026/12/2/5/huge.json", make([]byte, store.MaxBlobBytes+1), store.WriteOptions{})
	var left []string
	f := From{Source: src, Describe: "memory", Config: Config(),
		Progress: func(c store.Copied) {
			if c.Err != nil {
				if !LeftOut(c.Err) {
					t.Errorf("%s: %v is a failure, not left out", c.Name, c.Err)
				}
				left = append(left, c.Name)
			}
		}}
	tw, err := StartFrom(ctx, filepath.Join(t.TempDir(), "twin"), f)
	if err != nil {
		t.Fatalf("a start with blobs it cannot hold: %v", err)
	}
	defer tw.Close()
	slices.Sort(left)
	if len(left) != 2 || left[0] != "WEBHOOKS/2026/12/2/5/huge.json" || !strings.HasPrefix(left[1], "WEBHOOKS/2026/12/2/5/x.json") {
		t.Fatalf("left out %q: want the huge one and one of x.json and x.json/child.json", left)
	}
}
