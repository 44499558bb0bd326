package metrics

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/deadletter/deadletter/internal/textfmt"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Hub is what one watch serves: a registry of its own (never the global default, so a test or a second hub in
// one process starts clean) holding the series of every container it watches — one Exporter each — and the
// /metrics and /healthz handler.
type Hub struct {
	// mu is held for writing while a pass's values are applied and for reading while a scrape gathers, so a
	// scrape never sees a pass half applied (a pane's series reset but not yet set again).
	mu        sync.RWMutex
	reg       *prometheus.Registry
	exporters []*Exporter
	handler   http.Handler
}

// Exporter holds the series of one watched container, in its hub.
type Exporter struct {
	hub     *Hub
	mu      *sync.RWMutex
	context string
	health  health

	blobs          *prometheus.GaugeVec
	events         *prometheus.GaugeVec
	findings       *prometheus.GaugeVec
	exempt         *prometheus.GaugeVec
	quarantine     prometheus.Gauge
	suspicious     prometheus.Gauge
	oldestStranded prometheus.Gauge
	unread         prometheus.Gauge
	handlers       *prometheus.GaugeVec
	replayDropped  *prometheus.GaugeVec
	witnessProblem prometheus.Gauge
	lastSuccess    prometheus.Gauge
	duration       prometheus.Histogram
	errors         prometheus.Counter
}

// health is what /healthz answers: whether the last pass could read the whole container.
type health struct {
	passed bool   // a pass has finished, successfully or not
	err    string // the last pass's error, "" when it succeeded
}

// RefreshBuckets are the refresh duration histogram's buckets, in seconds: a small container lists in well under a
// second, a million-blob one in minutes, and a pass is cut at --timeout (30 s by default).
var RefreshBuckets = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// NewHub creates an empty hub: the Go runtime and process collectors, and the handler.
func NewHub() *Hub {
	h := &Hub{reg: prometheus.NewRegistry()}
	h.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	gather := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		h.mu.RLock()
		defer h.mu.RUnlock()
		return h.reg.Gather()
	})
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.InstrumentMetricHandler(h.reg, promhttp.HandlerFor(gather, promhttp.HandlerOpts{Registry: h.reg})))
	mux.HandleFunc("GET /healthz", h.serveHealth)
	h.handler = mux
	return h
}

// New creates a hub watching one container (its Describe(), which every deadletter_ series carries as the
// container label).
func New(container string) *Exporter { return NewHub().Add(container, "") }

// Add creates the collectors of one more container in the hub: every deadletter_ series carries its container
// label and, when context is not empty, a context label (watch --all-contexts: one series per context).
func (h *Hub) Add(container, context string) *Exporter {
	e := &Exporter{hub: h, mu: &h.mu, context: context}
	e.blobs = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "deadletter_blobs",
		Help: "Blobs in the container by pane (live, stranded, quarantine, archived) and subscription, as of the last successful pass."},
		[]string{"pane", "subscription"})
	e.events = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "deadletter_events",
		Help: "Events in the payloads read (live, stranded, quarantine) by pane and verdict: a root blob's events by what the replay will do (replay, cap, notIdempotent, unroutable, unknown), a quarantine blob's by why the replay refused them."},
		[]string{"pane", "verdict"})
	e.findings = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "deadletter_findings_blobs",
		Help: "Blobs behind each finding kind, exactly as `deadletter check` counts them (handled blobs excluded; acknowledged blobs excluded from stranded, quarantine and replayStalled only; quarantine only past --max-quarantine)."},
		[]string{"kind"})
	e.exempt = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "deadletter_exempt_blobs",
		Help: "Blobs kept out of the findings: reason=handled (the replay already handled the root blob; only its delete failed) or reason=acked (an operator acknowledged it)."},
		[]string{"reason"})
	e.suspicious = prometheus.NewGauge(prometheus.GaugeOpts{Name: "deadletter_suspicious_acks",
		Help: "Blobs whose acknowledgement tags deadletter did not write as they are (forged, broken, longer than --max-ack, dated in the future): ignored, so they silence nothing."})
	e.quarantine = prometheus.NewGauge(prometheus.GaugeOpts{Name: "deadletter_quarantine_blobs",
		Help: "Quarantined blobs that need a human (not acknowledged), before --max-quarantine: alert on it with your own threshold."})
	e.oldestStranded = prometheus.NewGauge(prometheus.GaugeOpts{Name: "deadletter_oldest_stranded_age_seconds",
		Help: "Age of the oldest stranded blob that needs a drain, by the storage service's clock; 0 when none."})
	e.unread = prometheus.NewGauge(prometheus.GaugeOpts{Name: "deadletter_unread_payloads",
		Help: "Root and quarantine blobs whose payload could not be judged (over the size limit, gone mid-pass): their verdicts, malformed and crash facts are unknown."})
	e.handlers = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "deadletter_handler_verdict",
		Help: "Event Grid's witness (its delivery metrics over --witness-window, or a twin's): 1 per event subscription, labelled with its verdict (failing, recovering, healthy, noDeliveries); past 100 subscriptions the rest are counted under subscription=\"_other\". None for a topic the witness could not read (deadletter_witness_problems)."},
		[]string{"subscription", "verdict"})
	e.replayDropped = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "deadletter_replay_dropped_triggers",
		Help: "Triggers of the replay Event Grid dropped within --witness-window, per replay subscription: each a blob stranded for good, until a drain or a worker start re-uploads it."},
		[]string{"subscription"})
	e.witnessProblem = prometheus.NewGauge(prometheus.GaugeOpts{Name: "deadletter_witness_problems",
		Help: "Topics Event Grid's witness could not read in the last pass (1 when it cannot read at all: no Entra ID); their subscriptions' verdicts are unknown. 0 without a witness."})
	e.lastSuccess = prometheus.NewGauge(prometheus.GaugeOpts{Name: "deadletter_last_refresh_success_timestamp_seconds",
		Help: "Unix time the last successful pass finished; 0 until the first one. The other gauges keep that pass's values while later passes fail."})
	e.duration = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "deadletter_refresh_duration_seconds",
		Help: "How long each pass (list, read payloads, check) took, successful or not.", Buckets: RefreshBuckets})
	e.errors = prometheus.NewCounter(prometheus.CounterOpts{Name: "deadletter_refresh_errors_total",
		Help: "Passes that could not read the whole container (the watch prints the error; /healthz answers 503 with it)."})

	labels := prometheus.Labels{"container": textfmt.Printable(container)}
	if context != "" {
		labels["context"] = textfmt.Printable(context)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	prometheus.WrapRegistererWith(labels, h.reg).MustRegister(e.blobs, e.events, e.findings, e.exempt, e.quarantine, e.suspicious,
		e.oldestStranded, e.unread, e.handlers, e.replayDropped, e.witnessProblem, e.lastSuccess, e.duration, e.errors)
	h.exporters = append(h.exporters, e)
	return e
}

