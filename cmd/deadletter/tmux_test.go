package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

// The real binary in a real terminal (tmux): a blob whose name and subject hold terminal escape sequences is
// shown escaped, the screen is not cleared and the window title is not changed.
func TestDashboardInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is missing: ./test.sh installs it")
		}
		t.Skip("tmux is not installed")
	}
	bin := filepath.Join(t.TempDir(), "deadletter")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	mustRun(t, "seed", "--dir", dir, "--count", "5")
	d, _ := store.OpenDir(dir)
	name := "HOSTILE/2026/11/30/9/\x1b[2J\x1b]0;pwned\x07.json"
	body := `[{"id":"evil-1","subject":"\u001b[2J\u001b]0;pwned\u0007","eventType":"ProcessPushNotification","dataVersion":"1"}]`
	if _, err := d.Write(context.Background(), name, []byte(body), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	d.Backdate(context.Background(), name, time.Now().Add(-3*time.Hour))

	sock := "deadletter-" + storetest.NewName()
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("-f", "/dev/null", "new-session", "-d", "-s", "dl", "-x", "120", "-y", "32", "env", "TERM=xterm-256color", bin, "--dir", dir, "--interval", "1h")
	t.Cleanup(func() { exec.Command("tmux", "-L", sock, "kill-server").Run() })
	screen := func(want ...string) string {
		t.Helper()
		var s string
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			s = tmux("capture-pane", "-p", "-t", "dl")
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(s, w)
			}
			if ok {
				return s
			}
		}
		t.Fatalf("screen never showed %q:\n%s", want, s)
		return ""
	}
	screen("[1 Stranded", "HOSTILE")
	tmux("send-keys", "-t", "dl", "/", "HOSTILE", "Enter")
	screen("filter: HOSTILE")
	tmux("send-keys", "-t", "dl", "Enter")
	s := screen(`\x1b[2J\x1b]0;pwned\x07.json`, `subject \x1b[2J\x1b]0;pwned\x07`)
	if !strings.Contains(s, "deadletter") {
		t.Fatalf("the screen was cleared:\n%s", s)
	}
	if title := tmux("display-message", "-p", "-t", "dl", "#{pane_title}"); strings.Contains(title, "pwned") {
		t.Fatalf("a payload set the terminal title: %q", title)
	}
	tmux("send-keys", "-t", "dl", "Escape")
	time.Sleep(300 * time.Millisecond) // let the escape key stand alone, not as an Alt prefix
	tmux("send-keys", "-t", "dl", "q")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if err := exec.Command("tmux", "-L", sock, "has-session", "-t", "dl").Run(); err != nil {
			break // the program quit and tmux closed the session
		}
		if time.Now().After(deadline) {
			t.Fatalf("q did not quit:\n%s", tmux("capture-pane", "-p", "-t", "dl"))
		}
	}
}
