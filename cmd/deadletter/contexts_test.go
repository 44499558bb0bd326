package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/internal/testkit"
	"github.com/deadletter/deadletter/store/storetest"
)

// writeConfig writes a config file and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A config file that is wrong says where — the file, the line, the key — and what: an unknown key, a value of
// the wrong type, two contexts of one name, a context naming two containers or none, a current context that is
// not there.
func TestConfigErrorsSayWhere(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, want string }{
		{"unknown key", "contexts:\n  - name: a\n    dir: /tmp\n    colour: red\n", ":4: colour: not a context key"},
		{"wrong type", "contexts:\n  - name: a\n    dir: /tmp\n    ttl: soon\n", `:4: ttl: "soon"`},
		{"bool", "contexts:\n  - name: a\n    dir: /tmp\n    read-only: maybe\n", `:4: read-only: "maybe"`},
		{"duplicate", "contexts:\n  - name: a\n    dir: /tmp\n  - name: a\n    dir: /var\n", `:4: name: "a" names two contexts (the other at line 2)`},
		{"two containers", "contexts:\n  - name: a\n    dir: /tmp\n    account-url: https://x.blob.core.windows.net\n", `:3: dir: context "a" names a directory and an account`},
		{"no container", "contexts:\n  - name: a\n    container: dl\n", `:2: context "a" names no container`},
		{"no name", "contexts:\n  - dir: /tmp\n", `:2: name: every context needs a name`},
		{"current", "current-context: prod\ncontexts:\n  - name: a\n    dir: /tmp\n", `:1: current-context: "prod" is not one of the contexts`},
		{"top key", "context: a\n", `:1: context: not a config key`},
		{"not yaml", "contexts: [\n", "config "},
	} {
		p := writeConfig(t, tc.body)
		_, errs, code := runCmd(t, "context", "list", "--config", p)
		if code != exitError || !strings.Contains(errs, p) || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, %q; want the file and %q", tc.name, code, errs, tc.want)
		}
	}
}

// --context picks a context; the command line beats its values and it beats the environment; context use
// rewrites the file, keeping its comments; a container named on the command line sets the current context aside.
func TestContextsAndTheirPrecedence(t *testing.T) {
	dev, prod := seeded(t), seeded(t)
	p := writeConfig(t, "# our two estates\ncurrent-context: dev\ncontexts:\n  - name: dev\n    dir: "+dev+"\n  - name: prod\n    dir: "+prod+"\n    read-only: true\n")
	if out := mustRun(t, "context", "list", "--config", p); !regexp.MustCompile(`(?m)^\* dev +dir:`).MatchString(out) {
		t.Fatalf("list:\n%s", out)
	}
	container := func(args ...string) string {
		var ls lsOut
		out := mustRun(t, append([]string{"ls", "--json", "--config", p}, args...)...)
		if err := json.Unmarshal([]byte(out), &ls); err != nil {
			t.Fatal(err)
		}
		return ls.Container
	}
	if c := container(); c != "dir:"+dev {
		t.Fatalf("the current context's container: %s", c)
	}
	if c := container("--context", "prod"); c != "dir:"+prod {
		t.Fatalf("--context prod: %s", c)
	}
	other := t.TempDir()
	if c := container("--dir", other); c != "dir:"+other {
		t.Fatalf("--dir beats the current context: %s", c)
	}
	t.Setenv("DEADLETTER_DIR", other)
	if c := container("--context", "prod"); c != "dir:"+prod {
		t.Fatalf("the context beats DEADLETTER_DIR: %s", c)
	}
	// prod is read-only: a drain is refused there, and not in dev.
	if _, errs, code := runCmd(t, "drain", "--config", p, "--context", "prod", "--yes"); code == 0 || !strings.Contains(errs, "read-only") {
		t.Fatalf("a drain in the read-only context: exit %d %s", code, errs)
	}
	mustRun(t, "context", "use", "prod", "--config", p)
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), "current-context: prod") || !strings.Contains(string(b), "# our two estates") {
		t.Fatalf("context use wrote:\n%s", b)
	}
	if _, errs, code := runCmd(t, "ls", "--config", p, "--context", "staging"); code != exitError || !strings.Contains(errs, `no context "staging"`) {
		t.Fatalf("an unknown context: exit %d %s", code, errs)
	}
}

