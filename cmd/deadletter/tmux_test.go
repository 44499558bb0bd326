package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/blob"
	"github.com/deadletter/deadletter/replay/rules"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// tmuxTerm is the real binary in a real terminal: a tmux session we type into and read back.
type tmuxTerm struct {
	t      *testing.T
	sock   string
	status string // a file the wrapper writes the program's exit status to
	// escAt is when Escape was last sent: a key within the terminal reader's escape timeout (50 ms in Bubble Tea
	// v2) after it is read as alt+key, as in any terminal — the next key waits it out.
	escAt time.Time
}

// escWait is longer than the reader's escape timeout.
const escWait = 150 * time.Millisecond

func newTerm(t *testing.T, w, h int, command ...string) *tmuxTerm {
	t.Helper()
	if testing.Short() {
		t.Skip("end to end in a real terminal: runs without -short (./test.sh, CI)")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is missing: ./test.sh installs it")
		}
		t.Skip("tmux is not installed")
	}
	tm := &tmuxTerm{t: t, sock: tmuxPrefix() + storetest.NewName(), status: filepath.Join(t.TempDir(), "status")}
	// A shell runs the program and writes its exit status to a file, then stays, so the screen can still be read.
	wrapper := `TERM=xterm-256color "$@"; echo $? > ` + tm.status + `; exec sleep 100000`
	args := append([]string{"-f", "/dev/null", "new-session", "-d", "-s", "dl", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "sh", "-c", wrapper, "sh"}, command...)
	tm.tmux(args...)
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	return tm
}

// tmuxPrefix names this test process's tmux servers, so the run's hygiene check finds its own and no other run's.
func tmuxPrefix() string { return fmt.Sprintf("deadletter-%d-", os.Getpid()) }

func (tm *tmuxTerm) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// keys types keys, an Escape alone: what follows it waits out the escape timeout.
func (tm *tmuxTerm) keys(k ...string) {
	for len(k) > 0 {
		time.Sleep(time.Until(tm.escAt.Add(escWait)))
		n := 1
		for n < len(k) && k[n-1] != "Escape" && k[n] != "Escape" {
			n++
		}
		tm.tmux(append([]string{"send-keys", "-t", "dl"}, k[:n]...)...)
		if k[n-1] == "Escape" {
			tm.escAt = time.Now()
		}
		k = k[n:]
	}
}

func (tm *tmuxTerm) capture() string { return tm.tmux("capture-pane", "-p", "-t", "dl") }

// screen waits (with a deadline) until the terminal shows every text, and returns it.
func (tm *tmuxTerm) screen(want ...string) string {
	tm.t.Helper()
	var s string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		s = tm.capture()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return s
		}
	}
	tm.t.Fatalf("the terminal never showed %q:\n%s", want, s)
	return ""
}

// screenMatches waits (with a deadline) until the terminal matches re.
func (tm *tmuxTerm) screenMatches(re string) string {
	tm.t.Helper()
	var s string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if s = tm.capture(); regexp.MustCompile(re).MatchString(s) {
			return s
		}
	}
	tm.t.Fatalf("the terminal never matched %s:\n%s", re, s)
	return ""
}

// exited waits until the program has ended and returns its exit status.
func (tm *tmuxTerm) exited() int {
	tm.t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(tm.status); err == nil && len(b) > 0 {
			var code int
			fmt.Sscan(string(b), &code)
			return code
		}
	}
	tm.t.Fatalf("the program did not end:\n%s", tm.capture())
	return 0
}

// The dashboard on a blob whose name and subject hold terminal escape sequences: shown escaped, the screen is
// not cleared, the window title is not changed; q quits from the detail.
func TestDashboardInTmux(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "seed", "--dir", dir, "--count", "5")
	d, _ := dirstore.Open(dir)
	name := "HOSTILE/2026/11/30/9/\x1b[2J\x1b]0;pwned\x07.json"
	body := `[{"id":"evil-1","subject":"\u001b[2J\u001b]0;pwned\u0007","eventType":"ProcessPushNotification","dataVersion":"1","data":{}}]`
	if _, err := d.Write(context.Background(), name, []byte(body), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	d.Backdate(context.Background(), name, time.Now().Add(-3*time.Hour))
	tm := newTerm(t, 120, 32, binary(t), "--dir", dir, "--interval", "1h")
	tm.screen("[1 Stranded", "HOSTILE")
	tm.keys("/", "HOSTILE", "Enter")
	tm.screen("filter: HOSTILE")
	tm.keys("Enter")
	tm.screen(`\x1b[2J\x1b]0;pwned\x07.json`, "evil-1")
	tm.keys("Enter") // the event's JSON
	s := tm.screen(`"subject": "\u001b[2J\u001b]0;pwned\u0007"`)
	if !strings.Contains(s, "deadletter") {
		t.Fatalf("the screen was cleared:\n%s", s)
	}
	if title := tm.tmux("display-message", "-p", "-t", "dl", "#{pane_title}"); strings.Contains(title, "pwned") {
		t.Fatalf("a payload set the terminal title: %q", title)
	}
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.capture())
	}
}

