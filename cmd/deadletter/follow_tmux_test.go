package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/rivo/uniseg"
)

// cursorLine is the screen line the cursor (▸) is on, or -1.
func cursorLine(s string) int {
	for i, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " *"), "▸") {
			return i
		}
	}
	return -1
}

// The real binary follows an action to its consequence: drained from its detail, a blob's detail shows it
// re-uploaded (live, drained once) and no longer offers d; restored from its detail, a quarantine copy says where
// it went and offers r no more.
func TestDetailFollowsActionsInTmux(t *testing.T) {
	dir := seeded(t)
	tm := newTerm(t, 120, 40, binary(t), "--dir", dir, "--interval", "1h")
	tm.screen("[1 Stranded")
	tm.keys("Enter")
	tm.screen("stranded ·", "d drain")
	tm.keys("d")
	tm.screen("Drain 1 stranded blob(s)?", "It takes this blob")
	tm.keys("y")
	tm.screen("Drain finished", "1 drained")
	tm.keys("Escape")
	s := tm.screen("live ·", "drained 1×")
	if strings.Contains(lastScreenLine(s), "d drain") {
		t.Fatalf("the detail still offers d after the drain:\n%s", s)
	}
	// (Escape and the next key sent together read as alt+key, as in any terminal: wait between them.)
	tm.keys("Escape")
	tm.screen("[1 Stranded")
	tm.keys("2")
	tm.screen("[2 Quarantine")
	tm.keys("Enter")
	tm.screen("quarantine ·", "r restore")
	tm.keys("r")
	tm.screen("quarantined blob(s)?", "It takes this blob")
	tm.keys("f", "y") // forced, so the test does not depend on which copy the seed put first
	tm.screen("Restore finished", "1 restored")
	tm.keys("Escape")
	s = tm.screen("Restored as ", ".restored-")
	if strings.Contains(lastScreenLine(s), "r restore") {
		t.Fatalf("the detail still offers r after the restore:\n%s", s)
	}
	tm.keys("r")
	tm.screen("nothing to do here:")
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// lastScreenLine is the last non-blank line of a capture: the key line.
func lastScreenLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	return lines[len(lines)-1]
}

// With a filter showing three quarantine blobs, r asks about the one under the cursor — named — not the three;
// ctrl+a then r takes the three.
func TestCursorRowRestoreInTmux(t *testing.T) {
	dir := seeded(t)
	d, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var names []string
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("quarantine/TRIO/2026/11/30/%d/0000000%d-aaaa-bbbb-cccc-dddddddddddd.json", i, i)
		body := fmt.Sprintf(`[{"id":"trio-%d|2","subject":"/trio","eventType":"ProcessWebhook","dataVersion":"1","data":{}}]`, i)
		if _, err := d.Write(ctx, name, []byte(body), store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		d.Backdate(ctx, name, time.Now().Add(-time.Duration(10+i)*time.Hour))
		names = append(names, name)
	}
	tm := newTerm(t, 140, 40, binary(t), "--dir", dir, "--interval", "1h")
	tm.screen("[1 Stranded")
	tm.keys("2", "/", "TRIO", "Enter")
	tm.screen("filter: TRIO", "Quarantine 3/")
	tm.keys("j", "r")
	s := tm.screen("quarantined blob(s)?", "It takes the row under the cursor")
	named := 0
	for _, n := range names {
		if strings.Contains(s, n) {
			named++
		}
	}
	if named != 1 || !strings.Contains(s, "of 1 quarantined") && !strings.Contains(s, "Restore 1 quarantined") {
		t.Fatalf("r on the cursor row names %d of the three:\n%s", named, s)
	}
	tm.keys("Escape")
	tm.screen("filter: TRIO")
	tm.keys("C-a", "r")
	tm.screen("the 3 selected of 3 quarantine shown (filter 'TRIO')")
	tm.keys("Escape")
	tm.screen("filter: TRIO")
	tm.keys("q")
	tm.exited()
}

