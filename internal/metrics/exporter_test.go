package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/replay/rules"
	"github.com/prometheus/client_golang/prometheus"
)

// series gathers g into "name{label="value",…}" → value for the deadletter_ series (histograms by their count).
func series(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "deadletter_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+`="`+l.GetValue()+`"`)
			}
			sort.Strings(ls)
			key := mf.GetName() + "{" + strings.Join(ls, ",") + "}"
			switch {
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			case m.Histogram != nil:
				out[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

func TestMetricsExporterPasses(t *testing.T) {
	e := New("acct/deadletter")
	if code, body := get(t, e.Handler(), "/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "no pass") {
		t.Fatalf("before the first pass: %d %q", code, body)
	}
	before := series(t, e.hub.reg)
	if before[`deadletter_last_refresh_success_timestamp_seconds{container="acct/deadletter"}`] != 0 {
		t.Fatalf("no success yet: %v", before)
	}
	for k := range before {
		if strings.HasPrefix(k, "deadletter_blobs{") || strings.HasPrefix(k, "deadletter_findings_blobs{") {
			t.Fatalf("a series before any pass: %s", k)
		}
	}

	cfg := rules.DefaultConfig()
	s := incident(cfg)
	at := now.Add(3 * time.Second)
	e.Succeeded(Measure(s, cfg.Check(s, rules.CheckOptions{}), cfg), at, 1500*time.Millisecond)
	got := series(t, e.hub.reg)
	c := `container="acct/deadletter"`
	want := map[string]float64{
		`deadletter_blobs{` + c + `,pane="live",subscription="ORDERS"}`:        2,
		`deadletter_blobs{` + c + `,pane="stranded",subscription="WEBHOOKS"}`:  5,
		`deadletter_blobs{` + c + `,pane="stranded",subscription=""}`:          1,
		`deadletter_blobs{` + c + `,pane="archived",subscription="WEBHOOKS"}`:  1,
		`deadletter_blobs{` + c + `,pane="quarantine",subscription="ORDERS"}`:  2,
		`deadletter_events{` + c + `,pane="live",verdict="replay"}`:            2,
		`deadletter_events{` + c + `,pane="live",verdict="cap"}`:               1,
		`deadletter_events{` + c + `,pane="stranded",verdict="replay"}`:        5, // not the crash blob's
		`deadletter_events{` + c + `,pane="stranded",verdict="notIdempotent"}`: 1,
		`deadletter_events{` + c + `,pane="quarantine",verdict="unroutable"}`:  2,
		`deadletter_events{` + c + `,pane="quarantine",verdict="cap"}`:         1,
		`deadletter_findings_blobs{` + c + `,kind="expiring"}`:                 1,
		`deadletter_findings_blobs{` + c + `,kind="stranded"}`:                 4, // not the crash blob: it is a crash finding only
		`deadletter_findings_blobs{` + c + `,kind="replayStalled"}`:            1,
		`deadletter_findings_blobs{` + c + `,kind="crash"}`:                    1,
		`deadletter_findings_blobs{` + c + `,kind="quarantine"}`:               1,
		`deadletter_findings_blobs{` + c + `,kind="malformed"}`:                1,
		`deadletter_findings_blobs{` + c + `,kind="untriggerable"}`:            0,
		`deadletter_findings_blobs{` + c + `,kind="appStartRepeats"}`:          1, // the handled blob: a worker start re-uploads it
		`deadletter_suspicious_acks{` + c + `}`:                                0,
		`deadletter_exempt_blobs{` + c + `,reason="handled"}`:                  1,
		`deadletter_exempt_blobs{` + c + `,reason="acked"}`:                    1,
		`deadletter_quarantine_blobs{` + c + `}`:                               1,
		`deadletter_oldest_stranded_age_seconds{` + c + `}`:                    (29*24*time.Hour - time.Hour).Seconds(),
		`deadletter_unread_payloads{` + c + `}`:                                1,
		`deadletter_witness_problems{` + c + `}`:                               0, // (no witness)
		`deadletter_last_refresh_success_timestamp_seconds{` + c + `}`:         float64(at.Unix()),
		`deadletter_refresh_duration_seconds{` + c + `}`:                       1,
		`deadletter_refresh_errors_total{` + c + `}`:                           0,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected series %s", k)
		}
	}
	if code, body := get(t, e.Handler(), "/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("after a pass: %d %q", code, body)
	}

	// A failed pass keeps the last good values, counts the error and turns /healthz to 503 with it, escaped.
	e.Failed(errors.New("list dir:/x: no such file \x1b[2J"), time.Second)
	after := series(t, e.hub.reg)
	if after[`deadletter_refresh_errors_total{`+c+`}`] != 1 || after[`deadletter_refresh_duration_seconds{`+c+`}`] != 2 ||
		after[`deadletter_findings_blobs{`+c+`,kind="stranded"}`] != 4 {
		t.Fatalf("after a failure: %v", after)
	}
	code, body := get(t, e.Handler(), "/healthz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "no such file") || strings.Contains(body, "\x1b") {
		t.Fatalf("after a failure: %d %q", code, body)
	}

	// The next pass has no quarantine and no live blob left: their series go, the rest are set anew.
	var kept []blob
	for _, b := range []string{"WEBHOOKS/2026/11/29/10/stranded.json"} {
		kept = append(kept, blob{name: b, age: 26 * time.Hour, summary: &rules.Summary{Events: 1, Verdicts: verdicts(rules.VerdictReplay, 1)}})
	}
	s = snapshot(cfg, kept...)
	e.Succeeded(Measure(s, cfg.Check(s, rules.CheckOptions{}), cfg), at.Add(time.Minute), time.Second)
	got = series(t, e.hub.reg)
	for k := range got {
		if strings.Contains(k, `pane="quarantine"`) || strings.Contains(k, `pane="live"`) || strings.Contains(k, `subscription="ORDERS"`) {
			t.Errorf("series left from an earlier pass: %s", k)
		}
	}
	if got[`deadletter_blobs{`+c+`,pane="stranded",subscription="WEBHOOKS"}`] != 1 || got[`deadletter_findings_blobs{`+c+`,kind="quarantine"}`] != 0 ||
		got[`deadletter_quarantine_blobs{`+c+`}`] != 0 {
		t.Fatalf("second pass: %v", got)
	}
	if code, _ := get(t, e.Handler(), "/healthz"); code != http.StatusOK {
		t.Fatalf("healthy again: %d", code)
	}
	if code, body := get(t, e.Handler(), "/metrics"); code != http.StatusOK || !strings.Contains(body, "go_goroutines") ||
		!strings.Contains(body, `deadletter_blobs{container="acct/deadletter",pane="stranded",subscription="WEBHOOKS"} 1`) {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
}

// Two exporters in one process (a test beside a watch, say) have registries of their own.
func TestMetricsExportersAreIndependent(t *testing.T) {
	a, b := New("a/c"), New("b/c")
	a.Failed(errors.New("x"), time.Second)
	if series(t, b.hub.reg)[`deadletter_refresh_errors_total{container="b/c"}`] != 0 {
		t.Fatal("b saw a's error")
	}
}

func TestMetricsServerListensAndShutsDown(t *testing.T) {
	e := New("acct/deadletter")
	srv, err := Listen("127.0.0.1:0", e.Handler(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + srv.Addr().String()
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("before a pass: %d", resp.StatusCode)
	}
	if _, err := Listen(srv.Addr().String(), e.Handler(), io.Discard); err == nil {
		t.Fatal("a second listener on a taken address")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(url + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("still serving after Shutdown")
	}
}
