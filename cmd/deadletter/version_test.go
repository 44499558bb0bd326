package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/internal/output"
)

// `version` and `--version` say the same line, whichever way the binary was built.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	if v, flag := mustRun(t, "version"), mustRun(t, "--version"); v != flag || !strings.HasPrefix(v, "deadletter version ") {
		t.Fatalf("version %q, --version %q", v, flag)
	}
	var j output.VersionJSON
	if err := json.Unmarshal([]byte(mustRun(t, "version", "--json")), &j); err != nil || j.Version == "" || j.Go == "" {
		t.Fatalf("version --json: %+v", j)
	}

	// A release build with -ldflags, and `go build` in a git checkout (VCS stamping on, whatever GOFLAGS says).
	if testing.Short() {
		t.Skip("the release builds: run without -short (./test.sh, CI)")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	builds := map[string][]string{"-ldflags": {"-ldflags", "-X main.buildVersion=v9.8.7 -X main.buildCommit=89abcdef0123456789abcdef"}}
	if err == nil {
		builds["checkout"] = []string{"-buildvcs=true"}
	} else {
		t.Log("not a git checkout: the VCS-stamped build is not tried")
	}
	for label, flags := range builds {
		bin := filepath.Join(t.TempDir(), "deadletter")
		if out, err := exec.Command("go", append(append([]string{"build"}, flags...), "-o", bin, ".")...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", label, err, out)
		}
		v, err1 := exec.Command(bin, "version").Output()
		flag, err2 := exec.Command(bin, "--version").Output()
		if err1 != nil || err2 != nil || string(v) != string(flag) {
			t.Fatalf("%s: version %q (%v), --version %q (%v)", label, v, err1, flag, err2)
		}
		want := "deadletter version v9.8.7 (commit 89abcdef0123, go"
		if label == "checkout" {
			want = "(commit " + strings.TrimSpace(string(head))[:12]
		}
		if !strings.Contains(string(v), want) {
			t.Errorf("%s: %q, want %q in it", label, v, want)
		}
	}
}

// What each way of building records, read back: go install of a tag, of a commit (a pseudo-version), a checkout
// with changes, -ldflags over all of it, and nothing at all.
func TestVersionFrom(t *testing.T) {
	t.Parallel()
	bi := func(v string, settings ...string) *debug.BuildInfo {
		b := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/deadletter/deadletter", Version: v}}
		for i := 0; i < len(settings); i += 2 {
			b.Settings = append(b.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return b
	}
	for _, c := range []struct {
		bi               *debug.BuildInfo
		ldVersion, ldRev string
		want             string
	}{
		{bi("v1.4.0"), "", "", "v1.4.0 (unknown commit, go1.26.8)"},
		{bi("v0.0.0-20261201010203-0123456789ab"), "", "", "v0.0.0-20261201010203-0123456789ab (commit 0123456789ab, go1.26.8)"},
		{bi("v1.4.1-0.20261201010203-0123456789ab+dirty", "vcs.revision", "fedcba9876543210", "vcs.modified", "true"), "", "", "v1.4.1-0.20261201010203-0123456789ab+dirty (commit fedcba987654 with uncommitted changes, go1.26.8)"},
		{bi("(devel)", "vcs.revision", "fedcba9876543210", "vcs.modified", "true"), "v2.0.0", "abc", "v2.0.0 (commit abc, go1.26.8)"},
		{nil, "", "", "(devel) (unknown commit)"},
	} {
		if got := versionFrom(c.bi, c.ldVersion, c.ldRev).String(); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
