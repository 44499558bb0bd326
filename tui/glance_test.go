package tui

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
)

// rowsShown counts the rows every pane's filter lets through.
func rowsShown(hs *harness) int {
	n := 0
	for _, tb := range hs.m.tables {
		n += len(tb.rows)
	}
	return n
}

// filterTo types a query into the filter bar (after clearing it) and applies it.
func filterTo(hs *harness, q string) int {
	hs.press("/", "<esc>", "/", q, "<enter>")
	return rowsShown(hs)
}

// The filter: ? while typing shows the syntax and esc comes back to the text; plain words match the badges a row
// shows; hour: takes what the HOUR column prints; esc in a table clears the filter before the selection.
func TestFilterReadsWhatTheScreenShows(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	hs := newHarness(t, mem, cfg, 120, 40)
	hs.press("/", "webh", "?")
	hs.shows("keys: filter", "hour:12-01 04h")
	hs.press("<esc>")
	if bar, ok := hs.m.top().(*filterBar); !ok || bar.input.Value() != "webh" {
		t.Fatalf("esc from the syntax did not come back to the filter being typed:\n%s", hs.screen())
	}
	hs.press("<esc>")

	for word, field := range map[string]string{"malformed": "is:malformed", "handled": "is:handled", "expiring": "is:expiring",
		"crash": "is:crash", "stalled": "is:stalled"} {
		want := filterTo(hs, field)
		if got := filterTo(hs, word); got != want || got == 0 {
			t.Errorf("the word %s matches %d rows, %s %d", word, got, field, want)
		}
	}
	// The HOUR column's own text, of a row on screen, finds that row.
	filterTo(hs, "")
	it, _ := hs.m.table().current()
	printed := it.Parsed.Hour().Format("01-02 15h")
	if n := filterTo(hs, "hour:"+printed); n == 0 {
		t.Fatalf("hour:%s (as the column prints it) matches nothing", printed)
	}
	if a, b := filterTo(hs, "hour:"+printed), filterTo(hs, "hour:"+it.Parsed.Hour().Format("2006-01-02T15")); a != b {
		t.Fatalf("hour:%s matches %d, the ISO form %d", printed, a, b)
	}

	// esc: the filter first, then the selection.
	filterTo(hs, "webhooks")
	hs.press("<space>")
	hs.shows("1 selected", "filter: webhooks")
	hs.press("<esc>")
	hs.lacks("filter: webhooks")
	hs.shows("1 selected")
	hs.press("<esc>")
	hs.lacks("1 selected")
}

// The ack dialog: in the note every printable key types (y and n too) and ←/→ move its cursor; tab moves to
// the duration, which +/- change; it names its blob; a is off on the Archived pane.
func TestAckDialogGrammar(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hs := newHarness(t, mem, cfg, 120, 40)
	name := hs.m.table().cursorName()
	hs.press("a")
	hs.shows("Acknowledge 1 blob(s)?", name, "for: 24h")
	hs.press("yn", "<left>", "<left>", "x", "<enter>")
	// enter confirmed with the note as typed: x went in before y, where ←← put the cursor.
	hs.shows("Acknowledge finished", "1 acked")
	bi, _ := mem.Stat(context.Background(), name)
	if a, _, _ := cfg.AckOf(bi, fixedNow.Add(time.Minute)); a.Note != "xyn" {
		t.Fatalf("the note is %q, want xyn", a.Note)
	}
	hs.press("<esc>", "j", "a", "<tab>", "+", "+")
	hs.shows("for: ‹ 7d ›")
	hs.press("-")
	hs.shows("for: ‹ 3d ›")
	hs.press("<esc>", "4", "a")
	hs.shows("an ack means nothing for the replay's archived records")
	hs.lacks("Acknowledge")
	if strings.Contains(lastLine(hs.screen()), "a ack") {
		t.Fatalf("the Archived pane offers a:\n%s", hs.screen())
	}
}

