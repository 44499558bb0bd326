package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// cursorRow waits (with a deadline) until the terminal shows exactly one line carrying the cursor's mark and it
// matches re, and returns the screen.
func (tm *tmuxTerm) cursorRow(what string, re *regexp.Regexp) string {
	tm.t.Helper()
	var s string
	var cur []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		s, cur = tm.capture(), nil
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "▸") {
				cur = append(cur, l)
			}
		}
		if len(cur) == 1 && re.MatchString(cur[0]) {
			return s
		}
	}
	tm.t.Fatalf("%s: the cursor's row never showed %s (cursor lines %q):\n%s", what, re, cur, s)
	return ""
}

// The real binary at 80×24: the stranded table scrolled a screenful and more down a row at a time to its last row,
// then back to the top; a fifty-event blob's events likewise. After every key the row under the cursor is on
// screen and is the one the key reached (the table's order worked out here: oldest first, then by name).
func TestTablesScrollInTmux(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "seed", "--dir", dir, "--count", "60")
	// A blob of fifty events, stranded like the rest.
	d, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var evs []string
	for i := 0; i < 50; i++ {
		evs = append(evs, fmt.Sprintf(`{"id":"e%02d-scroll","subject":"/s","eventType":"ProcessWebhook","dataVersion":"1","data":{}}`, i))
	}
	fifty := "WEBHOOKS/2026/11/30/9/5c7011ed-0000-4000-8000-000000000050.json"
	if _, err := d.Write(context.Background(), fifty, []byte("["+strings.Join(evs, ",")+"]"), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := d.Backdate(context.Background(), fifty, time.Now().Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}

	var l struct {
		Blobs []struct {
			Name string `json:"name"`
		} `json:"blobs"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "ls", "--dir", dir, "--pane", "stranded", "--json")), &l); err != nil {
		t.Fatal(err)
	}
	// The table orders by age, then name: the listing's own times, to the nanosecond (ls --json gives seconds).
	full, err := store.ListAll(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	modified := map[string]time.Time{}
	for _, bi := range full.Blobs {
		modified[bi.Name] = bi.LastModified
	}
	sort.Slice(l.Blobs, func(i, j int) bool {
		a, b := modified[l.Blobs[i].Name], modified[l.Blobs[j].Name]
		if !a.Equal(b) {
			return a.Before(b)
		}
		return l.Blobs[i].Name < l.Blobs[j].Name
	})
	n := len(l.Blobs)
	if n < 40 {
		t.Fatalf("%d stranded blobs: not two screenfuls", n)
	}
	tm := newTerm(t, 80, 24, binary(t), "--dir", dir, "--interval", "1h")
	tm.screen(fmt.Sprintf("[1 Stranded %d]", n))
	row := func(i int) *regexp.Regexp {
		return regexp.MustCompile(regexp.QuoteMeta(rules.FileOf(l.Blobs[i].Name)[:6]))
	}
	tm.cursorRow("opening", row(0))
	for i := 1; i < n; i++ {
		tm.keys("Down")
		tm.cursorRow(fmt.Sprintf("↓ ×%d", i), row(i))
	}
	for i := n - 2; i >= 0; i-- {
		tm.keys("Up")
		tm.cursorRow(fmt.Sprintf("↑ back to %d", i), row(i))
	}

	tm.keys("/", "5c7011ed", "Enter")
	tm.screen("filter: 5c7011ed")
	tm.keys("Enter")
	tm.screen("event #0 (50 events")
	for i := 1; i < 50; i++ {
		tm.keys("Down")
		tm.screen(fmt.Sprintf("event #%d (50 events", i))
		tm.cursorRow(fmt.Sprintf("event ↓ ×%d", i), regexp.MustCompile(fmt.Sprintf(`^▸\s+%d e%02d-`, i, i)))
	}
	for i := 48; i >= 0; i-- {
		tm.keys("Up")
		tm.screen(fmt.Sprintf("event #%d (50 events", i))
		tm.cursorRow(fmt.Sprintf("event ↑ back to %d", i), regexp.MustCompile(fmt.Sprintf(`^▸\s+%d e%02d-`, i, i)))
	}
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.capture())
	}
}