// The binary asks the terminal for mouse events (tmux's pane flags say so), a click on a row puts the cursor
// there, and the wheel moves it.
func TestMouseInTmux(t *testing.T) {
	dir := seeded(t)
	tm := newTerm(t, 120, 40, binary(t), "--dir", dir, "--interval", "1h")
	s := tm.screen("[1 Stranded")
	flags := tm.tmux("display-message", "-p", "-t", "dl", "#{mouse_button_flag}#{mouse_any_flag}#{mouse_sgr_flag}")
	if f := strings.TrimSpace(flags); len(f) != 3 || f[0] != '1' && f[1] != '1' || f[2] != '1' {
		t.Fatalf("the program did not turn mouse reporting on (button, any, sgr flags %q)", flags)
	}
	if cursorLine(s) != 4 {
		t.Fatalf("the cursor starts on line %d:\n%s", cursorLine(s), s)
	}
	// A left click on screen line 8 (0-based 7: the fourth row): SGR press and release, 1-based coordinates.
	tm.keys("-l", "\x1b[<0;20;8M\x1b[<0;20;8m")
	for deadline := time.Now().Add(10 * time.Second); cursorLine(tm.capture()) != 7; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a click on line 8 left the cursor on line %d:\n%s", cursorLine(tm.capture()), tm.capture())
		}
	}
	tm.keys("-l", "\x1b[<65;20;8M") // the wheel, down: three rows
	for deadline := time.Now().Add(10 * time.Second); cursorLine(tm.capture()) != 10; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the wheel left the cursor on line %d:\n%s", cursorLine(tm.capture()), tm.capture())
		}
	}
	tm.keys("q")
	tm.exited()
}

// On an 80-column terminal, check, show, ls, watch's first pass and every --help print no line wider than 80
// columns: the capture joins lines the terminal wrapped (-J), so an overlong line shows as one.
func TestEightyColumnsInTmux(t *testing.T) {
	dir := seeded(t)
	bin := binary(t)
	name := strings.SplitN(mustRun(t, "ls", "--dir", dir, "-o", "name", "--pane", "stranded"), "\n", 2)[0]
	guid := strings.TrimSuffix(name[strings.LastIndex(name, "/")+1:], ".json")
	var script []string
	for _, c := range []string{"", "ls", "show", "drain", "restore", "ack", "check", "watch", "report", "seed", "demo", "completion"} {
		script = append(script, bin+" "+c+" --help")
	}
	script = append(script, bin+" check --dir "+dir, bin+" ls --dir "+dir, bin+" show --dir "+dir+" "+guid, bin+" show --dir "+dir+" WEBHOOKS/",
		bin+" drain --dir "+dir+" --dry-run", "echo ALL-DONE", "sleep 600")
	tm := newTerm(t, 80, 50, "sh", "-c", strings.Join(script, "; "))
	tm.tmux("set-option", "-t", "dl", "history-limit", "20000")
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(tm.capture(), "ALL-DONE"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the commands did not finish:\n%s", tm.capture())
		}
	}
	all := tm.tmux("capture-pane", "-p", "-J", "-t", "dl", "-S", "-20000")
	lines := strings.Split(all, "\n")
	if len(lines) < 300 {
		t.Fatalf("only %d lines captured:\n%s", len(lines), all)
	}
	for _, l := range lines {
		if w := uniseg.StringWidth(strings.TrimRight(l, " ")); w > 80 {
			t.Errorf("%d columns: %q", w, l)
		}
	}
	for _, want := range []string{"Examples:", "deadletter drain --dry-run", "ATT VERDICT", "expiring"} {
		if !strings.Contains(all, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
}

// strandedCount reads the Stranded tab's count off the screen.
func strandedCount(t *testing.T, s string) int {
	t.Helper()
	m := regexp.MustCompile(`1 Stranded (\d+)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no Stranded tab on the screen:\n%s", s)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// The demo as a newcomer drives it: select every stranded blob, drain, and let the rehearsal's clock run two
// hours. The replay consumes what was drained — only the blob that crashes it is still stranded — nothing is
// STALLED, and the archived count grew by what was drained.
func TestDemoDrainIsConsumedInTmux(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	tm := newTerm(t, 120, 40, binary(t), "demo", "--dir", dir, "--speed", "1200")
	// (▲CRASH shows once the payloads are read: the drain's question then knows which blob it leaves.)
	s := tm.screen("REHEARSAL", "[1 Stranded", "▲CRASH 1")
	before := strandedCount(t, s)
	if before < 10 || strings.Contains(s, "STALLED") {
		t.Fatalf("the demo opens on %d stranded:\n%s", before, s)
	}
	tm.keys("C-a", "d")
	// Every stranded blob is selected; the one the replay crashes on is left (and the dialog says why).
	tm.screen(fmt.Sprintf("Drain %d stranded blob(s)?", before-1), fmt.Sprintf("It takes %d of the %d selected", before-1, before))
	tm.keys("y")
	tm.screen("Drain finished", fmt.Sprintf("%d drained", before-1))
	tm.keys("Escape")
	// Two twin hours at 1,200× are six seconds: wait for the replay to have consumed the drain.
	for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		s = tm.capture()
		if strings.Contains(s, "[1 Stranded 1]") && strings.Contains(s, "3 Live 0 ") { // (the crash blob was never drained)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the drained blobs were never consumed:\n%s", s)
		}
	}
	if strings.Contains(s, "STALLED") {
		t.Fatalf("a drain raised STALLED in a rehearsal whose replay runs:\n%s", s)
	}
	tm.keys("Enter")
	tm.screen("CRASH") // the one left is the one the replay cannot serialize, and it says so
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var status struct {
		Account struct {
			Nowhere []string `json:"nowhere"`
		} `json:"account"`
		Violations []string `json:"violations"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "twin", "status", "--dir", dir, "--json")), &status); err != nil {
		t.Fatal(err)
	}
	if len(status.Account.Nowhere) > 0 || len(status.Violations) > 0 {
		t.Fatalf("after the rehearsal: %+v", status)
	}
}

