package main

import (
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/testkit"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// eventually polls cond until it holds, failing the test after a deadline: no fixed sleeps.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("%s: not within 20s", what)
		case <-tick.C:
		}
	}
}

func httpGet(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// scraped is one /metrics scrape, parsed by Prometheus' own text parser.
type scraped map[string]*dto.MetricFamily

func scrape(t *testing.T, base string) scraped {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v", err)
	}
	return fams
}

func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func valueOf(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return math.NaN()
}

// sum adds up a family's series whose labels match every name=value pair given; ok is false when none does.
func (s scraped) sum(name string, match ...string) (total float64, ok bool) {
	for _, m := range s[name].GetMetric() {
		hit := true
		for i := 0; i < len(match); i += 2 {
			hit = hit && labelOf(m, match[i]) == match[i+1]
		}
		if hit {
			total, ok = total+valueOf(m), true
		}
	}
	return total, ok
}

// one is the value of a series that must be present.
func (s scraped) one(t *testing.T, name string, match ...string) float64 {
	t.Helper()
	v, ok := s.sum(name, match...)
	if !ok {
		t.Fatalf("no series %s%v in the scrape", name, match)
	}
	return v
}

// startWatch runs `deadletter watch --metrics-addr 127.0.0.1:0` on dir and returns the base URL it serves, read from
// the line it prints, and a stop that cancels it and returns its exit code.
func startWatch(t *testing.T, dir string) (base string, stop func() int, errb *testkit.LockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &testkit.LockedBuffer{}
	errb = &testkit.LockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"watch", "--dir", dir, "--interval", "100ms", "--metrics-addr", "127.0.0.1:0"},
			stdio{in: strings.NewReader(""), out: out, err: errb})
	}()
	code, stopped := 0, false
	stop = func() int {
		if !stopped {
			cancel()
			code, stopped = <-done, true
		}
		return code
	}
	t.Cleanup(func() { stop() })
	serving := regexp.MustCompile(`serving /metrics and /healthz on (http://\S+)`)
	eventually(t, "watch names the address it serves", func() bool {
		m := serving.FindStringSubmatch(errb.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	})
	return base, stop, errb
}