// At 60×15 no key acts behind the "too small" screen: d then y drains nothing. Enlarged, it works again.
func TestTooSmallInTmux(t *testing.T) {
	dir := seeded(t)
	before := drainCounts(t, dir)
	tm := newTerm(t, 60, 15, binary(t), "--dir", dir, "--interval", "1h")
	tm.screen("needs at least 80×24")
	tm.keys("d")
	tm.keys("y")
	tm.keys("Enter")
	tm.screen(`"enter" was dropped`) // the last key was swallowed, and the screen says so
	tm.tmux("resize-window", "-t", "dl", "-x", "120", "-y", "32")
	tm.screen("[1 Stranded")
	if s := tm.capture(); strings.Contains(s, "Drain") {
		t.Fatalf("a key pressed behind the too-small screen opened a dialog:\n%s", s)
	}
	if after := drainCounts(t, dir); after != before {
		t.Fatalf("blobs were drained behind the too-small screen: %d → %d", before, after)
	}
	tm.keys("q")
	tm.exited()
}

func drainCounts(t *testing.T, dir string) int {
	t.Helper()
	d, _ := dirstore.Open(dir)
	l, err := store.ListAll(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range l.Blobs {
		if _, ok := blob.MetaGet(b.Metadata, rules.MetaDrainCount); ok {
			n++
		}
	}
	return n
}

// Under a filter, ctrl+a then d drains the rows shown — the confirmation says so — and nothing else.
func TestFilteredDrainInTmux(t *testing.T) {
	dir := seeded(t)
	tm := newTerm(t, 140, 40, binary(t), "--dir", dir, "--interval", "1h")
	tm.screen("[1 Stranded")
	tm.keys("/", "WEBHOOKS", "Enter")
	tm.screen("filter: WEBHOOKS")
	tm.keys("C-a", "d")
	s := tm.screen("stranded blob(s)?", "shown (filter 'WEBHOOKS')")
	tm.keys("y")
	tm.screen("Drain finished")
	d, _ := dirstore.Open(dir)
	l, _ := store.ListAll(context.Background(), d)
	drained := 0
	for _, b := range l.Blobs {
		if _, ok := blob.MetaGet(b.Metadata, rules.MetaDrainCount); ok {
			drained++
			if !strings.HasPrefix(b.Name, "WEBHOOKS/") {
				t.Fatalf("drained %s, which the filter hid", b.Name)
			}
		}
	}
	if drained == 0 || !strings.Contains(s, fmt.Sprintf("Drain %d stranded", drained)) {
		t.Fatalf("drained %d:\n%s", drained, s)
	}
	tm.keys("q")
	tm.exited()
}

// A restore confirmation taller than an 80×24 screen keeps its key line; its body scrolls.
func TestTallDialogInTmux(t *testing.T) {
	dir := seeded(t)
	tm := newTerm(t, 80, 24, binary(t), "--dir", dir, "--interval", "1h")
	tm.screen("[1 Stranded")
	tm.keys("2", "C-a", "r")
	tm.screen("Restore", "y confirm", "esc cancel", "lines 1–", "f force") // the plans are read: f applies

	tm.keys("PageDown")
	s := tm.screenMatches(`lines [1-9][0-9]+–`) // scrolled down a page…
	if !strings.Contains(s, "y confirm") || !strings.Contains(s, "esc cancel") {
		t.Fatalf("…and the key line is still there:\n%s", s)
	}
	tm.keys("Escape")
	tm.screen("[2 Quarantine")
	tm.keys("q")
	tm.exited()
}

// ls on a terminal fits its width, names shortened from the middle; answering no at a prompt changes nothing
// and exits 3.
func TestCommandLineInTmux(t *testing.T) {
	dir := seeded(t)
	out := filepath.Join(t.TempDir(), "ls.txt")
	tm := newTerm(t, 80, 40, "sh", "-c", binary(t)+" ls --dir "+dir+" | tee /dev/null > "+out+"; "+binary(t)+" ls --pane quarantine --dir "+dir+"; sleep 60")
	s := tm.screen("PANE", "…")
	for _, l := range strings.Split(s, "\n") {
		if len([]rune(l)) > 80 {
			t.Fatalf("ls is wider than the terminal: %q", l)
		}
	}
	piped, _ := os.ReadFile(out)
	if !strings.Contains(string(piped), ".json") || strings.Contains(string(piped), "….json") {
		t.Fatalf("piped, ls cuts nothing:\n%s", piped)
	}
	tm2 := newTerm(t, 100, 20, binary(t), "drain", "--dir", dir)
	tm2.screen("[y/N]")
	tm2.keys("n", "Enter")
	tm2.screen("nothing changed")
	if code := tm2.exited(); code != 3 {
		t.Fatalf("declined: exit %d", code)
	}
	if drainCounts(t, dir) != 0 {
		t.Fatal("a declined drain drained")
	}
	// twin rm asks on a terminal: no keeps the twin, yes removes it.
	tw := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", tw)
	tm3 := newTerm(t, 100, 20, binary(t), "twin", "rm", "--dir", tw)
	tm3.screen("Remove the twin in", "incident rehearsal", "[y/N]")
	tm3.keys("n", "Enter")
	if code := tm3.exited(); code != 3 {
		t.Fatalf("twin rm declined: exit %d", code)
	}
	if _, err := os.Stat(tw); err != nil {
		t.Fatalf("a declined twin rm removed the twin: %v", err)
	}
	tm4 := newTerm(t, 100, 20, binary(t), "twin", "rm", "--dir", tw)
	tm4.screen("[y/N]")
	tm4.keys("y", "Enter")
	tm4.screen("removed")
	if _, err := os.Stat(tw); !os.IsNotExist(err) {
		t.Fatalf("twin rm answered yes left the twin: %v", err)
	}
}