// check --all-contexts over two directories and an Azurite endpoint nobody answers: each context reported under
// its name, exit 2 for the one it could not check, the others' findings still there; JSON keyed by context.
func TestCheckEveryContext(t *testing.T) {
	cs := storetest.AzuriteConnectionString(t)
	dead := regexp.MustCompile(`BlobEndpoint=[^;]+`).ReplaceAllString(cs, "BlobEndpoint=http://127.0.0.1:1/devstoreaccount1")
	t.Setenv("DEADLETTER_DEAD_ENDPOINT", dead)
	dev, prod := t.TempDir(), seeded(t)
	p := writeConfig(t, "contexts:\n  - name: dev\n    dir: "+dev+"\n  - name: prod\n    dir: "+prod+"\n  - name: gone\n    connection-string-env: DEADLETTER_DEAD_ENDPOINT\n")
	out, _, code := runCmd(t, "check", "--all-contexts", "--config", p, "--timeout", "5s")
	if code != exitError {
		t.Fatalf("exit %d, want 2 (one context could not be checked):\n%s", code, out)
	}
	for _, want := range []string{"── context dev ──", "healthy", "── context prod ──", "stranded", "── context gone ──", "could not check"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the report lacks %q:\n%s", want, out)
		}
	}
	var doc struct {
		Contexts map[string]struct {
			Healthy bool   `json:"healthy"`
			Error   string `json:"error"`
		} `json:"contexts"`
	}
	out, _, _ = runCmd(t, "check", "--all-contexts", "--json", "--config", p, "--timeout", "5s")
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(doc.Contexts) != 3 || !doc.Contexts["dev"].Healthy || doc.Contexts["prod"].Healthy || doc.Contexts["gone"].Error == "" {
		t.Fatalf("JSON by context: %+v", doc.Contexts)
	}
	// Without the dead one: the worst of healthy and findings is findings.
	p2 := writeConfig(t, "contexts:\n  - name: dev\n    dir: "+dev+"\n  - name: prod\n    dir: "+prod+"\n")
	if _, _, code := runCmd(t, "check", "--all-contexts", "--config", p2); code != exitFindings {
		t.Fatalf("exit %d, want 1", code)
	}
}

// watch --all-contexts serves one /metrics whose series carry each context's label, and says each line's context.
func TestWatchEveryContextsMetrics(t *testing.T) {
	t.Parallel()
	dev, prod := seeded(t), seeded(t)
	p := writeConfig(t, "contexts:\n  - name: dev\n    dir: "+dev+"\n  - name: prod\n    dir: "+prod+"\n")
	ctx, cancel := context.WithCancel(context.Background())
	out, errb := &testkit.LockedBuffer{}, &testkit.LockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"watch", "--all-contexts", "--config", p, "--interval", "100ms", "--metrics-addr", "127.0.0.1:0"},
			stdio{in: strings.NewReader(""), out: out, err: errb})
	}()
	t.Cleanup(func() { cancel(); <-done })
	var base string
	serving := regexp.MustCompile(`serving /metrics and /healthz on (http://\S+)`)
	eventually(t, "watch names the address it serves", func() bool {
		if m := serving.FindStringSubmatch(errb.String()); m != nil {
			base = m[1]
		}
		return base != ""
	})
	eventually(t, "both contexts' series", func() bool {
		s := scrape(t, base)
		_, okDev := s.sum("deadletter_findings_blobs", "context", "dev", "kind", "stranded")
		_, okProd := s.sum("deadletter_findings_blobs", "context", "prod", "kind", "stranded")
		return okDev && okProd
	})
	eventually(t, "lines of both contexts", func() bool {
		return strings.Contains(out.String(), "[dev] ") && strings.Contains(out.String(), "[prod] ")
	})
}