// The whole path: a real watch on a seeded directory, scraped over HTTP, agrees with check and ls; its series follow
// the container as blobs go; /healthz follows the passes; and the server is gone once the watch ends.
func TestWatchMetricsOverHTTP(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	chk, _ := checkJSONOf(t, "--dir", dir)
	ls := lsJSONOf(t, "--dir", dir)
	started := time.Now()

	base, stop, errb := startWatch(t, dir)
	eventually(t, "/healthz 200 after the first pass", func() bool {
		code, _, _ := httpGet(base + "/healthz")
		return code == http.StatusOK
	})
	s := scrape(t, base)

	// Every deadletter_ series carries the container, as ls names it.
	for name, fam := range s {
		if !strings.HasPrefix(name, "deadletter_") {
			continue
		}
		for _, m := range fam.GetMetric() {
			if got := labelOf(m, "container"); got != ls.Container {
				t.Fatalf("%s has container=%q, want %q", name, got, ls.Container)
			}
		}
	}
	// Blobs per pane, as check counts them, spread over subscriptions.
	for p, n := range chk["counts"].(map[string]any) {
		if got, _ := s.sum("deadletter_blobs", "pane", p); got != n.(float64) {
			t.Errorf("deadletter_blobs{pane=%q} sum %v, check counts %v", p, got, n)
		}
	}
	for _, m := range s["deadletter_blobs"].GetMetric() {
		if labelOf(m, "subscription") == "" {
			t.Errorf("a seeded blob without a subscription label: %v", m)
		}
	}
	// Findings, kind by kind, exactly as check --json (both with --max-quarantine 0).
	findings := map[string]float64{}
	oldest := ""
	for _, f := range chk["findings"].([]any) {
		f := f.(map[string]any)
		findings[f["kind"].(string)] = f["count"].(float64)
		if f["kind"] == "stranded" {
			oldest, _ = f["oldest"].(string)
		}
	}
	for _, k := range rules.FindingKinds {
		if !k.OfBlobs() {
			continue // the witness's findings count subscriptions (and the seed has no witness)
		}
		if got := s.one(t, "deadletter_findings_blobs", "kind", string(k)); got != findings[string(k)] {
			t.Errorf("deadletter_findings_blobs{kind=%q} = %v, check says %v", k, got, findings[string(k)])
		}
	}
	if findings["stranded"] == 0 || findings["quarantine"] == 0 || findings["malformed"] == 0 || findings["crash"] == 0 {
		t.Fatalf("the seeded incident should raise every finding: %v", findings)
	}
	if got := s.one(t, "deadletter_exempt_blobs", "reason", "handled"); got != chk["handled"].(float64) || got == 0 {
		t.Errorf("handled %v, check says %v", got, chk["handled"])
	}
	if got := s.one(t, "deadletter_exempt_blobs", "reason", "acked"); got != chk["acked"].(float64) {
		t.Errorf("acked %v, check says %v", got, chk["acked"])
	}
	if got := s.one(t, "deadletter_quarantine_blobs"); got != findings["quarantine"] {
		t.Errorf("quarantine blobs %v, check's quarantine finding %v", got, findings["quarantine"])
	}
	// Events per pane and verdict, as ls counts them blob by blob (archived copies are not read by watch, and a
	// root blob the replay crashes on meets no verdict's fate).
	events := map[[2]string]float64{}
	for _, b := range ls.Blobs {
		if _, crash := b["crash"]; b["pane"] == "archived" || crash && b["pane"] != "quarantine" {
			continue
		}
		for v, n := range b["verdicts"].(map[string]any) {
			events[[2]string{b["pane"].(string), v}] += n.(float64)
		}
	}
	if len(s["deadletter_events"].GetMetric()) != len(events) {
		t.Errorf("%d event series, ls has %d pane×verdict pairs", len(s["deadletter_events"].GetMetric()), len(events))
	}
	for k, n := range events {
		if got := s.one(t, "deadletter_events", "pane", k[0], "verdict", k[1]); got != n {
			t.Errorf("deadletter_events{pane=%q,verdict=%q} = %v, ls says %v", k[0], k[1], got, n)
		}
	}
	// The oldest stranded blob's age, against check's oldest (to the second; the passes run on).
	at, err := time.Parse(time.RFC3339, oldest)
	if err != nil {
		t.Fatalf("check's stranded finding has no oldest: %q", oldest)
	}
	if got, want := s.one(t, "deadletter_oldest_stranded_age_seconds"), time.Since(at).Seconds(); math.Abs(got-want) > 60 {
		t.Errorf("oldest stranded age %v s, check's oldest is %v s ago", got, want)
	}
	if got := s.one(t, "deadletter_unread_payloads"); got != 0 {
		t.Errorf("unread payloads %v in a pass that read everything", got)
	}
	last := s.one(t, "deadletter_last_refresh_success_timestamp_seconds")
	if last < float64(started.Unix()) || last > float64(time.Now().Unix()+1) {
		t.Errorf("last success %v, not during this test (%v…now)", last, started.Unix())
	}
	if s.one(t, "deadletter_refresh_duration_seconds") < 1 || s.one(t, "deadletter_refresh_errors_total") != 0 {
		t.Errorf("refresh duration count %v, errors %v", s.one(t, "deadletter_refresh_duration_seconds"), s.one(t, "deadletter_refresh_errors_total"))
	}
	if _, ok := s["go_goroutines"]; !ok {
		t.Error("no Go runtime series")
	}

	// The quarantine pane empties: its series leave the scrape instead of freezing at their last value.
	d, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	listing, err := store.ListAll(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	for _, bi := range listing.Blobs {
		if !strings.HasPrefix(bi.Name, rules.QuarantinePrefix) {
			continue
		}
		if err := d.Delete(context.Background(), bi.Name, bi.ETag); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the quarantine series go once the pane is empty", func() bool {
		s = scrape(t, base)
		_, blobs := s.sum("deadletter_blobs", "pane", "quarantine")
		_, evs := s.sum("deadletter_events", "pane", "quarantine")
		return !blobs && !evs
	})
	if got := s.one(t, "deadletter_quarantine_blobs"); got != 0 {
		t.Errorf("quarantine blobs %v after emptying the pane", got)
	}
	if got := s.one(t, "deadletter_findings_blobs", "kind", "quarantine"); got != 0 {
		t.Errorf("quarantine finding %v after emptying the pane (the kind stays, at 0)", got)
	}
	stranded := s.one(t, "deadletter_findings_blobs", "kind", "stranded")

	// A pass that cannot read everything (here a symbolic link where a blob should be, which the directory store
	// refuses to follow) fails: /healthz turns 503 with the error, errors count, the last good values stay.
	link := filepath.Join(dir, "refused.json")
	if err := os.Symlink(os.DevNull, link); err != nil {
		t.Fatal(err)
	}
	unhealthy := func(what string) string {
		t.Helper()
		var body string
		eventually(t, what, func() bool {
			var code int
			code, body, _ = httpGet(base + "/healthz")
			return code == http.StatusServiceUnavailable
		})
		if !strings.HasPrefix(body, "the last pass failed: ") {
			t.Errorf("/healthz does not say why: %q", body)
		}
		return body
	}
	if body := unhealthy("/healthz 503 once a pass fails"); !strings.Contains(body, "refused.json") {
		t.Errorf("/healthz does not name the blob it could not read: %q", body)
	}
	s = scrape(t, base)
	if s.one(t, "deadletter_refresh_errors_total") < 1 {
		t.Error("a failed pass was not counted")
	}
	if got := s.one(t, "deadletter_findings_blobs", "kind", "stranded"); got != stranded {
		t.Errorf("stranded %v after a failed pass, want the last good %v", got, stranded)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	eventually(t, "/healthz 200 again once a pass succeeds", func() bool {
		code, _, _ := httpGet(base + "/healthz")
		return code == http.StatusOK
	})

	// The directory itself goes.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	unhealthy("/healthz 503 once the container is gone")

	// A stop between passes ends the watch with 0; one that lands inside a pass — rare here, passes on a missing
	// directory are quick, but a loaded machine stretches them — cuts it short, and that is said and exits 2.
	if code := stop(); code != 0 && (code != exitError || !strings.Contains(errb.String(), "stopped during a pass")) {
		t.Fatalf("watch exit %d\n%s", code, errb.String())
	}
	if _, _, err := httpGet(base + "/healthz"); err == nil {
		t.Fatal("the metrics server outlived the watch")
	}
}

// A --metrics-addr that cannot be bound stops the watch at once with exit 2, naming the address.
func TestWatchMetricsAddrThatCannotBeBound(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, addr := range []string{taken.Addr().String(), "not-an-address"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var out, errb testkit.LockedBuffer
		code := run(ctx, []string{"watch", "--dir", t.TempDir(), "--metrics-addr", addr}, stdio{in: strings.NewReader(""), out: &out, err: &errb})
		cancel()
		if code != exitError || !strings.Contains(errb.String(), "--metrics-addr "+addr) || out.String() != "" {
			t.Fatalf("--metrics-addr %s: exit %d\nstdout %q\nstderr %q", addr, code, out.String(), errb.String())
		}
	}
}

// The alerting rules parse, and promtool's unit tests (each alert firing and not firing) pass. CI installs promtool
// (./test.sh), so there a missing promtool fails; elsewhere it skips.
func TestMetricsAlertingRules(t *testing.T) {
	t.Parallel()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is missing: ./test.sh installs it (Debian package prometheus)")
		}
		t.Skip("promtool is not installed (apt-get install prometheus)")
	}
	rules := filepath.Join("..", "..", "deploy", "prometheus")
	for _, args := range [][]string{
		{"check", "rules", filepath.Join(rules, "rules.yml")},
		{"test", "rules", filepath.Join(rules, "rules_test.yml")},
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// A payload that cannot be read (a FIFO) does not blind the exporter: the gauges show the rest of the container,
// deadletter_unread_payloads counts what could not be judged (so its alert can fire), and /healthz stays 503.
func TestWatchMetricsWithAnUnreadablePayload(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	os.MkdirAll(filepath.Join(dir, "FIFO"), 0o755)
	storetest.Mkfifo(t, filepath.Join(dir, "FIFO", "x.json"))
	base, _, _ := startWatch(t, dir)
	eventually(t, "the unread payload counted", func() bool {
		s := scrape(t, base)
		n, ok := s.sum("deadletter_unread_payloads")
		stranded, _ := s.sum("deadletter_findings_blobs", "kind", "stranded")
		return ok && n == 1 && stranded > 0
	})
	if code, body, err := httpGet(base + "/healthz"); err != nil || code != 503 || !strings.Contains(body, "could not read 1 payload(s)") {
		t.Fatalf("/healthz %d %q %v", code, body, err)
	}
}

// While one payload cannot be read, watch still says what it sees — the state, then what changes — beside the
// error, so one unreadable blob does not silence every other alert (nor --exec).
func TestWatchSpeaksWhileAPayloadIsUnreadable(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	os.MkdirAll(filepath.Join(dir, "FIFO"), 0o755)
	storetest.Mkfifo(t, filepath.Join(dir, "FIFO", "x.json"))
	ctx, cancel := context.WithCancel(context.Background())
	out, errb := &testkit.LockedBuffer{}, &testkit.LockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"watch", "--dir", dir, "--interval", "100ms", "--json"}, stdio{in: strings.NewReader(""), out: out, err: errb})
	}()
	defer func() { cancel(); <-done }()
	eventually(t, "the state and the error both said", func() bool {
		s := out.String()
		return strings.Contains(s, `"event":"state"`) && strings.Contains(s, "could not read 1 payload(s)")
	})
	var stranded string
	for _, b := range lsJSONOf(t, "--dir", dir, "--pane", "stranded").Blobs {
		if h, _ := b["handled"].(bool); !h {
			stranded = b["name"].(string)
			break
		}
	}
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(stranded))); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the drained-away stranded blob said resolved", func() bool {
		return strings.Contains(out.String(), `"event":"resolved"`)
	})
}
