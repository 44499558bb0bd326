package azmonitor

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/monitor/armmonitor"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/monitor/armmonitor/fake"
	"github.com/deadletter/deadletter/replay/rules"
)

const (
	topicID  = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/estate/providers/Microsoft.EventGrid/topics/estate-events"
	systemID = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/estate/providers/Microsoft.EventGrid/systemTopics/estate-storage"
)

// series is one recorded-shape time series: a subscription (and error), and totals from the window's first minute.
type series struct {
	sub, err string
	totals   []float64
}

// metricOf builds a metric the way Azure Monitor answers one: lower-case dimension names in metadatavalues, one
// data point per minute, Total set.
func metricOf(name string, start time.Time, ss ...series) *armmonitor.Metric {
	m := &armmonitor.Metric{
		ID:   to.Ptr(topicID + "/providers/Microsoft.Insights/metrics/" + name),
		Name: &armmonitor.LocalizableString{Value: to.Ptr(name), LocalizedValue: to.Ptr(name)},
		Type: to.Ptr("Microsoft.Insights/metrics"), Unit: to.Ptr(armmonitor.MetricUnitCount), ErrorCode: to.Ptr("Success"),
	}
	for _, s := range ss {
		ts := &armmonitor.TimeSeriesElement{Metadatavalues: []*armmonitor.MetadataValue{
			{Name: &armmonitor.LocalizableString{Value: to.Ptr("eventsubscriptionname")}, Value: to.Ptr(s.sub)}}}
		if s.err != "" {
			ts.Metadatavalues = append(ts.Metadatavalues, &armmonitor.MetadataValue{Name: &armmonitor.LocalizableString{Value: to.Ptr("error")}, Value: to.Ptr(s.err)})
		}
		for i, v := range s.totals {
			ts.Data = append(ts.Data, &armmonitor.MetricValue{TimeStamp: to.Ptr(start.Add(time.Duration(i) * time.Minute)), Total: to.Ptr(v)})
		}
		m.Timeseries = append(m.Timeseries, ts)
	}
	return m
}

type call struct {
	resource string
	o        armmonitor.MetricsClientListOptions
}

// server is a fake Azure Monitor: it records every request and answers with metrics (by metric name) or an error.
type server struct {
	mu      sync.Mutex
	calls   []call
	metrics map[string]*armmonitor.Metric
	status  int
	code    string
}

func (s *server) fake() *fake.MetricsServer {
	return &fake.MetricsServer{List: func(_ context.Context, resourceURI string, o *armmonitor.MetricsClientListOptions) (resp azfake.Responder[armmonitor.MetricsClientListResponse], errResp azfake.ErrorResponder) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.calls = append(s.calls, call{resourceURI, *o})
		if s.status != 0 {
			errResp.SetResponseError(s.status, s.code)
			return
		}
		var out armmonitor.Response
		out.Timespan, out.Interval = o.Timespan, o.Interval
		for _, n := range strings.Split(*o.Metricnames, ",") {
			if m := s.metrics[n]; m != nil {
				out.Value = append(out.Value, m)
			}
		}
		resp.SetResponse(http.StatusOK, armmonitor.MetricsClientListResponse{Response: out}, nil)
		return
	}}
}

func (s *server) monitor(t *testing.T, o Options) *Monitor {
	t.Helper()
	o.Credential = &azfake.TokenCredential{}
	o.Client = &arm.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: fake.NewMetricsServerTransport(s.fake()),
		Retry: policy.RetryOptions{MaxRetries: -1}}}
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// now is 18:13:27: the latest complete minute is 18:12, the window of 15 minutes starts at 17:58.
var now = time.Date(2026, 12, 2, 18, 13, 27, 0, time.UTC)

func TestWitnessRequest(t *testing.T) {
	s := &server{metrics: map[string]*armmonitor.Metric{}}
	m := s.monitor(t, Options{Topics: []string{topicID}, ReplaySystemTopic: systemID})
	rep := m.Witness(context.Background(), now)
	if len(rep.Problems) != 0 {
		t.Fatalf("problems: %+v", rep.Problems)
	}
	if want := time.Date(2026, 12, 2, 18, 13, 0, 0, time.UTC); !rep.AsOf.Equal(want) || rep.Window != 15*time.Minute {
		t.Errorf("as of %s over %s, want %s over 15m", rep.AsOf, rep.Window, want)
	}
	if len(s.calls) != 4 {
		t.Fatalf("%d requests, want 2 per topic: %+v", len(s.calls), s.calls)
	}
	wantMetrics := []string{"DeliveryAttemptFailCount", "DeliverySuccessCount,DeadLetteredCount,DroppedEventCount"}
	wantFilter := []string{"EventSubscriptionName eq '*' and Error eq '*'", "EventSubscriptionName eq '*'"}
	for i, c := range s.calls {
		res := topicID
		if i >= 2 {
			res = systemID
		}
		if strings.TrimPrefix(c.resource, "/") != strings.TrimPrefix(res, "/") {
			t.Errorf("request %d for %q, want %q", i, c.resource, res)
		}
		o := c.o
		if *o.Metricnames != wantMetrics[i%2] || *o.Filter != wantFilter[i%2] {
			t.Errorf("request %d: metrics %q filter %q", i, *o.Metricnames, *o.Filter)
		}
		if *o.Timespan != "2026-12-02T17:58:00Z/2026-12-02T18:13:00Z" || *o.Interval != "PT1M" || *o.Aggregation != "Total" {
			t.Errorf("request %d: timespan %q interval %q aggregation %q", i, *o.Timespan, *o.Interval, *o.Aggregation)
		}
		if o.Top == nil || *o.Top < 100 {
			t.Errorf("request %d: top %v cuts subscriptions × errors at Azure's default 10", i, o.Top)
		}
	}
}

