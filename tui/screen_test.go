package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/replay/rules"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// fiftyEvents is a stranded webhooks blob of 50 events of mixed attempts and reasons, 5 days old.
const fiftyEvents = "WEBHOOKS/2026/11/25/12/5f0e1d2c-3b4a-4958-a6b7-c8d9e0f1a2b3.json"

func putFiftyEvents(t testing.TB, mem *storetest.Mem) {
	t.Helper()
	reasons := [][3]string{{"MaxDeliveryAttemptsExceeded", "Busy", "503"}, {"TimeToLiveExceeded", "TimedOut", "408"},
		{"UndeliverableDueToHttpBadRequest", "BadRequest", "400"}}
	var evs []string
	for i := 0; i < 50; i++ {
		id := fmt.Sprintf("%08x-1111-4222-8333-%012x", 0xa0000000+i, 0xbeef00+i)
		if i%3 != 0 {
			id = rules.FormatID(id, rules.Attempt(i%3), rules.DefaultSeparator)
		}
		r := reasons[i%len(reasons)]
		evs = append(evs, fmt.Sprintf(`{"id":%q,"subject":"/webhooks/%04d","eventType":"ProcessWebhook","eventTime":"2026-11-25T11:%02d:00Z",`+
			`"data":{"hook":%d},"dataVersion":"1.0","metadataVersion":"1","deadLetterReason":%q,"deliveryAttempts":%d,`+
			`"lastDeliveryOutcome":%q,"lastHttpStatusCode":%s,"publishTime":"2026-11-25T11:%02d:01Z","lastDeliveryAttemptTime":"2026-11-25T11:59:%02dZ"}`,
			id, i, i, i, r[0], 7+i%4, r[1], r[2], i, i))
	}
	ctx := context.Background()
	if _, err := mem.Write(ctx, fiftyEvents, []byte("["+strings.Join(evs, ",")+"]"), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	mem.Backdate(ctx, fiftyEvents, fixedNow.Add(-5*24*time.Hour))
}

// Golden screens at 80×24 and 120×40 (go test ./tui -update rewrites tui/testdata): the table, the overview, a
// quarantined blob's detail, a 50-event blob's detail (its events as a table), a drain question, help.
func TestGolden(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	putFiftyEvents(t, mem)
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		w, h := sz[0], sz[1]
		shot := func(name string, hs *harness) {
			t.Run(fmt.Sprintf("%s-%dx%d", name, w, h), func(t *testing.T) {
				s := hs.screen()
				if strings.Contains(s, "\x1b") {
					t.Fatalf("the ASCII screen holds an escape sequence:\n%q", s)
				}
				checkSize(t, name, s, w, h)
				golden.RequireEqual(t, []byte(s))
			})
		}
		hs := newHarness(t, mem, cfg, w, h)
		shot("stranded", hs)
		hs.press("o")
		shot("overview", hs)
		hs.press("2")
		shot("quarantine", hs)
		hs.press("<enter>")
		shot("quarantine-detail", hs)
		hs.press("<esc>", "1", "/5f0e1d2c", "<enter>", "<enter>")
		shot("fifty-events", hs)
		hs.press("<esc>", "<esc>", "d")
		shot("drain-confirm", hs)
		hs.press("<esc>", "?")
		shot("help", hs)
	}
}

// At 120×40 a 50-event blob's detail shows at least 25 events on its first screen, one line each.
func TestFiftyEventsOnOneScreen(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	putFiftyEvents(t, mem)
	hs := newHarness(t, mem, cfg, 120, 40)
	hs.press("/5f0e1d2c", "<enter>", "<enter>")
	hs.shows("event #0 (50 events: #0–#49)")
	rows := 0
	for _, l := range strings.Split(hs.screen(), "\n") {
		if regexp.MustCompile(`^[ ▸]\s+\d+ a0000`).MatchString(l) {
			rows++
		}
	}
	if rows < 25 {
		t.Fatalf("%d events on the first screen:\n%s", rows, hs.screen())
	}
}

