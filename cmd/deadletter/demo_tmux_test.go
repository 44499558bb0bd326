package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/output"
)

// Quitting the demo and starting it again comes back where it was: the drain made in the first run is still
// done (the stranded blobs it took are not stranded again), the twin's clock is not back at the opening, and the
// twin is the same one; demo --fresh starts over, on the opening's stranded blobs.
func TestDemoResumesAndFreshStartsOverInTmux(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	tm := newTerm(t, 120, 40, binary(t), "demo", "--dir", dir, "--speed", "60")
	s := tm.screen("REHEARSAL", "[1 Stranded", "▲CRASH 1")
	before := strandedCount(t, s)
	tm.keys("C-a", "d")
	tm.screen(fmt.Sprintf("Drain %d stranded blob(s)?", before-1))
	tm.keys("y")
	tm.screen("Drain finished", fmt.Sprintf("%d drained", before-1))
	tm.keys("Escape")
	gone(tm, "Drain finished") // (an esc and a q typed at once read as alt+q)
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	tm.screen("resume it:  deadletter demo --dir")
	clock := func() time.Time {
		var st struct {
			Clock  string `json:"clock"`
			Totals struct {
				Published int `json:"published"`
			} `json:"totals"`
		}
		json.Unmarshal([]byte(mustRun(t, "twin", "status", "--dir", dir, "--json")), &st)
		c, _ := time.Parse(time.RFC3339, st.Clock)
		return c
	}
	left := clock()

	tm = newTerm(t, 120, 40, binary(t), "demo", "--dir", dir, "--speed", "60")
	s = tm.screen("REHEARSAL", "[1 Stranded")
	if n := strandedCount(t, s); n >= before-1 {
		t.Fatalf("the demo started again on %d stranded (the first run drained %d of %d): its drain is gone\n%s", n, before-1, before, s)
	}
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if again := clock(); again.Before(left) {
		t.Fatalf("the resumed rehearsal's clock went back from %s to %s", left, again)
	}

	tm = newTerm(t, 120, 40, binary(t), "demo", "--dir", dir, "--speed", "60", "--fresh")
	s = tm.screen("REHEARSAL", "[1 Stranded", "▲CRASH 1")
	if n := strandedCount(t, s); n != before {
		t.Fatalf("demo --fresh opened on %d stranded, the first demo on %d\n%s", n, before, s)
	}
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// The demo's t screen on the real twin: the header says what the script has failing now, t shows the script and
// the account, u brings the chosen handler up from now — the header stops naming it, and the twin keeps the change
// (twin script show reads it after the demo ends).
func TestDemoRehearsalScreenInTmux(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	tm := newTerm(t, 200, 45, binary(t), "demo", "--dir", dir, "--speed", "1")
	tm.screen("REHEARSAL", "script down: ", "push-notifications 503")
	tm.keys("t")
	tm.screen("handlers now", "▸ push-notifications", "DOWN Busy", "account: ", "published =")
	tm.keys("u")
	tm.screen("push-notifications up from now")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		s := tm.capture()
		if !strings.Contains(s, "push-notifications 503") && strings.Contains(s, "script down: ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the header still names push-notifications failing:\n%s", s)
		}
	}
	tm.keys("Escape")
	gone(tm, "handlers now")
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	// Kept: the push outage now ends where u was pressed, not twenty minutes after the opening.
	var show struct {
		Clock  string              `json:"clock"`
		Script []output.WindowJSON `json:"script"`
	}
	json.Unmarshal([]byte(mustRun(t, "twin", "script", "show", "--dir", dir, "-o", "json")), &show)
	clock, _ := time.Parse(time.RFC3339, show.Clock)
	for _, w := range show.Script {
		if w.Who != "push-notifications" {
			continue
		}
		if to, err := time.Parse(time.RFC3339, w.To); err != nil || to.After(clock) {
			t.Fatalf("the dashboard's change was not kept: push-notifications down until %s, the clock at %s", w.To, show.Clock)
		}
	}
}

// gone waits (with a deadline) until the terminal no longer shows text.
func gone(tm *tmuxTerm, text string) {
	tm.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); strings.Contains(tm.capture(), text); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			tm.t.Fatalf("the terminal still shows %q:\n%s", text, tm.capture())
		}
	}
}

// The demo opens with its clock paused — the first screen holds still while a newcomer reads it, and the header
// says how to run it — and p runs it.
func TestDemoOpensPausedInTmux(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	tm := newTerm(t, 120, 40, binary(t), "demo", "--dir", dir)
	s := tm.screen("REHEARSAL", "PAUSED (p runs the clock)", "[1 Stranded")
	at := regexp.MustCompile(`REHEARSAL (\d\d-\d\d \d\d:\d\d)`).FindStringSubmatch(s)
	if at == nil {
		t.Fatalf("no rehearsal clock in the header:\n%s", s)
	}
	time.Sleep(1500 * time.Millisecond) // (a minute a second, were it running: the header would move)
	if now := regexp.MustCompile(`REHEARSAL (\d\d-\d\d \d\d:\d\d)`).FindStringSubmatch(tm.capture()); now == nil || now[1] != at[1] {
		t.Fatalf("the paused clock moved: %v → %v", at[1], now)
	}
	tm.keys("p")
	tm.screen("×60")
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
