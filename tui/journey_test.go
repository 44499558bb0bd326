package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/store"
)

// An event's view follows it across blobs: a quarantine copy's event that was republished once before shows both
// passes, attempt 0 then ≥… quarantined at the cap; [ selects the earlier pass and enter opens its blob.
func TestAnEventsViewShowsItsJourney(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	ctx := context.Background()
	const q = "quarantine/THREAD-REPLIES/2026/11/1/8/2d024900-02b6-4912-df83-32405011c734.json"
	b, err := mem.Read(ctx, q, store.MaxBlobBytes)
	if err != nil {
		t.Fatal(err)
	}
	var evs []map[string]any
	if err := json.Unmarshal(b.Body, &evs); err != nil {
		t.Fatal(err)
	}
	first := evs[0]
	id := first["id"].(string)
	first["id"] = id + "|1"
	first["lastDeliveryAttemptTime"] = "2026-11-01T06:10:00Z"
	body, _ := json.Marshal([]any{first})
	const earlier = "archived/THREAD-REPLIES/2026/11/1/6/0a0a0a0a-0000-0000-0000-000000000001.json"
	if _, err := mem.Write(ctx, earlier, body, store.WriteOptions{ContentType: "application/json"}); err != nil {
		t.Fatal(err)
	}
	hs := newHarness(t, mem, cfg, 140, 40)
	hs.press("2", "<enter>")
	if hs.m.detail().name != q {
		t.Fatalf("opened %s", hs.m.detail().name)
	}
	hs.press("<enter>")
	s := hs.shows("journey: "+id+" — quarantined", "1. dead-lettered 11-01 06:10Z in THREAD-REPLIES/2026/11/1/6/0a0a0a0a", "attempt 1",
		"2. dead-lettered", "▸ 2.", "quarantined (cap)")
	if strings.Contains(s, "attempt 0 ·") {
		t.Fatalf("a quarantine copy's event reads attempt 0:\n%s", s)
	}
	hs.press("[")
	hs.shows("▸ 1.")
	hs.press("<enter>")
	if got := hs.m.detail().name; got != earlier {
		t.Fatalf("enter on the first pass opened %s, want %s", got, earlier)
	}
	// That earlier blob's event table says where its event is now: quarantined, in the copy it came back to.
	hs.shows("NOW", "quarantined …/2d024900")
}

// The main help explains the codes the first screen opens on (one voice, issue 51).
func TestHelpExplainsTheRowCodes(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hs := newHarness(t, mem, cfg, 120, 40)
	hs.press("?")
	for range 40 {
		if strings.Contains(hs.screen(), "row codes") {
			break
		}
		hs.press("<pgdown>")
	}
	hs.shows("row codes", "R2 N1", "≥2 at least the cap", "0∞", "!23h5m")
}

// A status line too long for the screen is cut with an ellipsis, never silently (one voice, issue 51).
func TestALongStatusSaysItIsCut(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hs := newHarness(t, mem, cfg, 80, 24)
	hs.send(statusMsg{text: strings.Repeat("a long status that goes on ", 10) + "END"})
	s := hs.screen()
	lines := strings.Split(s, "\n")
	status := lines[len(lines)-2]
	if !strings.Contains(status, "…") || strings.Contains(status, "END") {
		t.Fatalf("the status line: %q", status)
	}
}

// After a restore from the third row, the cursor stays on the third row — the blob that took its place — not the
// top (one voice, issue 51).
func TestTheCursorStaysWhereTheRestoredBlobWas(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hs := newHarness(t, mem, cfg, 120, 40)
	hs.press("2", "j", "j")
	third := hs.m.table().cursorName()
	hs.press("r")
	hs.shows("quarantined blob(s)?")
	hs.press("f", "y")
	hs.shows("Restore finished")
	hs.press("<esc>")
	tb := hs.m.table()
	if tb.cursorName() == third || tb.cursor != 2 {
		t.Fatalf("after the restore the cursor is on row %d (%s); the restored blob was %s on row 2", tb.cursor, tb.cursorName(), third)
	}
}

// The record's footer says what e does now: follow the action's events, then fold them; the results' and the
// record's footer offer moving both ways.
func TestTheRecordsKeysSayWhatTheyDo(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	o, _ := withRecord(t, mem)
	hs := newHarness(t, mem, cfg, 120, 40, o)
	hs.press("<enter>", "d", "y")
	hs.shows("Drain finished", "↑↓ move")
	hs.press("<esc>", "<esc>", "L")
	hs.shows("e follow", "↑↓ move")
	hs.press("e")
	hs.shows("e fold")
}

// Help at 80 columns breaks a long list of words between them, never inside one (a fresh-eyes audit found
// "…|hand" / "led" in the filter's verdict: list).
func TestHelpBreaksAListBetweenItsWords(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hs := newHarness(t, mem, cfg, 80, 24)
	hs.press("?")
	hs.screen()
	h, ok := hs.m.top().(*help)
	if !ok {
		t.Fatalf("? opened %T", hs.m.top())
	}
	in := false
	for _, l := range h.text.plain {
		if strings.Contains(l, "verdict:cap") {
			in = true
		}
		if !in {
			continue
		}
		if strings.Contains(l, "(blobs that show it)") {
			break
		}
		if end := strings.TrimRight(l, " "); !strings.HasSuffix(end, "|") && !strings.HasSuffix(end, "·") && !strings.HasSuffix(end, ":") {
			t.Errorf("the verdict: list breaks inside a word: %q", l)
		}
	}
	if !in {
		t.Fatal("no verdict: list in the help")
	}
}
