package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// context add writes a context from the flags typed, checked as the file is read, keeping every other byte; it
// refuses a second container, a name the file has, a value its flag would refuse and a connection string itself;
// --use makes it current, and the commands then run in it.
func TestContextAddWritesACheckedContext(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	body := "# kept\r\ncontexts:\r\n  - name: other   # a comment\r\n    dir: " + t.TempDir() + "\r\n"
	cfg := writeConfig(t, body)
	os.Chmod(cfg, 0o600)
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, dir)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, "context", "add", "dev", "--dir", rel, "--ttl", "2h", "--read-only", "--use", "--config", cfg)
	after, _ := os.ReadFile(cfg)
	if !strings.Contains(string(after), "# kept\r\n") || !strings.Contains(string(after), "- name: other   # a comment\r\n") ||
		!strings.Contains(string(after), "dir: "+dir+"\r\n") || !strings.Contains(string(after), "current-context: dev") {
		t.Fatalf("context add rewrote the file, or kept the relative dir:\n%q", after)
	}
	if out := mustRun(t, "context", "show", "dev", "--config", cfg); !strings.Contains(out, "ttl") || !strings.Contains(out, "read-only") {
		t.Errorf("context show dev:\n%s", out)
	}
	if out := mustRun(t, "ls", "-o", "name", "--config", cfg); !strings.Contains(out, ".json") {
		t.Errorf("ls in the new context listed nothing:\n%s", out)
	}
	for _, bad := range [][]string{
		{"context", "add", "dev", "--dir", dir},                                                     // the name is taken
		{"context", "add", "two", "--dir", dir, "--account-url", "https://a.blob.core.windows.net"}, // two containers
		{"context", "add", "none", "--ttl", "2h"},                                                   // no container
		{"context", "add", "x", "--dir", dir, "--ttl", "soon"},                                      // a value its flag refuses
		{"context", "add", "y", "--connection-string", "UseDevelopmentStorage=true"},                // a secret in the file
	} {
		before, _ := os.ReadFile(cfg)
		if _, errs, code := runCmd(t, append(bad, "--config", cfg)...); code == 0 {
			t.Errorf("%v was taken", bad)
		} else if now, _ := os.ReadFile(cfg); string(now) != string(before) {
			t.Errorf("%v was refused (%s) but the file changed", bad, errs)
		}
	}
}
