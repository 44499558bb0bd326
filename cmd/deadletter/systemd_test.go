package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/internal/testkit"
	"github.com/deadletter/deadletter/store/storetest"
)

// unitFile is deploy/systemd/deadletter-watch.service.
func unitFile(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "systemd", "deadletter-watch.service"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The unit passes systemd's own check with nothing to say (systemd-analyze verify exits 0 even on unknown keys and
// bad values, so any output fails), pointed at the real binary; and it is hardened as docs/alerting.md says.
func TestSystemdUnitVerifies(t *testing.T) {
	t.Parallel()
	analyze := tool(t, "systemd", "systemd-analyze")
	unit := unitFile(t)
	for _, want := range []string{"DynamicUser=yes", "ProtectSystem=strict", "NoNewPrivileges=yes", "CapabilityBoundingSet=\n",
		"LoadCredential=connection-string:", "--connection-string-file %d/connection-string", "--read-only"} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit lacks %q", want)
		}
	}
	if regexp.MustCompile(`(?i)AccountKey=|SharedAccessSignature=|--connection-string |Environment=.*CONNECTION`).MatchString(unit) {
		t.Error("the unit carries a connection string: it must come from LoadCredential=")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "deadletter-watch.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(unit, "/usr/local/bin/deadletter", binary(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// The unit's ExecStart, run as systemd would run it (%d, the credentials directory, holding the two files
// LoadCredential= copies there), watches a container and answers /healthz: its flags are real.
func TestSystemdUnitCommandRuns(t *testing.T) {
	t.Parallel()
	cs := storetest.AzuriteConnectionString(t)
	az := storetest.Azure(t)
	container := strings.TrimPrefix(az.Describe(), "devstoreaccount1/")
	m := regexp.MustCompile(`(?m)^ExecStart=((?:.*\\\n)*.*)$`).FindStringSubmatch(unitFile(t))
	if m == nil {
		t.Fatal("no ExecStart in the unit")
	}
	creds := t.TempDir()
	os.WriteFile(filepath.Join(creds, "connection-string"), []byte(cs+"\n"), 0o600)
	os.WriteFile(filepath.Join(creds, "handlers.json"), []byte(`{"ProcessWebhook": false}`), 0o600)
	line := strings.ReplaceAll(strings.ReplaceAll(m[1], "\\\n", " "), "%d", creds)
	args := strings.Fields(strings.Replace(line, "127.0.0.1:9464", "127.0.0.1:0", 1))
	if args[0] != "/usr/local/bin/deadletter" {
		t.Fatalf("ExecStart runs %s", args[0])
	}
	cmd := exec.Command(binary(t), append(args[1:], "--container", container)...)
	cmd.Env = []string{"HOME=" + creds, "PATH=" + os.Getenv("PATH")}
	out := &testkit.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	serving := regexp.MustCompile(`serving /metrics and /healthz on (http://\S+)`)
	var base string
	eventually(t, "the unit's watch serves", func() bool {
		if m := serving.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
		return base != ""
	})
	eventually(t, "the unit's watch reads the container (/healthz 200)", func() bool {
		code, _, _ := httpGet(base + "/healthz")
		return code == http.StatusOK
	})
	if strings.Contains(out.String(), "AccountKey") {
		t.Fatalf("the watch printed its connection string:\n%s", out.String())
	}
}
