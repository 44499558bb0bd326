package tui

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// cursorLines are the screen's lines that carry the cursor's mark.
func cursorLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " │"), "▸") {
			out = append(out, l)
		}
	}
	return out
}

// strandedOrder is the stranded pane as the table sorts it by default (oldest first, then by name), worked out
// here from the listing rather than asked of the table.
func strandedOrder(t *testing.T, c store.Container, cfg rules.Config) []string {
	t.Helper()
	l, err := store.ListAll(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var items []store.BlobInfo
	for _, bi := range l.Blobs {
		if cfg.MakeItem(bi, fixedNow).Pane == rules.PaneStranded {
			items = append(items, bi)
		}
	}
	sort.Slice(items, func(i, j int) bool {
		if !items[i].LastModified.Equal(items[j].LastModified) {
			return items[i].LastModified.Before(items[j].LastModified)
		}
		return items[i].Name < items[j].Name
	})
	names := make([]string, len(items))
	for i, bi := range items {
		names[i] = bi.Name
	}
	return names
}

// The blob table scrolled a screenful and more down, then all the way back up, a row at a time and a page at a
// time: after every key exactly one row carries the cursor, on screen, and it is the blob the key should have
// reached.
func TestTheTableScrollsWithItsCursor(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	order := strandedOrder(t, mem, cfg)
	hs := newHarness(t, mem, cfg, 80, 24)
	hs.shows(fmt.Sprintf("[1 Stranded %d]", len(order)))
	if len(order) < 2*hs.m.table().height {
		t.Fatalf("%d stranded rows for a table %d high: no scrolling to test", len(order), hs.m.table().height)
	}
	at := func(i int, after string) {
		t.Helper()
		s := hs.screen()
		cur := cursorLines(s)
		// The table cuts names in the middle: the file's first six characters start the NAME cell.
		want := textfmt.Printable(rules.FileOf(order[i]))[:6]
		if len(cur) != 1 || !strings.Contains(cur[0], want) {
			t.Fatalf("after %s the cursor should be on row %d (%s): cursor lines %q\n%s", after, i, order[i], cur, s)
		}
	}
	at(0, "opening")
	for i := 1; i < len(order); i++ {
		hs.press("<down>")
		at(i, fmt.Sprintf("↓ ×%d", i))
	}
	hs.press("<down>") // past the end: stays on the last
	at(len(order)-1, "↓ past the end")
	for i := len(order) - 2; i >= 0; i-- {
		hs.press("<up>")
		at(i, fmt.Sprintf("↑ back to %d", i))
	}
	page := hs.m.table().height
	hs.press("<pgdown>")
	at(page, "pgdn")
	hs.press("<pgdown>")
	at(min(2*page, len(order)-1), "pgdn ×2")
	hs.press("G")
	at(len(order)-1, "G")
	hs.press("<pgup>")
	at(len(order)-1-page, "G then pgup")
	hs.press("g")
	at(0, "g")
}

// A blob's events table, fifty events at 80×24: scrolled to the last a row at a time and back, the cursor's event
// is on screen after every key and is the one the counter names.
func TestTheEventsTableScrollsWithItsCursor(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	putFiftyEvents(t, mem)
	hs := newHarness(t, mem, cfg, 80, 24)
	hs.press("/5f0e1d2c", "<enter>", "<enter>")
	hs.shows("event #0 (50 events")
	at := func(i int) {
		t.Helper()
		s := hs.shows(fmt.Sprintf("event #%d (50 events", i))
		cur := cursorLines(s)
		if len(cur) != 1 || !regexp.MustCompile(fmt.Sprintf(`^▸\s+%d a0000`, i)).MatchString(cur[0]) {
			t.Fatalf("event %d: cursor lines %q\n%s", i, cur, s)
		}
	}
	for i := 1; i < 50; i++ {
		hs.press("<down>")
		at(i)
	}
	for i := 48; i >= 0; i-- {
		hs.press("<up>")
		at(i)
	}
}

// The results of a drain of every stranded blob, longer than their box: scrolled to the last and back, the
// result under the cursor is on screen and named after every key.
func TestTheResultsScrollWithTheirCursor(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	hs := newHarness(t, mem, cfg, 80, 24)
	hs.press("<ctrl+a>", "d", "y")
	hs.shows("Drain finished")
	n := len(hs.m.results.results)
	if n < 2*hs.m.results.listHeight() {
		t.Fatalf("%d results in a box %d high: no scrolling to test", n, hs.m.results.listHeight())
	}
	at := func(i int) {
		t.Helper()
		s := hs.shows(fmt.Sprintf("result %d of %d", i+1, n))
		cur := cursorLines(s)
		name := hs.m.results.results[i].Name
		if len(cur) != 1 || !strings.Contains(s, textfmt.Printable(rules.FileOf(name))[:8]) {
			t.Fatalf("result %d (%s): cursor lines %q\n%s", i, name, cur, s)
		}
	}
	for i := 1; i < n; i++ {
		hs.press("<down>")
		at(i)
	}
	for i := n - 2; i >= 0; i-- {
		hs.press("<up>")
		at(i)
	}
}