// Every screen — table, overview, detail, every dialog, help, the too-small screen — is exactly its window at
// every size, so nothing a blob holds can push the layout off the terminal; and it is that screen, not a blank
// one of the right size: at 80×24 and over it shows what marks it, below it the too-small notice.
func TestEveryScreenFitsItsWindow(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	sizes := [][2]int{{80, 24}, {81, 25}, {100, 30}, {120, 40}, {160, 48}, {200, 60}, {250, 70}, {79, 24}, {80, 23}, {60, 15}, {20, 5}, {1, 1}}
	screens := []struct {
		name string
		keys []string
		mark string
	}{
		{"stranded", nil, "[1 Stranded 38]"}, {"overview", []string{"o"}, "[o Overview]"},
		{"overview-grid", []string{"o", "<down>", "<right>"}, "[o Overview]"},
		{"quarantine", []string{"2"}, "[2 Quarantine 7]"}, {"detail", []string{"<enter>"}, "event #0 (5 events: #0–#4)"},
		{"detail-end", []string{"<enter>", "G"}, "event #4 (5 events: #0–#4)"}, {"search", []string{"<enter>", "/", "ttl"}, "search: ttl"},
		{"drain", []string{"d"}, "Drain 1 stranded blob(s)?"}, {"restore", []string{"2", "r"}, "Restore 1 quarantined blob(s)?"},
		{"ack", []string{"a"}, "Acknowledge 1 blob(s)?"}, {"help", []string{"?"}, "keys: stranded table"},
		{"help-end", []string{"?", "<pgdown>", "<pgdown>"}, "keys: stranded table"},
		{"filter", []string{"/", "webhooks"}, "[1 Stranded 6/38]"}, {"results", []string{"2", "r", "y"}, "Restore finished"},
	}
	const tooSmall = "deadletter needs at least 80×24"
	for _, sc := range screens {
		for _, sz := range sizes {
			hs := newHarness(t, mem.Clone(), cfg, sz[0], sz[1])
			hs.send(tea.WindowSizeMsg{Width: 120, Height: 40}) // act at a size where keys act…
			hs.press(sc.keys...)
			hs.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]}) // …then look at every size
			s := hs.screen()
			checkSize(t, sc.name, s, sz[0], sz[1])
			first := strings.TrimSpace(strings.SplitN(s, "\n", 2)[0])
			switch {
			case sz[0] < 80 || sz[1] < 24:
				if first == "" || !strings.HasPrefix(tooSmall, first) && !strings.HasPrefix(first, tooSmall) {
					t.Errorf("%s at %dx%d is not the too-small notice:\n%s", sc.name, sz[0], sz[1], s)
				}
			case !strings.Contains(s, sc.mark) || !strings.HasPrefix(first, "deadletter  mem/"):
				t.Errorf("%s at %dx%d lacks its header or %q:\n%s", sc.name, sz[0], sz[1], sc.mark, s)
			}
		}
	}
}

// Behind the "window too small" screen no key acts: d then y at 60×15 drains nothing; q still quits.
func TestTooSmallSwallowsKeys(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 10)
	before := etags(t, mem)
	hs := newHarness(t, mem, cfg, 60, 15)
	hs.press("d", "y", "2", "r", "y", "a", "<enter>")
	s := hs.shows("needs at least 80×24", "every key but q is dropped", `"enter" was dropped`)
	if after := etags(t, mem); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a key acted behind the too-small screen:\n%s", s)
	}
	checkSize(t, "too small", s, 60, 15)
	hs.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	hs.shows("[1 Stranded")
	hs.lacks("Drain") // nothing was queued behind the screen either
}