// Handler serves the hub's GET /metrics and GET /healthz.
func (h *Hub) Handler() http.Handler { return h.handler }

// Handler serves its hub's GET /metrics (the Prometheus exposition) and GET /healthz.
func (e *Exporter) Handler() http.Handler { return e.hub.handler }

// Succeeded applies the values of a pass that read the whole container, finished at the local time at after took.
// Label sets that no longer occur (a pane emptied, a subscription gone) are dropped, not left at their last value.
func (e *Exporter) Succeeded(v Values, at time.Time, took time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.blobs.Reset()
	for k, n := range v.Blobs {
		e.blobs.WithLabelValues(k.Pane.String(), k.Subscription).Set(float64(n))
	}
	e.events.Reset()
	for k, n := range v.Events {
		e.events.WithLabelValues(k.Pane.String(), k.Verdict.String()).Set(float64(n))
	}
	e.findings.Reset()
	for k, n := range v.Findings {
		e.findings.WithLabelValues(string(k)).Set(float64(n))
	}
	e.exempt.WithLabelValues("handled").Set(float64(v.Handled))
	e.exempt.WithLabelValues("acked").Set(float64(v.Acked))
	e.quarantine.Set(float64(v.Quarantine))
	e.suspicious.Set(float64(v.Suspicious))
	e.oldestStranded.Set(v.OldestStranded.Seconds())
	e.unread.Set(float64(v.Unread))
	e.handlers.Reset()
	for k, n := range v.Handlers {
		e.handlers.WithLabelValues(k.Subscription, k.Verdict.String()).Set(float64(n))
	}
	e.replayDropped.Reset()
	for sub, n := range v.ReplayDropped {
		e.replayDropped.WithLabelValues(sub).Set(float64(n))
	}
	e.witnessProblem.Set(float64(v.WitnessProblems))
	e.lastSuccess.Set(float64(at.UnixNano()) / 1e9)
	e.duration.Observe(took.Seconds())
	e.health = health{passed: true}
}

// Partial applies the values of a pass that listed the whole container but could not read some payloads (counted
// in v.Unread): the gauges show what it saw (deadletter_unread_payloads is how its alert fires), the error counter
// rises — the pass was incomplete — and /healthz answers 503 with err.
func (e *Exporter) Partial(v Values, err error, at time.Time, took time.Duration) {
	e.Succeeded(v, at, took)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errors.Inc()
	e.health = health{passed: true, err: err.Error()}
}

// Failed records a pass that could not read the whole container: the gauges keep the last good pass (as the
// dashboard keeps its last good data), the error counter rises and /healthz answers 503 with the error.
func (e *Exporter) Failed(err error, took time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errors.Inc()
	e.duration.Observe(took.Seconds())
	e.health = health{passed: true, err: err.Error()}
}

// serveHealth answers 200 "ok" while every container's last pass succeeded, 503 with the errors once one failed,
// and 503 before every first pass has finished: a probe must not call a watch healthy before it has seen its
// containers.
func (h *Hub) serveHealth(w http.ResponseWriter, _ *http.Request) {
	h.mu.RLock()
	var bad []string
	for _, e := range h.exporters {
		who := ""
		if e.context != "" {
			who = "context " + textfmt.Printable(e.context) + ": "
		}
		switch {
		case !e.health.passed:
			bad = append(bad, who+"no pass has finished yet")
		case e.health.err != "":
			// The store already scrubs secrets from its errors; blob names in them are escaped like everywhere else.
			bad = append(bad, who+"the last pass failed: "+textfmt.Printable(e.health.err))
		}
	}
	h.mu.RUnlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	if len(bad) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(strings.Join(bad, "\n") + "\n"))
		return
	}
	w.Write([]byte("ok\n"))
}