func TestWitnessVerdicts(t *testing.T) {
	start, _ := Span(now, DefaultWindow)
	z := make([]float64, 15)
	at := func(vals map[int]float64) []float64 {
		out := append([]float64{}, z...)
		for i, v := range vals {
			out[i] = v
		}
		return out
	}
	s := &server{metrics: map[string]*armmonitor.Metric{
		MetricFailed: metricOf(MetricFailed, start,
			series{"push-notifications", "Busy", at(map[int]float64{10: 4, 14: 3})},
			series{"push-notifications", "TimedOut", at(map[int]float64{12: 2})},
			series{"orders", "Busy", at(map[int]float64{3: 5})},
			// the minute still being counted (18:13) failed, but it is left out: no-deliveries stays so
			series{"quiet", "Busy", append(append([]float64{}, z...), 9)},
			series{"mixed", "Busy", at(map[int]float64{14: 1})}),
		MetricSucceeded: metricOf(MetricSucceeded, start,
			series{"push-notifications", "", at(map[int]float64{2: 10})},
			series{"orders", "", at(map[int]float64{7: 8})},
			series{"webhooks", "", at(map[int]float64{1: 1, 14: 2})},
			series{"mixed", "", at(map[int]float64{14: 6})},
			series{"quiet", "", z}),
		MetricDeadLettered: metricOf(MetricDeadLettered, start, series{"push-notifications", "", at(map[int]float64{11: 1})}),
		MetricDropped:      metricOf(MetricDropped, start, series{"replay", "", at(map[int]float64{13: 2})}),
	}}
	m := s.monitor(t, Options{Topics: []string{topicID}, ReplaySystemTopic: systemID})
	rep := m.Witness(context.Background(), now)
	want := map[string]rules.HandlerVerdict{"PUSH-NOTIFICATIONS": rules.HandlerFailing, "ORDERS": rules.HandlerRecovering,
		"WEBHOOKS": rules.HandlerHealthy, "QUIET": rules.HandlerNoDeliveries, "MIXED": rules.HandlerRecovering}
	for sub, v := range want {
		h, ok := rep.HandlerOf(sub) // the folder's capitals match the metric's lower case
		if !ok || h.Verdict != v {
			t.Errorf("%s: %v (found %v), want %v", sub, h.Verdict, ok, v)
		}
	}
	p, _ := rep.HandlerOf("PUSH-NOTIFICATIONS")
	if p.Failed != 9 || p.FailedBy["Busy"] != 7 || p.FailedBy["TimedOut"] != 2 || p.Succeeded != 10 || p.DeadLettered != 1 ||
		!p.LastFailure.Equal(start.Add(14*time.Minute)) || p.Subscription != "push-notifications" || p.Topic != topicID {
		t.Errorf("push-notifications evidence: %+v", p)
	}
	if q, _ := rep.HandlerOf("quiet"); q.Failed != 0 {
		t.Errorf("the partial minute was counted: %+v", q)
	}
	if _, ok := rep.HandlerOf("unknown-sub"); ok {
		t.Error("a subscription the metrics do not have was found")
	}
	if f := rep.Failing(nil); len(f) != 1 || f[0].Subscription != "push-notifications" {
		t.Errorf("failing: %+v", f)
	}
	if f := rep.Failing([]string{"ORDERS"}); len(f) != 0 {
		t.Errorf("failing of ORDERS only: %+v", f)
	}
	if d := rep.Dropping(); len(d) != 1 || d[0].Subscription != "replay" || d[0].Dropped != 2 || d[0].Topic != systemID {
		t.Errorf("dropping: %+v", d)
	}
}

func TestWitnessRefused(t *testing.T) {
	for _, c := range []struct {
		status int
		code   string
	}{{http.StatusTooManyRequests, "TooManyRequests"}, {http.StatusForbidden, "AuthorizationFailed"}} {
		s := &server{status: c.status, code: c.code}
		m := s.monitor(t, Options{Topics: []string{topicID}, ReplaySystemTopic: systemID})
		rep := m.Witness(context.Background(), now)
		if len(rep.Handlers) != 0 || len(rep.Replay) != 0 {
			t.Errorf("%d: judged without counts: %+v", c.status, rep)
		}
		if len(rep.Problems) != 2 || rep.Problems[0].Status != c.status || rep.Problems[0].Err != c.code || rep.Problems[0].Topic != topicID ||
			rep.Problems[1].Topic != systemID {
			t.Errorf("%d: problems %+v", c.status, rep.Problems)
		}
		if _, ok := rep.HandlerOf("PUSH-NOTIFICATIONS"); ok {
			t.Errorf("%d: a verdict without counts", c.status)
		}
	}
}

func TestCheckTopicID(t *testing.T) {
	if sub, err := CheckTopicID(systemID); err != nil || sub != "00000000-0000-0000-0000-000000000001" {
		t.Errorf("system topic: %q %v", sub, err)
	}
	for _, bad := range []string{"estate-events", "/subscriptions/x/resourceGroups/estate/providers/Microsoft.Storage/storageAccounts/estate"} {
		if _, err := CheckTopicID(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := New(Options{Topics: []string{"nope"}}); err == nil {
		t.Error("New took a bad resource ID")
	}
}