func etags(t *testing.T, c store.Container) map[string]string {
	t.Helper()
	l, err := store.ListAll(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, b := range l.Blobs {
		m[b.Name] = b.ETag
	}
	return m
}

// Drain and restore act on what the operator sees: the selection (ctrl+a: every row the filter shows), else the
// row under the cursor — and the confirmation says which. A selection the filter hides is dropped, and the status
// line says how many.
func TestActionsTakeWhatIsShown(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	hs := newHarness(t, mem, cfg, 120, 40)
	stranded := len(hs.m.tables[0].order)
	hs.press("<space>", "<space>") // two selected, in the first rows
	hs.shows("2 selected")
	hs.press("/", "webhooks", "<enter>")
	shown := len(hs.m.tables[0].rows)
	if shown == 0 || shown >= stranded {
		t.Fatalf("the filter shows %d of %d", shown, stranded)
	}
	hs.shows("2 selected blob(s) hidden by the filter were unselected")
	if tabs := strings.Split(hs.screen(), "\n")[2]; strings.Contains(tabs, "selected") {
		t.Fatalf("hidden selections still counted: %q", tabs)
	}
	hs.press("d") // nothing selected: the row under the cursor
	hs.shows("Drain 1 stranded blob(s)?", "It takes the row under the cursor")
	hs.press("<esc>", "<ctrl+a>", "d")
	hs.shows(fmt.Sprintf("Drain %d stranded blob(s)?", shown), fmt.Sprintf("the %d selected of %d stranded shown (filter 'webhooks')", shown, shown))
	hs.press("y")
	hs.shows("Drain finished", fmt.Sprintf("%d drained", shown))
	// Only the shown blobs were drained.
	drained := 0
	l, _ := store.ListAll(context.Background(), mem)
	for _, b := range l.Blobs {
		if _, ok := blob.MetaGet(b.Metadata, rules.MetaDrainCount); ok {
			drained++
			if !strings.HasPrefix(b.Name, "WEBHOOKS/") {
				t.Fatalf("drained %s, which the filter did not show", b.Name)
			}
		}
	}
	if drained != shown {
		t.Fatalf("drained %d, shown %d", drained, shown)
	}
	// With a selection under the filter, only the selection.
	hs.press("<esc>", "<esc>") // results closed, then the filter cleared
	hs.lacks("filter:")
	hs.press("<space>")
	hs.press("d")
	hs.shows("Drain 1 stranded blob(s)?", "the 1 selected of ")
}

// A confirmation taller than the screen keeps its key line and scrolls its body; results wrap, stay open on other
// keys, scroll by page, and come back with L.
func TestTallDialogsKeepTheirKeys(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	rec, _ := withRecord(t, mem)
	hs := newHarness(t, mem, cfg, 80, 24, rec)
	hs.press("2", "<ctrl+a>", "r")
	s := hs.shows("Restore", "y confirm", "esc cancel", "lines 1–")
	checkSize(t, "tall confirm", s, 80, 24)
	hs.press("<pgdown>")
	hs.shows("y confirm", "esc cancel")
	hs.press("y")
	s = hs.shows("Restore finished", "esc close", "▸ ")
	checkSize(t, "tall results", s, 80, 24)
	// Every result is there whole when the cursor is on it: wrapped over lines, never cut.
	for i, r := range hs.m.results.results {
		if i > 0 {
			hs.press("j")
		}
		var text strings.Builder
		for _, l := range strings.Split(hs.screen(), "\n") {
			if i := strings.Index(l, "│ "); i >= 0 {
				text.WriteString(strings.TrimRight(strings.TrimSuffix(strings.TrimRight(l[i+len("│ "):], " "), "│"), " "))
			}
		}
		for _, name := range []string{r.Name, r.Target} {
			if !strings.Contains(strings.ReplaceAll(text.String(), " ", ""), strings.ReplaceAll(name, " ", "")) {
				t.Fatalf("%s is not shown whole in the results:\n%s", name, hs.screen())
			}
		}
	}
	hs.press("x", "z", "<pgdown>", "G")
	hs.shows("Restore finished") // only esc or enter closes results
	hs.press("<esc>")
	hs.lacks("Restore finished")
	hs.press("L") // the record keeps them
	hs.shows("restore by", "restored")
}

// A failed refresh keeps the data with STALE and the retry countdown in the header, at 80 columns too; a first
// load that fails shows why instead of zero counts that look healthy.
func TestStaleAndFailedLoads(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 10)
	fl := &flaky{Container: mem}
	hs := newHarness(t, fl, cfg, 80, 24, readOnly, func(o *Options) { o.Session.Loader().Config.Handlers = nil })
	hs.shows("READ-ONLY", "NO --handlers", "[1 Stranded")
	fl.fail(errors.New("dial tcp: connection refused"))
	hs.advance(hs.m.opt.Interval) // the next poll fails
	s := hs.shows("STALE since 12:00:00Z · retry in 59s", "READ-ONLY", "NO --handlers", "[1 Stranded", "listing failed")
	checkSize(t, "stale", s, 80, 24)
	hs.advance(20 * time.Second)
	hs.shows("retry in 39s")
	fl.fail(nil)
	hs.advance(hs.m.opt.Interval)
	hs.lacks("STALE")

	bad := &flaky{Container: storetest.NewMem(fixedNow)}
	bad.fail(errors.New("403 forbidden: grant Storage Blob Data Reader"))
	hs = newHarness(t, bad, cfg, 80, 24)
	hs.shows("Could not read the container", "not even that it is", "Storage Blob Data Reader", "no counts yet")
	hs.lacks("healthy", "Stranded 0")
}

// flaky is a container whose listing can be made to fail.
type flaky struct {
	store.Container
	err error
}

func (f *flaky) fail(err error) { f.err = err }

func (f *flaky) List(ctx context.Context, prefix string, visit func(store.Page) error) error {
	if f.err != nil {
		return f.err
	}
	return f.Container.List(ctx, prefix, visit)
}

