package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// drainWhileTwinRuns runs the binary's drain with args while the twin's clock runs (two minutes a step, as the
// demo's would), and returns what it printed and its exit code.
func drainWhileTwinRuns(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	c := exec.Command(binary(t), append([]string{"drain", "--dir", dir}, args...)...)
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case err := <-done:
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			return out.String(), errb.String(), code
		case <-deadline:
			c.Process.Kill()
			t.Fatalf("the canary drain never ended:\n%s\n%s", out.String(), errb.String())
		case <-time.After(300 * time.Millisecond):
			runCmd(t, "twin", "advance", "--dir", dir, "--by", "2m")
		}
	}
}

func strandedBySub(t *testing.T, dir string) map[string]int {
	t.Helper()
	var ls struct {
		Blobs []struct {
			Name string `json:"name"`
		} `json:"blobs"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "ls", "--dir", dir, "--pane", "stranded", "--filter", "-is:crash", "-o", "json")), &ls); err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, b := range ls.Blobs {
		n[strings.SplitN(b.Name, "/", 2)[0]]++
	}
	return n
}

// Issue 50: on a twin whose clock runs with FRIEND-REQUESTS' handler failing (its events are replayable, so a
// drain reaches it: the twin's WEBHOOKS events are not idempotent and never leave quarantine for the handler),
// drain --canary drains one FRIEND-REQUESTS blob, sees it fail (Event Grid's word), drains the subscriptions whose
// canary was delivered, leaves the rest of FRIEND-REQUESTS stranded and exits 3 naming it; with the handler
// recovered, the same command drains the rest.
func TestCanaryDrainLeavesAFailingSubscription(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "twin", "script", "set", "friend-requests", "down", "--status", "500", "--until", "+12h", "--dir", dir)
	before := strandedBySub(t, dir)
	if before["FRIEND-REQUESTS"] < 2 {
		t.Fatalf("the twin opens on %v stranded", before)
	}
	out, errs, code := drainWhileTwinRuns(t, dir, "--canary", "--yes")
	if code != exitNotDone || !strings.Contains(errs, "canary FRIEND-REQUESTS") || !strings.Contains(errs, "FAILING") ||
		!strings.Contains(out, "FRIEND-REQUESTS's handler fails again") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	after := strandedBySub(t, dir)
	if after["FRIEND-REQUESTS"] != before["FRIEND-REQUESTS"]-1 {
		t.Errorf("FRIEND-REQUESTS: %d stranded before, %d after: only its canary should have gone\n%s\n%s", before["FRIEND-REQUESTS"], after["FRIEND-REQUESTS"], out, errs)
	}
	went := ""
	for sub, n := range before {
		if sub != "FRIEND-REQUESTS" && n >= 2 && after[sub] == 0 {
			went = sub
		}
	}
	if went == "" {
		t.Errorf("no other subscription's stranded blobs went after its canary: before %v, after %v\n%s\n%s", before, after, out, errs)
	}
	// Recovered: the same command (on that subscription) drains the rest.
	mustRun(t, "twin", "script", "set", "friend-requests", "up", "--dir", dir)
	out, errs, code = drainWhileTwinRuns(t, dir, "--canary", "--yes", "--filter", "sub:friend-requests")
	if code != exitOK || !strings.Contains(errs, "delivered") {
		t.Fatalf("recovered: exit %d\n%s\n%s", code, out, errs)
	}
	if n := strandedBySub(t, dir)["FRIEND-REQUESTS"]; n != 0 {
		t.Fatalf("recovered: %d FRIEND-REQUESTS still stranded\n%s\n%s", n, out, errs)
	}
}

// Issue 50 in the real binary: the demo's drain dialog offers the canary (c); on the demo's running clock the
// canaries are drained, the handlers' fates come from the twin's Event Grid, and the run ends with each canary's
// word.
func TestDemoCanaryDrainInTmux(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	tm := newTerm(t, 160, 50, binary(t), "demo", "--dir", dir, "--speed", "1200")
	tm.screen("REHEARSAL", "[1 Stranded", "▲CRASH 1")
	tm.keys("C-a", "d")
	tm.screen("Drain ", "c canary")
	tm.keys("c")
	tm.screen("Canary first: one blob per subscription")
	tm.keys("y")
	// (the demo's BLOB-DELETIONS handler fails for hours: its canary says so; the others deliver)
	s := tm.screen("Drain finished", "canary BLOB-DELETIONS", "FAILING: the rest of it stays stranded", "delivered: the rest of it goes")
	if !strings.Contains(s, "drained") {
		t.Fatalf("nothing drained:\n%s", s)
	}
	tm.keys("Escape")
	tm.gone("Drain finished") // (q waits for the dialog to close: a loaded terminal may read a quick esc q as alt+q)
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// A canary nothing answers (no replay runs on a plain directory) leaves the rest stranded as unheard — never
// "fails again", which nothing said — exit 3.
func TestACanaryUnheardIsNotAFailure(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	out, errs, code := runCmd(t, "drain", "--dir", dir, "--canary", "--canary-wait", "2s", "--yes")
	if code != exitNotDone || !strings.Contains(out, "canary told nothing") || strings.Contains(out, "fails again") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "no word") {
		t.Fatalf("the canaries' words are not said:\n%s", errs)
	}
}

// Issue 50 on a twin whose clock runs: a paced drain of a subscription whose handler the script fails stops by
// itself within one wave (five blobs at 0.5 a second), leaving the rest stranded and naming why; exit 3.
func TestAPacedDrainStopsItselfOnATwin(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "twin", "script", "set", "friend-requests", "down", "--status", "500", "--until", "+12h", "--dir", dir)
	before := strandedBySub(t, dir)["FRIEND-REQUESTS"]
	if before < 6 {
		t.Fatalf("the twin opens on %d stranded friend-requests blobs", before)
	}
	out, errs, code := drainWhileTwinRuns(t, dir, "--filter", "sub:friend-requests", "--rate", "0.5/s", "--yes")
	if code != exitNotDone || !strings.Contains(out, "FRIEND-REQUESTS's handler fails again") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if after := strandedBySub(t, dir)["FRIEND-REQUESTS"]; after != before-5 {
		t.Fatalf("%d stranded before, %d after: one wave of five should have gone\n%s", before, after, out)
	}
}

// The demo's drain dialog paces the drain (p): the question says the pace and how long; the run says what is left
// and when it will be done, then finishes.
func TestDemoPacedDrainInTmux(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	tm := newTerm(t, 160, 50, binary(t), "demo", "--dir", dir, "--speed", "1200")
	tm.screen("REHEARSAL", "[1 Stranded", "▲CRASH 1")
	tm.keys("C-a", "d")
	tm.screen("Drain ", "p pace")
	tm.keys("p", "p")
	tm.screen("Paced: 5 blob(s) a second, in waves of 50")
	tm.keys("y")
	tm.screen("paced at 5 a second", "left, done in about")
	tm.screen("Drain finished", "drained")
	tm.keys("Escape")
	tm.gone("Drain finished") // (q waits for the dialog to close: a loaded terminal may read a quick esc q as alt+q)
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