// With the replay stopped just after the demo opens, the screen says STALLED, then — an hour on — more stranded.
func TestDemoReplayStoppedInTmux(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	tm := newTerm(t, 120, 40, binary(t), "demo", "--dir", dir, "--speed", "600", "--scenario", "replay-stopped")
	before := strandedCount(t, tm.screen("REHEARSAL", "[1 Stranded"))
	tm.screen("▲STALLED")
	for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if strandedCount(t, tm.capture()) > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing was stranded by the replay's outage:\n%s", tm.capture())
		}
	}
	tm.keys("p")
	tm.screen("PAUSED")
	tm.keys("q")
	tm.exited()
}

// The dashboard over two contexts in the real binary: --all-contexts opens on one row each; enter opens one,
// whose header names it; : comes back to the summary; q quits.
func TestContextsDashboardInTmux(t *testing.T) {
	dev, prod := t.TempDir(), seeded(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("current-context: dev\ncontexts:\n  - name: dev\n    dir: "+dev+"\n  - name: prod\n    dir: "+prod+"\n    read-only: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm := newTerm(t, 120, 30, binary(t), "--config", cfg, "--all-contexts", "--interval", "1h")
	s := tm.screen("every context", "dev", "prod", "healthy", "found")
	if !regexp.MustCompile(`prod +\d+ found +\d+ \w+`).MatchString(s) {
		t.Fatalf("prod's row:\n%s", s)
	}
	tm.keys("j", "Enter")
	tm.screen("ctx:prod", "READ-ONLY", "[1 Stranded")
	tm.keys(":")
	tm.screen("every context")
	tm.keys("Enter") // the cursor starts on dev
	tm.screen("ctx:dev", "[1 Stranded 0]")
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// The filter and the ack dialog on the real binary: ? while filtering opens the syntax and esc comes back to the
// text typed; esc in the table clears the filter; in the ack's note y and n are typed, not answers.
func TestFilterAndAckKeysInTmux(t *testing.T) {
	dir := seeded(t)
	tm := newTerm(t, 120, 40, binary(t), "--dir", dir, "--interval", "1h")
	tm.screen("[1 Stranded")
	tm.keys("/")
	tm.keys("-l", "WEBH")
	tm.screen("/WEBH") // (typed apart: a busy terminal may deliver "WEBH?" as one paste into the field)
	tm.keys("?")
	tm.screen("keys: filter", "hour:12-01")
	tm.keys("Escape")
	tm.screen("/WEBH")
	tm.keys("Enter")
	tm.screen("filter: WEBH")
	tm.keys("Escape")
	tm.screen("filter cleared")
	tm.keys("a")
	tm.screen("Acknowledge 1 blob(s)?", "note:")
	tm.keys("-l", "yn ok")
	tm.screen("note: yn ok")
	tm.keys("Escape")
	s := tm.screen("[1 Stranded")
	if strings.Contains(s, "Acknowledge finished") {
		t.Fatalf("y in the note answered the question:\n%s", s)
	}
	tm.keys("q")
	tm.exited()
}

// propsLine is the detail's properties line ("stranded · 26h old · the lifecycle rule deletes it in …").
var propsLine = regexp.MustCompile(`(stranded|live|quarantine|archived) · [^\n]* old · the lifecycle rule deletes it in [^ ]+`)

// On a rehearsal with its clock running, an open detail follows the container with no key pressed: its age and
// deletion countdown move between two captures, and once the replay takes the drained blob the same detail says
// the replay took it.
func TestOpenDetailFollowsTheTwinInTmux(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	tm := newTerm(t, 120, 40, binary(t), "demo", "--dir", dir, "--speed", "120")
	tm.screen("REHEARSAL", "[1 Stranded", "▲CRASH 1")
	tm.keys("Enter")
	s := tm.screen("stranded ·", "d drain")
	first := propsLine.FindString(s)
	if first == "" {
		t.Fatalf("no properties line:\n%s", s)
	}
	// Two captures at least a twin minute apart (120×: half a second), nothing pressed: the line moved on.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		if now := propsLine.FindString(tm.capture()); now != "" && now != first {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the open detail's age and countdown never moved from %q:\n%s", first, tm.capture())
		}
	}
	tm.keys("d")
	tm.screen("Drain 1 stranded blob(s)?")
	tm.keys("y")
	tm.screen("Drain finished", "1 drained")
	tm.keys("Escape")
	tm.screen("live ·", "drained 1×")
	// The replay's trigger arrives within the twin's minutes: the same detail says where the blob went.
	s = tm.screen("Gone: the replay took it at")
	if !strings.Contains(s, "republished its events") && !strings.Contains(s, "quarantined its events") {
		t.Fatalf("the detail does not say what the replay did:\n%s", s)
	}
	tm.keys("q") // (the demo writes into its directory until it ends: end it before the test removes it)
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// kill -9 of the demo at a random moment, three times over one directory: each time the next demo resumes the
// killed one (its own, recorded; repaired when it was killed mid-step), a drain acts on what it left, and twin
// status finds it balanced or repairs it.
func TestDemoSurvivesKillNineInTmux(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("needs /proc to find the demo's process")
	}
	dir := filepath.Join(t.TempDir(), "demo")
	rng := rand.New(rand.NewPCG(36, 40))
	for round := range 3 {
		tm := newTerm(t, 120, 40, binary(t), "demo", "--dir", dir, "--speed", "3000")
		tm.screen("REHEARSAL")
		shell := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "dl", "#{pane_pid}"))
		kids, err := os.ReadFile("/proc/" + shell + "/task/" + shell + "/children")
		pid, _ := strconv.Atoi(strings.Fields(string(kids) + " 0")[0])
		if err != nil || pid == 0 {
			t.Fatalf("the demo's process: %v %q", err, kids)
		}
		<-time.After(time.Duration(rng.IntN(1500)) * time.Millisecond) // the moment of the kill is the experiment
		p, _ := os.FindProcess(pid)
		p.Kill()
		if code := tm.exited(); code != 137 {
			t.Fatalf("round %d: the demo exited %d, not killed", round, code)
		}
		runCmd(t, "drain", "--dir", dir, "--yes")
		out, errs, code := runCmd(t, "twin", "status", "--dir", dir)
		if code != 0 || strings.Contains(out, "NOWHERE") {
			t.Fatalf("round %d: twin status exit %d\n%s%s", round, code, out, errs)
		}
	}
}

