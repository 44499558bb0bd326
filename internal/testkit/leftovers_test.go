package testkit

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// The hygiene check sees what it is there to see: a process a test started and left running, and a file left in
// the package folder — and nothing once they are gone.
func TestHygieneSeesWhatIsLeft(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("processes are found through /proc")
	}
	h := TakeHygiene()
	c := exec.Command("sleep", "31.7")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("left-by-a-test", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	left := strings.Join(h.Leftovers(), "\n")
	c.Process.Kill()
	c.Wait()
	os.Remove("left-by-a-test")
	if !strings.Contains(left, "31.7") || !strings.Contains(left, "left-by-a-test") {
		t.Fatalf("the check missed what was left:\n%s", left)
	}
	if again := h.Leftovers(); len(again) != 0 {
		t.Fatalf("left after cleaning up: %v", again)
	}
}