// The table names each blob (the GUID, shortened from the middle) so two of one subscription and hour can be
// told apart; a wide terminal gives the subscription no more than it needs; the sort arrow always shows.
func TestTableColumns(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	hs := newHarness(t, mem, cfg, 80, 24)
	hs.shows("NAME")
	if !regexp.MustCompile(`[0-9a-f]{6}…[0-9a-f]{6}`).MatchString(hs.screen()) {
		t.Fatalf("80 columns do not show both ends of the GUID:\n%s", hs.screen())
	}
	hs.press("s", "s", "s")
	if !strings.ContainsAny(strings.Split(hs.screen(), "\n")[3], "↑↓") {
		t.Fatalf("no sort arrow at 80 columns:\n%s", hs.screen())
	}
	hs = newHarness(t, mem, cfg, 250, 40)
	head := strings.Split(hs.screen(), "\n")[3]
	sub, name := strings.Index(head, "SUBSCRIPTION"), strings.Index(head, "HOUR")
	if name-sub > 24 {
		t.Fatalf("SUBSCRIPTION takes %d columns at 250:\n%s", name-sub, head)
	}
	if !regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).MatchString(hs.screen()) {
		t.Fatalf("a wide terminal does not show whole GUIDs:\n%s", hs.screen())
	}
}

// The detail: top and bottom, pages, a search with n/N, a position; esc goes back, q quits; its footer lists
// only keys that work there.
func TestDetailKeys(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 10)
	hs := newHarness(t, mem, cfg, 100, 30)
	hs.press("<enter>")
	hs.shows("[events (5)]", "what the estate will do", "event #0 (5 events: #0–#4)")
	hs.press("G")
	hs.shows("event #4 (5 events: #0–#4)")
	hs.press("g")
	hs.shows("event #0 (5 events: #0–#4)")
	hs.press("<tab>")
	hs.shows("[what the estate will do]")
	hs.press("J") // straight to the raw JSON
	hs.shows("[raw JSON]", "lines 1–")
	hs.press("G")
	hs.shows("(100%)")
	hs.press("g")
	hs.shows("lines 1–")
	hs.press("<end>")
	hs.shows("(100%)")
	hs.press("<home>", "/", "deadLetterReason", "<enter>")
	hs.shows("match 1 of")
	hs.press("n")
	hs.shows("match 2 of")
	hs.press("N")
	hs.shows("match 1 of")
	foot := lastLine(hs.screen())
	for _, gone := range []string{"select", "sort", "filter", "restore"} {
		if strings.Contains(foot, gone) {
			t.Fatalf("the detail's footer lists %q, which does nothing there: %q", gone, foot)
		}
	}
	hs.press("<esc>")
	hs.shows("[1 Stranded")
	hs.press("<enter>", "q")
	if !hs.m.quitting {
		t.Fatal("q in the detail did not quit")
	}
}

func lastLine(s string) string {
	l := strings.Split(s, "\n")
	return l[len(l)-1]
}