// Issue 49 in the real binary: after a drain into a failing handler and a simulated day, a quarantine copy's
// event view shows the event's journey — three passes, the last quarantined at the cap — and enter on the first
// pass opens that pass's blob where it is now (the replay's archived copy).
func TestAnEventsJourneyInTmux(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "twin", "script", "set", "friend-requests", "down", "--status", "500", "--dir", dir)
	type quarantined struct {
		Blobs []struct {
			Name     string         `json:"name"`
			Verdicts map[string]int `json:"verdicts"`
		} `json:"blobs"`
	}
	quarantine := func() (ls quarantined) {
		if err := json.Unmarshal([]byte(mustRun(t, "ls", "--dir", dir, "--pane", "quarantine", "--filter", "sub:friend-requests", "-o", "json")), &ls); err != nil {
			t.Fatal(err)
		}
		return ls
	}
	before := map[string]bool{}
	for _, b := range quarantine().Blobs {
		before[b.Name] = true
	}
	mustRun(t, "drain", "--dir", dir, "--filter", "sub:friend-requests", "--yes")
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "24h")
	// (a copy the drain led to: one quarantined since — whatever the day its dead letters were named by)
	ls := quarantine()
	guid := ""
	for _, b := range ls.Blobs {
		if b.Verdicts["cap"] > 0 && !before[b.Name] {
			guid = strings.TrimSuffix(b.Name[strings.LastIndexByte(b.Name, '/')+1:], ".json")[:8]
			break
		}
	}
	if guid == "" {
		t.Fatalf("no capped friend-requests quarantine copy: %+v", ls)
	}
	tm := newTerm(t, 200, 50, binary(t), "--dir", dir, "--interval", "1h")
	tm.screen("REHEARSAL", "[1 Stranded")
	tm.keys("2")
	tm.screen("[2 Quarantine")
	tm.keys("/")
	tm.keys("-l", guid)
	tm.keys("Enter")
	tm.screen("filter: " + guid)
	tm.keys("Enter")
	tm.screen("quarantine ·", "r restore")
	tm.keys("Enter")
	tm.screen("journey:", "— quarantined", "1. dead-lettered", "3. dead-lettered", "▸ 3.")
	tm.screenMatches(`quarantined\s+\(cap\)`) // (the pass's line may wrap between the two words)
	tm.keys("[")
	tm.screen("▸ 2.")
	tm.keys("[")
	tm.screen("▸ 1.")
	tm.keys("Enter")
	tm.screen("archived ·", "archived/FRIEND-REQUESTS/")
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
