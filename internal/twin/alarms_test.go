package twin

import (
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/replay/rules"

	"github.com/deadletter/deadletter/store"
)

// These tests make each of the twin's safety nets fire. holds (twin_test.go) only shows the nets are quiet on a
// healthy run, which a net that never rings passes as well; here each one is given the fault it exists for — an
// event lost, a copy retriggering the replay, a republish past the cap, an original deleted before its copy, a
// sum that does not add up — and must name it.

// quiet fails the test unless the twin is balanced and has seen no violation yet: the fault a test seeds is then
// the only thing that can ring.
func quiet(t *testing.T, tw *Twin) Account {
	t.Helper()
	return holds(t, tw, "before the fault")
}

// blobsOf lists the twin's directory as it stands, by name.
func blobsOf(t *testing.T, tw *Twin) map[string]store.BlobInfo {
	t.Helper()
	l, err := store.ListAll(context.Background(), tw.dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.BlobInfo{}
	for _, bi := range l.Blobs {
		out[bi.Name] = bi
	}
	return out
}

// oldestRoot is the root dead letter modified longest ago (the incident's month-old stranded blobs), with the
// original ids of the events it holds.
func oldestRoot(t *testing.T, tw *Twin) (store.BlobInfo, []string) {
	t.Helper()
	var oldest store.BlobInfo
	for _, bi := range blobsOf(t, tw) {
		if rules.IsRoot(bi.Name) && (oldest.Name == "" || bi.LastModified.Before(oldest.LastModified) ||
			bi.LastModified.Equal(oldest.LastModified) && bi.Name < oldest.Name) {
			oldest = bi
		}
	}
	if oldest.Name == "" {
		t.Fatal("the incident has no root blob")
	}
	b, err := tw.dir.Read(context.Background(), oldest.Name, store.MaxBlobBytes)
	if err != nil {
		t.Fatal(err)
	}
	ids := eventIDs(b.Body, tw.cfg.Separator)
	if len(ids) == 0 {
		t.Fatalf("%s holds no event", oldest.Name)
	}
	sort.Strings(ids)
	return oldest, ids
}

// violated is the twin's violations that mention every one of words.
func violated(tw *Twin, words ...string) []string {
	var out []string
	for _, v := range tw.State().Violations {
		all := true
		for _, w := range words {
			all = all && strings.Contains(v, w)
		}
		if all {
			out = append(out, v)
		}
	}
	return out
}

// trigger hands the replay function a BlobCreated for name now, past the trigger's filter (what a filter that
// let it through would deliver).
func trigger(tw *Twin, name string) {
	heap.Push(&tw.st.Queue, &pending{Due: tw.st.Now, Sub: ReplayFunction, Blob: name, First: tw.st.Now})
}

// An event whose blob vanishes behind the twin's back (deleted by hand, not by the lifecycle rule) is found
// nowhere: the account names exactly its events, no longer counts them in blobs, and does not balance.
func TestALostEventIsNamed(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	before := quiet(t, tw)
	bi, ids := oldestRoot(t, tw)
	if err := tw.dir.Delete(context.Background(), bi.Name, ""); err != nil {
		t.Fatal(err)
	}
	after, err := tw.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(after.Nowhere) != fmt.Sprint(ids) {
		t.Fatalf("deleted %s holding %v; the account finds nowhere %v", bi.Name, ids, after.Nowhere)
	}
	if after.InBlobs != before.InBlobs-len(ids) || after.Lost != before.Lost {
		t.Fatalf("in blobs %d → %d, lost %d → %d: the %d lost event(s) are still counted somewhere", before.InBlobs, after.InBlobs,
			before.Lost, after.Lost, len(ids))
	}
	if after.Balanced() {
		t.Fatalf("an account with %d event(s) nowhere balances: %s", len(ids), after)
	}
	if want := fmt.Sprintf("; %d NOWHERE", len(ids)); !strings.HasSuffix(after.String(), want) {
		t.Fatalf("the account says %q, not %q", after, want)
	}
}

// The sum is checked on its own, not only the list of events nowhere: every term one off unbalances it.
func TestTheAccountChecksItsSum(t *testing.T) {
	t.Parallel()
	ok := Account{Published: 20, Delivered: 8, OnTheirWay: 5, InBlobs: 4, Lost: 3, Nowhere: []string{}}
	if !ok.Balanced() {
		t.Fatalf("%s does not balance", ok)
	}
	for _, tc := range []struct {
		name string
		off  func(*Account)
	}{
		{"published", func(a *Account) { a.Published++ }},
		{"delivered", func(a *Account) { a.Delivered++ }},
		{"on their way", func(a *Account) { a.OnTheirWay-- }},
		{"in blobs", func(a *Account) { a.InBlobs++ }},
		{"lost", func(a *Account) { a.Lost-- }},
		{"nowhere", func(a *Account) { a.Nowhere = []string{"e1"} }},
	} {
		a := ok
		tc.off(&a)
		if a.Balanced() {
			t.Errorf("%s one off: %s balances", tc.name, a)
		}
	}
}

// A BlobCreated for one of the replay's own copies that gets past the trigger's filter is refused by the
// function's guard — nothing republished, nothing deleted — and the twin names it as a violation.
func TestASelfRetriggerIsAViolation(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	quiet(t, tw)
	var copies []string
	for name := range blobsOf(t, tw) {
		if !rules.IsRoot(name) {
			copies = append(copies, name)
		}
	}
	sort.Strings(copies)
	if len(copies) < 2 {
		t.Fatalf("the incident has %d copies", len(copies))
	}
	archived, quarantined := "", ""
	for _, c := range copies {
		if isArchived(c) && archived == "" {
			archived = c
		} else if !isArchived(c) && quarantined == "" {
			quarantined = c
		}
	}
	if archived == "" || quarantined == "" {
		t.Fatalf("no archived and quarantine copy among %v", copies)
	}
	runs := len(tw.State().Runs)
	trigger(tw, archived)
	trigger(tw, quarantined)
	if _, err := tw.Advance(context.Background(), tw.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{archived, quarantined} {
		if v := violated(tw, "triggered by its own copy", c); len(v) != 1 {
			t.Errorf("%s retriggered the replay; violations: %v", c, tw.State().Violations)
		}
		if _, ok := blobsOf(t, tw)[c]; !ok {
			t.Errorf("the replay deleted its own copy %s", c)
		}
	}
	for _, r := range tw.State().Runs[runs:] {
		if (r.Blob == archived || r.Blob == quarantined) && (r.Published != 0 || r.Deleted || r.Archived || r.Quarantine != "") {
			t.Errorf("the replay handled its own copy: %+v", r)
		}
	}
}

// The trigger's filter keeps the replay's copies from it: a copy written by another command (a restore's
// quarantine copy, say) reaches no run, and so no violation.
func TestTheFilterKeepsCopiesFromTheTrigger(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	quiet(t, tw)
	ctx := context.Background()
	body := []byte(`[{"id":"by-hand","subject":"/s","eventType":"ProcessWebhook","eventTime":"2026-12-01T11:00:00Z","data":{},"dataVersion":"1"}]`)
	names := []string{rules.ArchivedPrefix + "WEBHOOKS/2026/12/1/11/by-hand.json", rules.QuarantinePrefix + "WEBHOOKS/2026/12/1/11/by-hand.json"}
	for _, n := range names {
		if _, err := tw.dir.Write(ctx, n, body, store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	runs := len(tw.State().Runs)
	if _, err := tw.Advance(ctx, tw.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, r := range tw.State().Runs[runs:] {
		for _, n := range names {
			if r.Blob == n {
				t.Errorf("the trigger delivered the copy %s", n)
			}
		}
	}
	if v := tw.State().Violations; len(v) > 0 {
		t.Fatalf("violations: %v", v)
	}
}

// The topic sees every republished id: at the cap it passes, one past it the twin names the event.
func TestARepublishPastTheCapIsAViolation(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	quiet(t, tw)
	sep, cap := tw.cfg.Separator, tw.cfg.MaxReplays
	ev := func(attempt int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"id":"capped%s%d","subject":"/webhooks/x","eventType":"ProcessWebhook","eventTime":"2026-12-01T11:00:00Z","data":{},"dataVersion":"1.0","metadataVersion":"1"}`, sep, attempt))
	}
	pub := &publisher{tw: tw}
	if err := pub.Publish(context.Background(), []json.RawMessage{ev(cap)}); err != nil {
		t.Fatal(err)
	}
	if v := tw.State().Violations; len(v) > 0 {
		t.Fatalf("a republish at the cap (%d) is a violation: %v", cap, v)
	}
	if err := pub.Publish(context.Background(), []json.RawMessage{ev(cap + 1)}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("capped%s%d", sep, cap+1)
	if v := violated(tw, "republished past the cap", want); len(v) != 1 {
		t.Fatalf("republished %s past the cap of %d; violations: %v", want, cap, tw.State().Violations)
	}
}

// dropCopies is a container that says it wrote the replay's copies but did not: the replay then deletes an
// original whose copy never landed.
type dropCopies struct{ store.Container }

func (d dropCopies) Write(ctx context.Context, name string, body []byte, opts store.WriteOptions) (store.BlobInfo, error) {
	if !rules.IsRoot(name) {
		return store.BlobInfo{Name: name, ETag: "\"dropped\"", Size: int64(len(body))}, nil
	}
	return d.Container.Write(ctx, name, body, opts)
}

// An original the replay deletes is checked for the copies its plan names: when they did not land, each deletion
// is a violation naming the original and the copy.
func TestAnOriginalDeletedBeforeItsCopyIsAViolation(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	quiet(t, tw)
	tw.c.Container = dropCopies{tw.dir}
	var roots []string
	for name := range blobsOf(t, tw) {
		if rules.IsRoot(name) {
			roots = append(roots, name)
		}
	}
	sort.Strings(roots)
	runs := len(tw.State().Runs)
	for _, r := range roots {
		trigger(tw, r)
	}
	if _, err := tw.Advance(context.Background(), tw.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range tw.State().Runs[runs:] {
		if !r.Deleted {
			continue
		}
		copies := []string{r.Quarantine}
		if r.Archived {
			copies = append(copies, rules.ArchivedPrefix+r.Blob)
		}
		for _, c := range copies {
			if c == "" {
				continue
			}
			checked++
			if v := violated(tw, r.Blob+" was deleted before its copy "+c); len(v) != 1 {
				t.Errorf("%s deleted, its copy %s never landed; violations: %v", r.Blob, c, tw.State().Violations)
			}
		}
	}
	if checked == 0 {
		t.Fatalf("no run deleted an original with a copy (%d runs)", len(tw.State().Runs)-runs)
	}
}

// The lifecycle rule deletes a blob at exactly the retention after its last modification: one second before it
// is there, at the retention it is gone and its events are lost — counted lost, so the account still balances.
func TestTheLifecycleDeletesAtExactlyTheRetention(t *testing.T) {
	t.Parallel()
	tw, _ := started(t, "incident")
	quiet(t, tw)
	bi, ids := oldestRoot(t, tw)
	at := bi.LastModified.Add(Config().Retention)
	if !at.After(tw.Now()) {
		t.Fatalf("%s is due at %v, before the opening %v", bi.Name, at, tw.Now())
	}
	lost := tw.State().Totals.Lost
	if _, err := tw.Advance(context.Background(), at.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, ok := blobsOf(t, tw)[bi.Name]; !ok {
		t.Fatalf("%s (modified %v) deleted a second before the retention", bi.Name, bi.LastModified)
	}
	if got := tw.State().Totals.Lost; got != lost {
		t.Fatalf("%d event(s) lost a second before the retention", got-lost)
	}
	if _, err := tw.Advance(context.Background(), at); err != nil {
		t.Fatal(err)
	}
	if _, ok := blobsOf(t, tw)[bi.Name]; ok {
		t.Fatalf("%s (modified %v) still there at the retention %v", bi.Name, bi.LastModified, at)
	}
	if got := tw.State().Totals.Lost - lost; got < len(ids) {
		t.Fatalf("%d event(s) lost with %s, which held %d", got, bi.Name, len(ids))
	}
	holds(t, tw, "at the retention")
}

// fingerprint is a hash of everything a twin's run leaves: every blob's name, bytes, metadata and time, and the
// twin's state (but for the ETags it saw).
func fingerprint(t *testing.T, tw *Twin) map[string][32]byte {
	t.Helper()
	ctx := context.Background()
	out := map[string][32]byte{}
	for name, bi := range blobsOf(t, tw) {
		b, err := tw.dir.Read(ctx, name, store.MaxBlobBytes)
		if err != nil {
			t.Fatal(err)
		}
		meta, _ := json.Marshal(b.Metadata)
		out[name] = sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%s\x00%s", b.Body, meta, bi.LastModified.Format(time.RFC3339Nano), bi.ContentType)))
	}
	state := tw.State()
	kn := map[string]time.Time{} // (an ETag names the file's inode: the machine's, not the run's)
	for _, n := range state.known.names() {
		kn[n], _ = state.known.lastModified(n)
	}
	st, err := json.Marshal(struct {
		State
		Known map[string]time.Time
	}{state, kn})
	if err != nil {
		t.Fatal(err)
	}
	out["(state)"] = sha256.Sum256(st)
	return out
}

// The same seed gives the same estate, byte for byte: every blob's content hash, and the state, after the opening
// and after six more hours of replays; another seed gives another.
func TestTheTwinIsDeterministicByContent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run := func(seed int64) map[string][32]byte {
		tw, err := Start(ctx, t.TempDir(), made.Twin, "incident", seed, opens)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Advance(ctx, tw.Now().Add(6*time.Hour)); err != nil {
			t.Fatal(err)
		}
		return fingerprint(t, tw)
	}
	a, b := run(1), run(1)
	if len(a) < 10 || len(a) != len(b) {
		t.Fatalf("%d blobs, then %d", len(a), len(b))
	}
	for n, h := range a {
		if b[n] != h {
			t.Errorf("%s differs between two runs of one seed", n)
		}
	}
	same := 0
	for n, h := range run(2) {
		if n != "(state)" && a[n] == h {
			same++
		}
	}
	if same == len(a)-1 {
		t.Fatal("seeds 1 and 2 leave the same blobs: the hash does not see the run")
	}
}