// The status line answers one key and clears on the next; help fits 80×24, scrolls, and lists every key.
func TestStatusAndHelp(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 10)
	hs := newHarness(t, mem, cfg, 80, 24)
	hs.press("r")
	hs.shows("restore applies to quarantined blobs")
	hs.press("j")
	hs.lacks("restore applies to quarantined blobs")
	hs.press("?")
	seen := hs.screen()
	for i := 0; i < 10; i++ {
		hs.press("<pgdown>")
		seen += hs.screen()
		checkSize(t, "help", hs.screen(), 80, 24)
	}
	for _, b := range hs.m.tables[0].Scope().bindings {
		if d := b.Help().Desc; !strings.Contains(seen, d[:min(len(d), 30)]) { // long ones wrap at 80
			t.Errorf("help never shows %q", b.Help().Desc)
		}
	}
	flat := strings.Join(strings.Fields(seen), " ") // (a line wrapped under its description reads on)
	for _, want := range []string{"sub:", "is:expiring", "verdict:cap", "off: restore applies to quarantined blobs", "H handled"} {
		if !strings.Contains(flat, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// Filter terms: words ANDed, field:value terms, matching only what the row shows or the field named.
func TestFilterTerms(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	hs := newHarness(t, mem, cfg, 120, 40)
	count := func(q string) int {
		hs.press("/", "<esc>") // esc in the bar clears the filter
		hs.press("/", q, "<enter>")
		n := 0
		for _, tb := range hs.m.tables {
			n += len(tb.rows)
		}
		return n
	}
	all := count("")
	if n := count("webhooks"); n == 0 || n >= all {
		t.Fatalf("webhooks: %d of %d", n, all)
	}
	if a, b := count("webhooks"), count("webhooks verdict:notIdempotent"); b == 0 || b > a {
		t.Fatalf("ANDed: %d then %d", a, b)
	}
	if n := count("is:malformed"); n < 3 {
		t.Fatalf("is:malformed: %d", n)
	}
	if n := count("is:expiring"); n != 2 {
		t.Fatalf("is:expiring: %d", n)
	}
	if n := count("sub:storage-ledger"); n == 0 {
		t.Fatal("sub:")
	}
	// A typo matches nothing — never everything — and an action then takes nothing.
	for typo, says := range map[string]string{"nosuch:x": "is not a filter field", "verdict:replya": "want replay, cap", "is:bogus": "want malformed"} {
		if n := count(typo); n != 0 {
			t.Fatalf("%s matched %d rows", typo, n)
		}
		hs.shows(says, "the filter does not parse")
	}
	hs.press("1", "d")
	hs.shows("no blob here")
	hs.lacks("Drain ")
}

// y copies the blob's name and Y its raw JSON with OSC 52; the mouse wheel scrolls and a click focuses a row.
func TestCopyAndMouse(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 10)
	hs := newHarness(t, mem, cfg, 120, 40)
	name := hs.m.tables[0].cursorName()
	hs.press("y")
	hs.shows("copied the name")
	if !strings.Contains(hs.clip.String(), "\x1b]52;c;") {
		t.Fatalf("no OSC 52 sequence: %q", hs.clip.String())
	}
	hs.press("Y")
	hs.shows("copied the raw JSON")
	hs.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if hs.m.tables[0].cursor != 3 {
		t.Fatalf("wheel: cursor %d", hs.m.tables[0].cursor)
	}
	hs.send(tea.MouseClickMsg{X: 10, Y: 3 + 1 + 5, Button: tea.MouseLeft})
	if hs.m.tables[0].cursor != 5 {
		t.Fatalf("click: cursor %d", hs.m.tables[0].cursor)
	}
	_ = name
	// With more rows than fit, a click anywhere lands on a row on screen or moves nothing: the status and key
	// lines below the table are not the row after the last one shown.
	mem, cfg = fixture(t, 120)
	hs = newHarness(t, mem, cfg, 80, 24)
	tb := hs.m.tables[0]
	if len(tb.rows) <= tb.height {
		t.Fatalf("%d rows fit in %d lines: the test needs more", len(tb.rows), tb.height)
	}
	for y := 0; y < 24; y++ {
		before, offset := tb.cursor, tb.offset
		hs.send(tea.MouseClickMsg{X: 10, Y: y, Button: tea.MouseLeft})
		if c := tb.cursor; c != before && (c < offset || c >= offset+tb.height) {
			t.Fatalf("a click on screen line %d put the cursor on row %d, off the %d rows shown from %d", y, c, tb.height, offset)
		}
	}
}

// a acknowledges the blob under the cursor: it stays listed, marked A and dimmed, and its finding goes away.
func TestAckFromTheDashboard(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hs := newHarness(t, mem, cfg, 120, 40)
	hs.press("2")
	before := hs.m.report
	q, _ := before.Find(rules.FindingQuarantine)
	hs.press("a")
	hs.shows("Acknowledge 1 blob(s)?", "note:", "for: 24h", "tab duration")
	hs.press("on it", "<right>")
	// The note took a while (no refresh meanwhile): the ack starts when it is written (tags keep seconds). The
	// service's clock moves on as the local one does.
	hs.now = hs.now.Add(10 * time.Minute)
	mem.Clock = mem.Clock.Add(10*time.Minute + 2*time.Second)
	written := fixedNow.Add(hs.now.Sub(hs.m.list.nowAt)).Truncate(time.Second)
	hs.press("<enter>")
	hs.shows("Acknowledge finished", "1 acked")
	acked := 0
	for _, name := range mem.Names("quarantine/") {
		bi, _ := mem.Stat(context.Background(), name)
		if a, st, _ := rules.DefaultConfig().AckOf(bi, fixedNow); st != rules.AckNone {
			if acked++; !a.At.Equal(written) || written.Sub(fixedNow) < 10*time.Minute {
				t.Fatalf("the ack starts at %v, not when it was written (%v)", a.At, written)
			}
		}
	}
	if acked != 1 {
		t.Fatalf("%d acked", acked)
	}
	hs.press("<esc>")
	after, _ := hs.m.report.Find(rules.FindingQuarantine)
	if after.Count != q.Count-1 || hs.m.report.Acked != 1 {
		t.Fatalf("quarantine finding %d → %d, acked %d", q.Count, after.Count, hs.m.report.Acked)
	}
	hs.shows("1 acked")
	hs.press("<enter>")
	hs.shows("ACKED", "by tester@host", "on it")
}

// Acknowledging a blob the lifecycle rule is about to delete says, in the dialog, that the ack does not silence
// that — as the command line's ack does.
func TestAckDialogWarnsOfExpiry(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hs := newHarness(t, mem, cfg, 120, 40)
	hs.press("/is:expiring", "<enter>")
	hs.press("a")
	hs.shows("Acknowledge 1 blob(s)?", "EXPIRING:", "an ack does not silence that")
	hs.press("<esc>", "/", "<esc>", "3", "a") // a live blob: no such warning
	hs.shows("Acknowledge 1 blob(s)?")
	hs.lacks("EXPIRING:")
}

// q while an action runs asks first; when the action ends meanwhile, the quit goes ahead.
func TestQuitWhileAnActionRuns(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hooked := &storetest.Hooked{Container: mem}
	hs := newHarness(t, hooked, cfg, 120, 40)
	hs.press("<space>", "d")
	hs.pause()
	hs.press("y", "q")
	hs.shows("An action is running. Quit?", "y quit", "esc stay")
	hs.press("<esc>")
	hs.lacks("Quit?")
	hs.press("q")
	hs.shows("Quit?")
	hs.resume() // the drain ends: nothing left to abandon, so the quit the operator asked for happens
	if !hs.m.quitting {
		t.Fatal("the quit asked during the action did not happen when it ended")
	}
}

// A cancel that arrives after the last blob says so, instead of nothing.
func TestLateCancel(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hooked := &storetest.Hooked{Container: mem}
	hs := newHarness(t, hooked, cfg, 120, 40)
	hs.press("<space>", "d")
	hs.shows("Drain 1 stranded blob(s)?")
	hs.pause()
	hs.press("y")
	waitUntil(t, "the drain's write", func() bool { return hooked.Writes.Load() == 1 })
	hs.press("<esc>") // the cancel, after the only blob was done
	hs.resume()
	hs.shows("Drain finished", "1 drained", "The drain finished before the cancel arrived")
}

// Blobs leaving the container (a restore deletes its quarantine copies) shift every position in the snapshot
// once the listing ends. The tables still held the old positions when the cursor's blob was looked up: with the
// cursor low in a pane, the dashboard panicked (index out of range) right after a restore. The cursor stays on
// its blob through the sweep.
func TestCursorSurvivesBlobsLeaving(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	hs := newHarness(t, mem, cfg, 120, 40)
	hs.press("1", "G") // the last stranded row: its position is past the quarantine blobs (names sort them first)
	it, ok := hs.m.table().current()
	if !ok {
		t.Fatal("no row under the cursor")
	}
	keep := it.Name
	// Every quarantine copy goes, as a restore of all of them would take them.
	l, _ := store.ListAll(context.Background(), mem)
	gone := 0
	for _, b := range l.Blobs {
		if strings.HasPrefix(b.Name, rules.QuarantinePrefix) || strings.HasPrefix(b.Name, rules.ArchivedPrefix) {
			mem.Delete(context.Background(), b.Name, "")
			gone++
		}
	}
	if gone == 0 {
		t.Fatal("the fixture has no copies to remove")
	}
	hs.press("R") // refresh: the listing ends without them, and the snapshot sweeps them out
	hs.advance(time.Second)
	if it, ok := hs.m.table().current(); !ok || it.Name != keep {
		t.Fatalf("the cursor left its blob %q: %v %v", keep, it, ok)
	}
	hs.shows("[1 Stranded")
}

// A blob whose payload could not be read keeps the header from saying healthy: it raises UNREADABLE, and the
// filter is:unreadable finds it.
func TestUnreadableRaisesABadge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "SUB"), 0o755)
	storetest.Mkfifo(t, filepath.Join(dir, "SUB", "fifo.json"))
	d, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	hs := newHarness(t, d, rules.DefaultConfig(), 120, 30)
	waitUntil(t, "the listing", func() bool { hs.advance(time.Second); return strings.Contains(hs.screen(), "UNREADABLE") })
	hs.lacks("healthy")
	hs.press("3", "/", "is:unreadable", "<enter>")
	hs.shows("fifo")
}