// y copies the selection's names, one per line (else the cursor's); s sorts names A→Z first and keeps the cursor
// on its blob; archived rows show no verdicts or attempt.
func TestCopySortAndArchivedRows(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	hs := newHarness(t, mem, cfg, 120, 40)
	tb := hs.m.table()
	first, second := tb.cursorName(), ""
	hs.press("<space>")
	second = tb.cursorName()
	hs.press("<space>", "y")
	hs.shows("copied the 2 names")
	enc := hs.clip.String()
	i := strings.LastIndex(enc, "52;c;")
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimRight(enc[i+5:], "\a\x1b\\"))
	if string(raw) != first+"\n"+second {
		t.Fatalf("copied %q, want the two names one per line", raw)
	}
	hs.press("<esc>", "j", "j")
	on := tb.cursorName()
	for hs.m.table().sortBy != "subscription" {
		hs.press("s")
		if tb.cursorName() != on {
			t.Fatalf("sorting by %s moved the cursor off %s", tb.sortBy, on)
		}
	}
	subs := []string{}
	for _, r := range tb.rows {
		subs = append(subs, tb.snap.Items[r].Parsed.Subscription)
	}
	if subs[0] > subs[len(subs)-1] {
		t.Fatalf("SUBSCRIPTION sorts Z→A first: %s … %s", subs[0], subs[len(subs)-1])
	}
	hs.press("4")
	for _, l := range strings.Split(hs.screen(), "\n")[4:10] {
		if regexp.MustCompile(`\b(R|C|N|U)\d+\b|MALFORMED|CRASH`).MatchString(l) {
			t.Fatalf("an archived row shows verdicts: %q", l)
		}
	}
}

// 80 columns are first-class: the key line keeps every action, the header the handled count, the name column
// both ends of the GUID.
func TestEightyColumns(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	hs := newHarness(t, mem, cfg, 80, 24)
	s := hs.shows("d drain", "a ack", "2H")
	if !regexp.MustCompile(`[0-9a-f]{6}…[0-9a-f]{6}`).MatchString(s) {
		t.Fatalf("names lose their GUID's ends:\n%s", s)
	}
	hs.press("2")
	hs.shows("r restore", "a ack")
}

// The overview marks the selected hour under the axis; its bar keeps its colours (no reverse video), and the
// hour's numbers sit beside the chart.
func TestOverviewMarksTheHourWithoutHidingIt(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 40)
	hs := newHarness(t, mem, cfg, 120, 40, func(o *Options) { o.Theme = Theme{Profile: colorprofile.TrueColor} })
	hs.press("o")
	s := hs.screen()
	if strings.Contains(s, "\x1b[7m") || regexp.MustCompile(`\x1b\[[0-9;]*;7[;m]`).MatchString(s) {
		t.Fatal("the overview draws in reverse video")
	}
	plain := escapes.ReplaceAllString(s, "")
	if !strings.Contains(plain, "↑") || !regexp.MustCompile(`\d\d-\d\d \d\dh: \d+ event\(s\)`).MatchString(plain) {
		t.Fatalf("no marker under the axis, or no numbers for the hour:\n%s", plain)
	}
	hs.press("<left>")
	if hs.screen() == s {
		t.Fatal("← did not move the hour")
	}
}

