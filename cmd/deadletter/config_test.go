package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// context use rewrites current-context and nothing else: a byte-order mark, CRLF line endings, a comment on the
// line, a second YAML document and the file's mode are all kept; through a link it writes the file the link leads
// to and the link stays.
func TestContextUseKeepsTheFile(t *testing.T) {
	t.Parallel()
	dev, prod := t.TempDir(), t.TempDir()
	body := "\xef\xbb\xbf# estates\r\ncurrent-context: dev   # the one we use\r\ncontexts:\r\n  - name: dev\r\n    dir: " + dev +
		"\r\n  - name: prod\r\n    dir: " + prod + "\r\n---\r\n# a second document, for another tool\r\nother: 1\r\n"
	real := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(real, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symbolic links here")
	}
	mustRun(t, "context", "use", "prod", "--config", link)
	got, _ := os.ReadFile(real)
	if want := strings.Replace(body, "current-context: dev ", "current-context: prod ", 1); string(got) != want {
		t.Fatalf("context use wrote\n%q\nwant\n%q", got, want)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced by a file")
	}
	if fi, _ := os.Stat(real); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, was 0600", fi.Mode().Perm())
	}
	if l := lsJSONOf(t, "--config", link); l.Container != "dir:"+prod {
		t.Fatalf("after context use prod: %s", l.Container)
	}
}

// A config others may write is refused with the chmod that fixes it: whoever writes it chooses the container.
func TestAWritableConfigIsRefused(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("Windows keeps no group and other write bits")
	}
	p := writeConfig(t, "contexts:\n  - name: dev\n    dir: "+t.TempDir()+"\n")
	for _, mode := range []os.FileMode{0o666, 0o620} {
		os.Chmod(p, mode)
		if _, errs, code := runCmd(t, "ls", "--config", p, "--context", "dev"); code != 2 || !strings.Contains(errs, "chmod go-w "+p) {
			t.Fatalf("a config of mode %o: exit %d %s", mode, code, errs)
		}
	}
}

// Relative dir and handlers of a context are the config file's folder's, from wherever the command runs.
func TestRelativePathsAreTheConfigsFolders(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	os.Mkdir(filepath.Join(base, "snap"), 0o755)
	p := filepath.Join(base, "config.yaml")
	os.WriteFile(p, []byte("contexts:\n  - name: snap\n    dir: snap\n"), 0o600)
	if l := lsJSONOf(t, "--config", p, "--context", "snap"); l.Container != "dir:"+filepath.Join(base, "snap") {
		t.Fatalf("a relative dir opened %s", l.Container)
	}
}

// A context that is wrong stops only the commands that run in it: the others, a command naming its own
// container, and check --all-contexts (which reports it in its place, as it does a context whose connection-string
// variable is unset) all run.
func TestABadContextStopsOnlyItsOwn(t *testing.T) {
	t.Parallel()
	dev := seeded(t)
	p := writeConfig(t, "current-context: unset\ncontexts:\n  - name: dev\n    dir: "+dev+"\n  - name: bad\n    dir: /tmp\n    ttl: soon\n"+
		"  - name: unset\n    connection-string-env: DEADLETTER_TEST_NEVER_SET\n")
	if _, errs, code := runCmd(t, "ls", "--config", p, "--context", "bad"); code != 2 || !strings.Contains(errs, `ttl: "soon"`) {
		t.Fatalf("the bad context: exit %d %s", code, errs)
	}
	lsJSONOf(t, "--config", p, "--context", "dev")
	lsJSONOf(t, "--config", p, "--dir", dev)
	out, errs, code := runCmd(t, "check", "--all-contexts", "--json", "--config", p)
	var doc struct {
		Contexts map[string]struct {
			Healthy bool   `json:"healthy"`
			Error   string `json:"error"`
		} `json:"contexts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 2 {
		t.Fatalf("check --all-contexts: exit %d %v\n%s%s", code, err, out, errs)
	}
	if len(doc.Contexts) != 3 || doc.Contexts["unset"].Error == "" || doc.Contexts["bad"].Error == "" || doc.Contexts["dev"].Error != "" {
		t.Fatalf("check --all-contexts: %+v", doc.Contexts)
	}
}

// No command prints a SAS signature, from the config or anywhere; a context's name holding a newline or a bidi
// override is printed escaped, and never offered for completion.
func TestContextsPrintNoSecretAndNoRawName(t *testing.T) {
	t.Parallel()
	p := writeConfig(t, "contexts:\n  - name: sas\n    account-url: https://acct.blob.core.windows.net/?sv=2024-01-01&sig=SECRETSIGNATURE\n"+
		"  - name: \"evil\\u202Eeman\"\n    dir: /tmp\n  - name: \"two\\nlines\"\n    dir: /tmp\n")
	for _, args := range [][]string{{"context", "list"}, {"context", "show", "sas"}, {"ls", "--context", "nope"}, {"__complete", "--context", ""}} {
		out, errs, _ := runCmd(t, append(args, "--config", p)...)
		if strings.Contains(out+errs, "SECRETSIGNATURE") || strings.Contains(out+errs, "\u202e") || strings.Contains(out+errs, "two\nlines") {
			t.Fatalf("%v printed a secret or a raw name:\n%s%s", args, out, errs)
		}
	}
}