// The overview's subscription grid at 80×24: every subscription is either shown or counted (above and below),
// the cursor sits in a gutter of its own (never over a name's first letter), and it stays on screen as it moves.
func TestOverviewGridAccountsForEverySubscription(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	hs := newHarness(t, mem, cfg, 80, 24)
	hs.press("o")
	subs := hs.m.overview.pic.Subscriptions
	for i := 0; i <= len(subs); i++ {
		s := hs.screen()
		shown := 0
		for _, sub := range subs {
			if strings.Contains(s, "\n "+sub[:min(len(sub), 12)]) || strings.Contains(s, "\n▸"+sub[:min(len(sub), 12)]) {
				shown++
			}
		}
		hidden := 0
		if m := regexp.MustCompile(`… (\d+) more subscription`).FindStringSubmatch(s); m != nil {
			hidden, _ = strconv.Atoi(m[1])
		}
		if shown+hidden != len(subs) {
			t.Fatalf("after %d downs: %d shown + %d counted, %d subscriptions:\n%s", i, shown, hidden, len(subs), s)
		}
		if i > 0 && !strings.Contains(s, "\n▸") {
			t.Fatalf("after %d downs the cursor is off screen:\n%s", i, s)
		}
		hs.press("<down>")
	}
}

// However many refreshes fail in a row, one timer drives the retry countdown: an overnight outage must not leave
// thousands of one-second redraw loops behind.
func TestRetryCountdownIsOneTimer(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 10)
	fl := &flaky{Container: mem}
	hs := newHarness(t, fl, cfg, 80, 24)
	fl.fail(errors.New("dial tcp: connection refused"))
	for range 6 {
		hs.advance(hs.m.opt.Interval) // each poll fails again
		hs.press("R")
	}
	ticks := 0
	for _, tm := range hs.timers {
		if _, ok := tm.msg.(tickMsg); ok {
			ticks++
		}
	}
	if ticks != 1 {
		t.Fatalf("%d countdown timers pending, want 1", ticks)
	}
	hs.shows("retry in")
}

