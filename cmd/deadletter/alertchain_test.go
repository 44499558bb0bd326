package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/testkit"
)

// tool is a program the test runs, by any of its names (Debian's packages rename some): skipped when missing,
// failing under CI, where ./test.sh installs it.
func tool(t *testing.T, pkg string, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is missing: ./test.sh installs it (Debian package %s)", names[0], pkg)
	}
	t.Skipf("%s is not installed (apt-get install %s)", names[0], pkg)
	return ""
}

// waitFor polls cond until it holds, failing after d: the alert chain's timings add up past eventually's 20s.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(d)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("%s: not within %s", what, d)
		case <-tick.C:
		}
	}
}

// daemon starts a long-running program and stops it when the test ends; its output is shown if the test fails.
func daemon(t *testing.T, name string, env []string, args ...string) *testkit.LockedBuffer {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	out := &testkit.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s:\n%s", filepath.Base(name), out.String())
		}
	})
	return out
}

// webhookCall is one notification Alertmanager's webhook receiver sent: which route's receiver, and the alerts.
type webhookCall struct {
	Path     string
	Receiver string `json:"receiver"`
	Alerts   []struct {
		Status      string            `json:"status"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"alerts"`
}

type webhook struct {
	mu    sync.Mutex
	calls []webhookCall
}

func (w *webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	var c webhookCall
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &c)
	c.Path = r.URL.Path
	w.mu.Lock()
	w.calls = append(w.calls, c)
	w.mu.Unlock()
}

// find is the first alert named alertname in status, with where it was sent.
func (w *webhook) find(alertname, status string) (path, receiver string, labels, annotations map[string]string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.calls {
		for _, a := range c.Alerts {
			if a.Labels["alertname"] == alertname && a.Status == status {
				return c.Path, c.Receiver, a.Labels, a.Annotations
			}
		}
	}
	return "", "", nil, nil
}