// Whatever a blob is called — emoji, a ZWJ family, CJK, combining marks, a right-to-left name — every screen is
// exactly its window.
func TestHostileNamesFitEveryScreen(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 10)
	ctx := context.Background()
	for i, n := range []string{"👩‍👩‍👧‍👦", "漢字漢字漢字漢字漢字漢字漢字漢字", "e\u0301e\u0301e\u0301e\u0301", "שלום-עולם", "🇺🇳🏳️‍🌈x", "\u200b\u200d\ufeff"} {
		name := fmt.Sprintf("%s/2026/11/30/%d/%s.json", strings.ToUpper(n), i, n)
		body := `[{"id":"` + n + `","subject":"` + n + `","eventType":"ProcessWebhook","dataVersion":"1","data":{}}]`
		if _, err := mem.Write(ctx, name, []byte(body), store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		mem.Backdate(ctx, name, fixedNow.Add(-time.Duration(3+i)*time.Hour))
	}
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {97, 31}} {
		for _, sc := range []struct {
			keys []string
			mark string // what shows the screen is there, not blank
		}{
			{nil, "[1 Stranded"}, {[]string{"o"}, "[o Overview]"}, {[]string{"o", "<down>"}, "[o Overview]"},
			{[]string{"<enter>"}, "event #0 ("}, {[]string{"<enter>", "<enter>"}, "event #0 of"}, {[]string{"d"}, "Drain 1 stranded blob(s)?"},
			{[]string{"G", "<enter>"}, "event #0 ("}, {[]string{"/", "漢"}, "漢字漢字"},
		} {
			hs := newHarness(t, mem, cfg, sz[0], sz[1])
			hs.press("/", "<esc>")
			hs.press(sc.keys...)
			s := hs.screen()
			checkSize(t, fmt.Sprint(sc.keys), s, sz[0], sz[1])
			if !strings.HasPrefix(s, "deadletter  mem/") || !strings.Contains(s, sc.mark) {
				t.Errorf("%v at %dx%d lacks its header or %q:\n%s", sc.keys, sz[0], sz[1], sc.mark, s)
			}
		}
	}
}

// The small things a new user tripped on: q inside the help closes the help (as less, htop and gh-dash do) and
// does not quit; ':' with no config says why it does nothing; events are numbered from 0, as the # column and
// the JSON's index number them.
func TestHelpQClosesAndColonSaysWhy(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hs := newHarness(t, mem, cfg, 120, 40)
	hs.press("?")
	hs.shows("keys: stranded table")
	hs.press("q")
	if hs.m.quitting {
		t.Fatal("q in the help quit the dashboard")
	}
	hs.lacks("keys: stranded table")
	hs.shows("[1 Stranded")
	hs.press(":")
	hs.shows("no config file with contexts here")
	hs.press("<enter>")
	hs.shows("event #0 (", "#0–#")
	// 1–4 reach the panes from a blob's view.
	hs.press("2")
	hs.shows("[2 Quarantine")
	if hs.m.detail() != nil {
		t.Fatal("2 from a blob's view left the blob open")
	}
}

// A click on a tab opens it (the tabs line is the third of the screen, below the title and the alerts).
func TestAClickOnATabOpensIt(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hs := newHarness(t, mem, cfg, 120, 40)
	s := hs.shows("[1 Stranded")
	line := strings.Split(s, "\n")[2]
	x := strings.Index(line, "3 Live")
	if x < 0 {
		t.Fatalf("no Live tab:\n%s", s)
	}
	hs.send(tea.MouseClickMsg{X: textfmt.Width(line[:x]), Y: 2, Button: tea.MouseLeft})
	hs.shows("[3 Live")
	x = strings.Index(line, "o Overview")
	hs.send(tea.MouseClickMsg{X: textfmt.Width(line[:x]), Y: 2, Button: tea.MouseLeft})
	hs.shows("[o Overview]")
}

// At 80 columns the results keep what the table shows of each blob — its GUID's head — however long its reason.
func TestResultsKeepTheGUIDsHead(t *testing.T) {
	t.Parallel()
	mem, cfg := fixture(t, 0)
	hs := newHarness(t, mem, cfg, 80, 24)
	hs.press("<ctrl+a>", "d", "y")
	hs.shows("Drain finished")
	s := hs.screen()
	shown := 0
	for _, x := range hs.m.results.results[1:] {
		if head := rules.FileOf(x.Name)[:6]; strings.Contains(s, head) {
			shown++
		}
	}
	if rows := min(len(hs.m.results.results)-1, 8); shown < rows {
		t.Fatalf("only %d of the results on screen show their GUID's head:\n%s", shown, s)
	}
}
