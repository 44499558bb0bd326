package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// Restored from its detail, a quarantine copy's detail says where it went and offers nothing it cannot do; a
// second r says it was already restored (never "could not be read … try again").
func TestDetailFollowsARestore(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hs := newHarness(t, mem, cfg, 120, 40)
	hs.press("2", "<enter>")
	name := hs.m.detail().name
	hs.shows("quarantine ·", "r restore")
	hs.press("r")
	hs.shows("Restore 1 quarantined blob(s)?", "It takes this blob")
	hs.press("y")
	hs.shows("Restore finished", "1 restored")
	hs.press("<esc>")
	s := hs.shows("Restored as ", ".restored-")
	if body := strings.Join(strings.Split(s, "\n")[2:], "\n"); strings.Contains(body, "EXPIRING") || strings.Contains(lastLine(s), "r restore") {
		t.Fatalf("the detail still shows the blob as it was before the restore:\n%s", s)
	}
	hs.press("r")
	hs.shows("nothing to do here:", "Restored as ")
	hs.lacks("try again", "could not be read")
	if _, err := mem.Stat(context.Background(), name); err == nil {
		t.Fatalf("%s is still in quarantine", name)
	}
	// The table and the header followed too: one quarantine blob fewer, without a key pressed.
	hs.press("<esc>")
	hs.shows("2 Quarantine 6")
}

// Drained from its detail, a stranded blob's detail shows the blob as it is now — re-uploaded, young, drained
// once — and a second d says why it does not apply, not "changed … rewritten since it was listed".
func TestDetailFollowsADrain(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hs := newHarness(t, mem, cfg, 120, 40)
	hs.press("<enter>")
	name := hs.m.detail().name
	before, _ := mem.Stat(context.Background(), name)
	hs.shows("stranded ·", "d drain")
	hs.press("d")
	hs.shows("Drain 1 stranded blob(s)?", "It takes this blob")
	hs.press("y")
	hs.shows("Drain finished", "1 drained")
	hs.press("<esc>")
	after, _ := mem.Stat(context.Background(), name)
	if after.ETag == before.ETag {
		t.Fatal("the blob was not rewritten")
	}
	s := hs.shows("drained 1×", "live ·", "0s old")
	if strings.Contains(lastLine(s), "d drain") {
		t.Fatalf("the detail still offers the drain:\n%s", s)
	}
	hs.press("d")
	hs.shows("drain applies to stranded blobs; this one is live")
	hs.lacks("changed", "rewritten since")
}

// Enter on a result opens the blob where it is now: a restore's new copy at the root.
func TestResultOpensWhereTheBlobWent(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hs := newHarness(t, mem, cfg, 120, 40)
	hs.press("2", "r", "y")
	hs.shows("Restore finished", "1 restored")
	target := hs.m.results.results[0].Target
	if target == "" || !rules.IsRoot(target) {
		t.Fatalf("no target: %+v", hs.m.results.results[0])
	}
	hs.press("<enter>")
	if d := hs.m.detail(); d == nil || d.name != target {
		t.Fatalf("enter on the result did not open %s:\n%s", target, hs.screen())
	}
	hs.shows("live ·")
	if _, err := mem.Stat(context.Background(), target); err != nil {
		t.Fatal(err)
	}
	_ = store.MaxBlobBytes
}

// r acts on the row under the cursor (not on every row the filter shows); ctrl+a then r on them all.
func TestRestoreTakesTheCursorRow(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hs := newHarness(t, mem, cfg, 120, 40)
	hs.press("2", "/", "sub:push-notifications", "<enter>")
	shown := len(hs.m.table().rows)
	if shown < 2 {
		t.Fatalf("the filter shows %d", shown)
	}
	hs.press("j", "r")
	cursor := hs.m.table().cursorName()
	hs.shows("quarantined blob(s)?", "It takes the row under the cursor", cursor)
	hs.press("<esc>", "<ctrl+a>", "r")
	hs.shows("the 2 selected of 2 quarantine shown (filter 'sub:push-notifications')")
}

// An open detail follows the container with no key pressed: its age ticks on every listing, and once the replay
// takes the drained blob the same detail says it was archived, when, and opens the archived record on enter. The
// results of the drain, opened again, say what became of the blob.
func TestDetailFollowsTheReplayWithoutAKey(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	ctx := context.Background()
	rec, _ := withRecord(t, mem)
	hs := newHarness(t, mem, cfg, 120, 40, rec)
	hs.press("<enter>")
	name := hs.m.detail().name
	hs.press("d", "y")
	hs.shows("Drain finished", "1 drained")
	hs.press("<esc>")
	hs.shows("live ·", "0s old")

	// A minute of the service's clock and the next poll: the age moves on, nothing pressed.
	mem.Clock = mem.Clock.Add(time.Minute)
	hs.advance(time.Minute)
	hs.shows("live ·", "1m old")

	// The replay takes it: its archived record is written, the original deleted.
	b, err := mem.Read(ctx, name, store.MaxBlobBytes)
	if err != nil {
		t.Fatal(err)
	}
	mem.Clock = mem.Clock.Add(time.Minute)
	archived, _ := rules.Twins(name)
	if _, err := mem.Write(ctx, archived, b.Body, store.WriteOptions{ContentType: "application/json"}); err != nil {
		t.Fatal(err)
	}
	if err := mem.Delete(ctx, name, b.ETag); err != nil {
		t.Fatal(err)
	}
	hs.advance(time.Minute)
	hs.shows("Gone: the replay took it at 2026-11-30 12:02:00Z", "republished its events", "enter open")
	hs.press("<enter>")
	if d := hs.m.detail(); d == nil || d.name != archived {
		t.Fatalf("enter on the gone blob did not open its archived record:\n%s", hs.screen())
	}
	hs.press("<esc>", "L", "j") // the record: the drain, and what became of its blob (whole under the cursor)
	hs.shows("drain by", "drained", "→ now", "replayed: archived at 2026-11-30 12:02:00Z")
}