// Y copies a payload only as large as a terminal's clipboard carries: a bigger one is refused with why, and
// nothing is written to the terminal.
func TestCopyRefusesAHugePayload(t *testing.T) {
	t.Parallel()
	mem := storetest.NewMem(fixedNow)
	big := `[{"id":"a","subject":"s","eventType":"T","dataVersion":"1","data":"` + strings.Repeat("x", maxCopy) + `"}]`
	mem.Write(context.Background(), "S/big.json", []byte(big), store.WriteOptions{})
	mem.Backdate(context.Background(), "S/big.json", fixedNow.Add(-3*time.Hour))
	hs := newHarness(t, mem, rules.DefaultConfig(), 120, 40)
	hs.press("Y")
	hs.shows("not copied: the payload is over 256.0 KiB")
	if hs.clip.String() != "" {
		t.Fatalf("%d bytes went to the terminal", len(hs.clip.String()))
	}
}

// q quits from a confirmation too, as everywhere but a text field: the question is left unanswered.
func TestQuitFromAConfirmation(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hooked := &storetest.Hooked{Container: mem}
	hs := newHarness(t, hooked, cfg, 120, 40)
	hs.press("d")
	hs.shows("stranded blob(s)?")
	hs.press("q")
	if !hs.m.quitting || hooked.Writes.Load() != 0 {
		t.Fatalf("quitting %v, %d writes", hs.m.quitting, hooked.Writes.Load())
	}
}

// At 80 columns the detail's position and search count are shown whole (the keys, also in the footer, give way),
// and a resize re-wraps the text keeping the current match where it was: on the top line.
func TestDetailSearchSurvivesAResize(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 10)
	hs := newHarness(t, mem, cfg, 80, 24)
	hs.press("<enter>", "/")
	hs.press(strings.Split("deadLetterReason", "")...)
	hs.press("<enter>", "n", "n")
	// The body's first line: below the header, the section bar and the blob's head.
	top := func() string { return strings.Split(hs.screen(), "\n")[3+len(hs.m.detail().head)] }
	hs.shows("match 3 of")
	if !strings.Contains(top(), `"deadLetterReason"`) {
		t.Fatalf("the match is not on the top line:\n%s", hs.screen())
	}
	for _, size := range []tea.WindowSizeMsg{{Width: 160, Height: 30}, {Width: 80, Height: 24}, {Width: 120, Height: 40}} {
		hs.send(size)
		hs.shows("match 3 of")
		if !strings.Contains(top(), `"deadLetterReason"`) {
			t.Fatalf("at %dx%d the match left the top line:\n%s", size.Width, size.Height, hs.screen())
		}
	}
}

// At 80 columns, under a filter (whose shown/total counts widen the tabs), the selection count is never cut.
func TestSelectionCountFitsAt80(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	hs := newHarness(t, mem, cfg, 80, 24)
	hs.press("/", "push", "<enter>", "<space>", "<space>")
	tabs := strings.TrimRight(strings.Split(hs.screen(), "\n")[2], " ")
	if !strings.HasSuffix(tabs, " *2") && !strings.HasSuffix(tabs, "2 selected") {
		t.Fatalf("the selection count at 80 columns: %q", tabs)
	}
}