// rewrite copies a shipped file into dir with the replacements made, failing if one of them matches nothing (the
// shipped file changed under the test).
func rewrite(t *testing.T, from, dir string, repl ...string) string {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i < len(repl); i += 2 {
		re := regexp.MustCompile(repl[i])
		if !re.MatchString(s) {
			t.Fatalf("%s: nothing matches %q", from, repl[i])
		}
		s = re.ReplaceAllString(s, repl[i+1])
	}
	to := filepath.Join(dir, filepath.Base(from))
	if err := os.WriteFile(to, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return to
}

// The real chain an on-call depends on, from Debian's packages: `watch --all-contexts --metrics-addr` on a seeded
// directory incident (context prod), Prometheus scraping it with the shipped rules, the shipped Alertmanager
// config delivering to a webhook receiver here. The stranded alert arrives on its route with its context label
// and a runbook whose command, run as written, drains it; the alert then resolves.
//
// Shortened in the copies, not in the shipped files: every rule's `for:` to 2s, Prometheus' scrape and evaluation
// interval to 1s (and its resend delay to 1s), Alertmanager's group_wait and group_interval to 1s, the watch's
// --interval to 1s.
func TestAlertChain(t *testing.T) {
	t.Parallel()
	prometheus := tool(t, "prometheus", "prometheus")
	alertmanager := tool(t, "prometheus-alertmanager", "prometheus-alertmanager", "alertmanager")
	bin := binary(t)
	work := t.TempDir()
	dir := seeded(t)
	cfg := filepath.Join(work, "config.yaml")
	if err := os.WriteFile(cfg, []byte("current-context: prod\ncontexts:\n  - name: prod\n    dir: "+dir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + work, "PATH=" + os.Getenv("PATH"), "DEADLETTER_CONFIG=" + cfg}

	// The watch, serving every context's series on one port (the address it picked is on stderr).
	watchOut := daemon(t, bin, env, "watch", "--all-contexts", "--interval", "1s", "--metrics-addr", "127.0.0.1:0")
	serving := regexp.MustCompile(`serving /metrics and /healthz on http://(\S+)`)
	var target string
	waitFor(t, 20*time.Second, "the watch serves /metrics", func() bool {
		m := serving.FindStringSubmatch(watchOut.String())
		if m != nil {
			target = m[1]
		}
		return m != nil
	})

	hook := &webhook{}
	receiver := httptest.NewServer(hook)
	t.Cleanup(receiver.Close)

	amPort := freePort(t)
	amConfig := rewrite(t, filepath.Join("..", "..", "deploy", "alertmanager", "alertmanager.yml"), work,
		`http://alert-receiver\.example:9095`, receiver.URL,
		`group_wait: \S+`, "group_wait: 1s",
		`group_interval: \S+`, "group_interval: 1s")
	daemon(t, alertmanager, env, "--config.file="+amConfig, "--storage.path="+filepath.Join(work, "am"),
		"--web.listen-address=127.0.0.1:"+amPort, "--cluster.listen-address=")

	rules := rewrite(t, filepath.Join("..", "..", "deploy", "prometheus", "rules.yml"), work, `for: \d+m`, "for: 2s")
	promConfig := filepath.Join(work, "prometheus.yml")
	if err := os.WriteFile(promConfig, []byte(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [`+rules+`]
alerting:
  alertmanagers: [{static_configs: [{targets: ["127.0.0.1:`+amPort+`"]}]}]
scrape_configs:
  - job_name: deadletter
    static_configs: [{targets: ["`+target+`"]}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	daemon(t, prometheus, env, "--config.file="+promConfig, "--storage.tsdb.path="+filepath.Join(work, "tsdb"),
		"--web.listen-address=127.0.0.1:"+freePort(t), "--rules.alert.resend-delay=1s")

	var labels, annotations map[string]string
	var path, recv string
	waitFor(t, 90*time.Second, "the stranded alert reaches the webhook", func() bool {
		path, recv, labels, annotations = hook.find("DeadletterStranded", "firing")
		return labels != nil
	})
	// A warning of prod goes to the ticket route; it carries its context and a runbook with the command and the docs.
	if path != "/ticket" || recv != "deadletter-ticket" || labels["context"] != "prod" || labels["severity"] != "warning" || labels["job"] != "deadletter" {
		t.Fatalf("stranded arrived at %s (%s) with labels %v", path, recv, labels)
	}
	runbook := annotations["runbook"]
	if !strings.Contains(runbook, "https://github.com/deadletter/deadletter/blob/main/docs/alerting.md#deadletterstranded") {
		t.Fatalf("runbook without its docs link: %q", runbook)
	}
	commands := regexp.MustCompile("`(deadletter [^`]+)`").FindAllStringSubmatch(runbook, -1)
	if len(commands) != 2 || commands[0][1] != "deadletter --context prod drain --dry-run" || commands[1][1] != "deadletter --context prod drain" {
		t.Fatalf("runbook commands %v in %q", commands, runbook)
	}
	if !strings.Contains(annotations["summary"], "(context prod)") {
		t.Fatalf("summary %q", annotations["summary"])
	}

	// The runbook, as the on-call would type it (--yes: no terminal here). Handled copies are left: exit 3.
	for _, c := range commands {
		args := append(strings.Fields(c[1])[1:], "--yes")
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != exitNotDone) {
			t.Fatalf("%s: %v\n%s", c[1], err, out.String())
		}
	}
	waitFor(t, 90*time.Second, "the stranded alert resolves after the drain", func() bool {
		_, _, l, _ := hook.find("DeadletterStranded", "resolved")
		return l != nil && l["context"] == "prod"
	})
	// Critical alerts of prod page: the seeded incident has blobs about to expire.
	waitFor(t, 30*time.Second, "the expiring alert (critical) arrives", func() bool {
		path, recv, labels, _ = hook.find("DeadletterExpiring", "firing")
		return labels != nil
	})
	if path != "/page" || recv != "deadletter-page" {
		t.Errorf("expiring (critical, prod) went to %s (%s)", path, recv)
	}

	// While DeadletterWatchDown fires for the job, the job's other alerts are inhibited — here the quarantine alert,
	// which the drain leaves firing (WatchDown is posted straight to Alertmanager's API: stopping the watch would
	// take the rule's whole `for`).
	am := "http://127.0.0.1:" + amPort + "/api/v2/alerts"
	down := `[{"labels":{"alertname":"DeadletterWatchDown","job":"deadletter","severity":"critical"},"annotations":{"summary":"test"}}]`
	if resp, err := http.Post(am, "application/json", strings.NewReader(down)); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("posting DeadletterWatchDown: %v %v", resp, err)
	}
	waitFor(t, 30*time.Second, "the quarantine alert inhibited while the watch is down", func() bool {
		resp, err := http.Get(am + `?filter=alertname="DeadletterQuarantine"`)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var alerts []struct {
			Status struct {
				State       string   `json:"state"`
				InhibitedBy []string `json:"inhibitedBy"`
			} `json:"status"`
		}
		json.NewDecoder(resp.Body).Decode(&alerts)
		return len(alerts) == 1 && alerts[0].Status.State == "suppressed" && len(alerts[0].Status.InhibitedBy) == 1
	})
}

// The shipped routing, label set by label set, as amtool resolves it offline: prod's critical alerts and a watch
// that is down page; other contexts, warnings and a context-less watch open a ticket; other alerts are not ours.
func TestAlertmanagerRoutes(t *testing.T) {
	t.Parallel()
	amtool := tool(t, "prometheus-alertmanager", "amtool")
	config := filepath.Join("..", "..", "deploy", "alertmanager", "alertmanager.yml")
	for labels, want := range map[string]string{
		"alertname=DeadletterExpiring severity=critical context=prod":      "deadletter-page",
		"alertname=DeadletterReplayStalled severity=critical context=prod": "deadletter-page",
		"alertname=DeadletterWatchDown severity=critical job=deadletter":   "deadletter-page",
		"alertname=DeadletterExpiring severity=critical context=dev":       "deadletter-ticket",
		"alertname=DeadletterExpiring severity=critical":                   "deadletter-ticket",
		"alertname=DeadletterStranded severity=warning context=prod":       "deadletter-ticket",
		"alertname=Watchdog severity=critical context=prod":                "default",
	} {
		out, err := exec.Command(amtool, append([]string{"config", "routes", "test", "--config.file=" + config}, strings.Fields(labels)...)...).Output()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("%s: routed to %q (%v), want %s", labels, strings.TrimSpace(string(out)), err, want)
		}
	}
}