// A long banner (a rehearsal with several handlers down) gives way: at 80 and 160 columns the header still ends
// with the container's name and the service time, and the banner says how many more it left out.
func TestTheBannerGivesWayToTheContainerAndTime(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 10)
	who := []string{"blob-deletions 500 (2h36m left)", "friend-requests 503 (2h left)", "push-notifications 503 (1h left)", "webhooks 404 (1h51m left)"}
	banner := func(room int) string {
		head := "REHEARSAL 06-01 09:30 ×60"
		for n := len(who); n > 0; n-- {
			s := head + " · script down: " + strings.Join(who[:n], ", ")
			if n < len(who) {
				s += fmt.Sprintf(" +%d more", len(who)-n)
			}
			if len(s) <= room {
				return s
			}
		}
		for _, f := range []string{"%s · script: %d down", "%s · %d down"} {
			if s := fmt.Sprintf(f, head, len(who)); len(s) <= room {
				return s
			}
		}
		return head
	}
	for _, w := range []int{80, 160} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			hs := newHarness(t, mem, cfg, w, 24, func(o *Options) { o.Banner = banner })
			top := strings.SplitN(hs.screen(), "\n", 2)[0]
			if !strings.Contains(top, "REHEARSAL 06-01 09:30 ×60") || !strings.HasSuffix(strings.TrimRight(top, " "), fixedNow.UTC().Format("15:04:05Z")) ||
				!strings.Contains(top, "mem/deadletter") || !strings.Contains(top, "down") {
				t.Fatalf("the header at %d columns: %q", w, top)
			}
			golden.RequireEqual(t, []byte(top+"\n"))
		})
	}
}

// The drain dialog's limit and its question count the same blobs: with every stranded row selected (the crash and
// handled ones among them) it says how many of the selection it takes and how many it leaves — not "Drain 24"
// above "It takes the 25 selected".
func TestTheDrainDialogCountsWhatItTakesOfTheSelection(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	hs := newHarness(t, mem, cfg, 120, 40)
	stranded := len(hs.m.tables[0].rows)
	hs.press("<ctrl+a>")
	items, _ := hs.m.tables[0].targets()
	e := hs.m.env()
	p := e.sess.PreviewDrain(e.snap, items, rules.DrainOptions{}, rules.WitnessReport{}, present.ForceKey)
	if len(items) != stranded || len(p.Names) == stranded {
		t.Fatalf("selected %d of %d, the drain takes %d: the test sees nothing", len(items), stranded, len(p.Names))
	}
	hs.press("d")
	hs.shows(fmt.Sprintf("Drain %d stranded blob(s)?", len(p.Names)),
		fmt.Sprintf("It takes %d of the %d selected of %d stranded shown; it leaves %d", len(p.Names), stranded, stranded, stranded-len(p.Names)))
}

// The overview's legend of reasons is laid out whole, on a second line where one does not hold it: at 80 and 120
// columns no entry of it is cut (the subscriptions' names above it give up their ends by design).
func TestTheOverviewsReasonLegendIsNotCut(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	putFiftyEvents(t, mem)
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		hs := newHarness(t, mem, cfg, sz[0], sz[1])
		hs.press("o")
		s := hs.screen()
		legend := 0 // the lines from HANDLER's to the grid's header
		for _, l := range strings.Split(s, "\n") {
			l = strings.TrimRight(l, " ")
			switch {
			case strings.HasPrefix(l, "HANDLER = "):
				legend = 1
			case strings.HasPrefix(l, " SUBSCRIPTION"):
				if legend == 0 {
					t.Fatalf("%dx%d: no legend of reasons:\n%s", sz[0], sz[1], s)
				}
				continue
			case legend > 0 && !strings.HasPrefix(l, " "):
				legend++
			default:
				continue
			}
			if strings.HasSuffix(l, "…") {
				t.Errorf("%dx%d: a legend line is cut: %q", sz[0], sz[1], l)
			}
		}
		if legend == 0 {
			t.Fatalf("%dx%d: no legend of reasons:\n%s", sz[0], sz[1], s)
		}
		if sz[0] == 120 && !strings.Contains(s, "BadRequest = UndeliverableDueToHttpBadRequest") {
			t.Errorf("120 columns: the legend does not say what BadRequest stands for:\n%s", s)
		}
	}
}

func TestPackLines(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		entries []string
		w, max  int
		want    []string
	}{
		{[]string{"aa", "bb", "cc"}, 20, 2, []string{"aa · bb · cc"}},
		{[]string{"aa", "bb", "cc"}, 7, 2, []string{"aa · bb", "cc"}},
		{[]string{"aa", "bb", "cc"}, 7, 1, []string{"aa · b…"}},
		{[]string{"aaaaaaaaaa", "bb"}, 5, 3, []string{"aaaa…", "bb"}},
		{nil, 5, 2, []string{""}},
	} {
		if got := packLines(c.entries, " · ", c.w, c.max); !slices.Equal(got, c.want) {
			t.Errorf("packLines(%q, %d, %d) = %q, want %q", c.entries, c.w, c.max, got, c.want)
		}
	}
}
