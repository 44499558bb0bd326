// Package azmonitor is the second witness read from Azure: Event Grid's own delivery metrics per event
// subscription, through Azure Monitor's metrics API (armmonitor's MetricsClient) with an Entra ID credential.
// Reading them needs the Monitoring Reader role on each topic. The verdicts are reckoned in replay (Judge); this
// package only asks and sorts the answer.
package azmonitor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/monitor/armmonitor"
	"github.com/deadletter/deadletter/replay/rules"
)

// The metric names (Microsoft.EventGrid/topics and systemTopics), and the dimensions read.
const (
	MetricFailed       = "DeliveryAttemptFailCount"
	MetricSucceeded    = "DeliverySuccessCount"
	MetricDeadLettered = "DeadLetteredCount"
	MetricDropped      = "DroppedEventCount"
	dimSubscription    = "EventSubscriptionName"
	dimError           = "Error"
)

// DefaultWindow is how far back the counts go unless the operator says otherwise.
const DefaultWindow = 15 * time.Minute

// Source names this witness in what the front ends print.
const Source = "Event Grid metrics"

// top is the most time series one request returns (Azure Monitor's default is 10: a topic with more
// subscriptions × errors would be cut silently).
const top = 1000

// Options are what the witness reads.
type Options struct {
	// Topics are the resource IDs of the Event Grid topics whose subscriptions dead-letter into the container.
	Topics []string
	// ReplaySystemTopic is the resource ID of the storage account's system topic the replay subscription is on.
	ReplaySystemTopic string
	// Window is how far back the counts go (DefaultWindow when zero).
	Window time.Duration
	// FunctionApp is the resource ID of the estate's Function App: its starts are read from the activity log
	// (the app-start drain runs at each). Empty: not read.
	FunctionApp string
	// StartsWindow is how far back the activity log is read for starts (DefaultStartsWindow when zero).
	StartsWindow time.Duration
	// Credential signs the requests (azidentity.DefaultAzureCredential in the binary).
	Credential azcore.TokenCredential
	// Client are the ARM client's options (a test's fake transport).
	Client *arm.ClientOptions
}

// Monitor reads the metrics; it is safe for concurrent use.
type Monitor struct {
	o        Options
	clients  map[string]*armmonitor.MetricsClient // by subscription ID
	activity *armmonitor.ActivityLogsClient       // the Function App's subscription's (nil: no app named)
}

// New checks the resource IDs and makes one metrics client per Azure subscription they are in.
func New(o Options) (*Monitor, error) {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.Window < time.Minute || o.Window > 24*time.Hour {
		return nil, fmt.Errorf("witness window %s: want 1m to 24h", o.Window)
	}
	if o.StartsWindow <= 0 {
		o.StartsWindow = DefaultStartsWindow
	}
	m := &Monitor{o: o, clients: map[string]*armmonitor.MetricsClient{}}
	if o.FunctionApp != "" {
		sub, err := CheckFunctionAppID(o.FunctionApp)
		if err != nil {
			return nil, err
		}
		if m.activity, err = armmonitor.NewActivityLogsClient(sub, o.Credential, o.Client); err != nil {
			return nil, err
		}
	}
	ids := append([]string{}, o.Topics...)
	if o.ReplaySystemTopic != "" {
		ids = append(ids, o.ReplaySystemTopic)
	}
	for _, id := range ids {
		sub, err := CheckTopicID(id)
		if err != nil {
			return nil, err
		}
		if m.clients[sub] != nil {
			continue
		}
		c, err := armmonitor.NewMetricsClient(sub, o.Credential, o.Client)
		if err != nil {
			return nil, err
		}
		m.clients[sub] = c
	}
	return m, nil
}

// CheckTopicID checks that id is an Event Grid topic's (or system topic's) Azure resource ID and returns the
// Azure subscription ID in it.
func CheckTopicID(id string) (string, error) {
	r, err := arm.ParseResourceID(id)
	if err != nil {
		return "", fmt.Errorf("%q is not an Azure resource ID: %w", id, err)
	}
	t := r.ResourceType.String()
	if !strings.EqualFold(t, "Microsoft.EventGrid/topics") && !strings.EqualFold(t, "Microsoft.EventGrid/systemTopics") &&
		!strings.EqualFold(t, "Microsoft.EventGrid/domains") {
		return "", fmt.Errorf("%q is a %s, not an Event Grid topic, system topic or domain", id, t)
	}
	return r.SubscriptionID, nil
}

// Span is the window of complete minutes a witness at now reads: from start to end, end being the start of the
// minute now is in (that minute is still being counted).
func Span(now time.Time, window time.Duration) (start, end time.Time) {
	end = now.UTC().Truncate(time.Minute)
	return end.Add(-window.Truncate(time.Minute)), end
}

// Witness reads every topic's counts for the complete minutes of the window before now and judges each
// subscription. A topic it cannot read is a Problem, and its subscriptions are left out (so: unknown).
func (m *Monitor) Witness(ctx context.Context, now time.Time) rules.WitnessReport {
	start, end := Span(now, m.o.Window)
	rep := rules.WitnessReport{Source: Source, AsOf: end, Window: end.Sub(start)}
	for _, id := range m.o.Topics {
		hs, err := m.topic(ctx, id, start, end)
		if err != nil {
			rep.Problems = append(rep.Problems, problem(id, err))
			continue
		}
		rep.Handlers = append(rep.Handlers, hs...)
	}
	if m.o.ReplaySystemTopic != "" {
		hs, err := m.topic(ctx, m.o.ReplaySystemTopic, start, end)
		if err != nil {
			rep.Problems = append(rep.Problems, problem(m.o.ReplaySystemTopic, err))
		} else {
			rep.Replay = hs
		}
	}
	if m.activity != nil {
		rep.App = m.Starts(ctx, now)
	}
	return rep
}

// problem keeps what the SDK said, and the HTTP status when it was one.
func problem(topic string, err error) rules.WitnessProblem {
	p := rules.WitnessProblem{Topic: topic, Err: err.Error()}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		p.Status = re.StatusCode
		p.Err = re.ErrorCode
		if p.Err == "" {
			p.Err = fmt.Sprintf("HTTP %d", re.StatusCode)
		}
	}
	return p
}

// topic reads one topic's counts: the failed attempts split by error in one request (only that metric has the
// Error dimension), the rest in another, every subscription of the topic.
func (m *Monitor) topic(ctx context.Context, id string, start, end time.Time) ([]rules.HandlerHealth, error) {
	sub, err := CheckTopicID(id)
	if err != nil {
		return nil, err
	}
	c := m.clients[sub]
	minutes := map[string]map[time.Time]*rules.MinuteCounts{} // subscription (upper case) → minute
	names := map[string]string{}                              // upper case → as the metric gave it
	for _, q := range []struct{ metrics, filter string }{
		{MetricFailed, dimSubscription + " eq '*' and " + dimError + " eq '*'"},
		{MetricSucceeded + "," + MetricDeadLettered + "," + MetricDropped, dimSubscription + " eq '*'"},
	} {
		resp, err := c.List(ctx, id, &armmonitor.MetricsClientListOptions{
			Timespan:    to.Ptr(start.Format(time.RFC3339) + "/" + end.Format(time.RFC3339)),
			Interval:    to.Ptr("PT1M"),
			Metricnames: to.Ptr(q.metrics),
			Aggregation: to.Ptr("Total"),
			Filter:      to.Ptr(q.filter),
			Top:         to.Ptr(int32(top)),
		})
		if err != nil {
			return nil, err
		}
		for _, metric := range resp.Value {
			if err := add(metric, minutes, names); err != nil {
				return nil, err
			}
		}
	}
	out := make([]rules.HandlerHealth, 0, len(minutes))
	for key, byMinute := range minutes {
		ms := make([]rules.MinuteCounts, 0, len(byMinute))
		for _, mc := range byMinute {
			ms = append(ms, *mc)
		}
		out = append(out, rules.Judge(names[key], id, ms, end))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Subscription < out[j].Subscription })
	return out, nil
}

// add sorts one metric's time series into per-subscription minutes.
func add(metric *armmonitor.Metric, minutes map[string]map[time.Time]*rules.MinuteCounts, names map[string]string) error {
	if metric == nil || metric.Name == nil || metric.Name.Value == nil {
		return nil
	}
	name := *metric.Name.Value
	if metric.ErrorCode != nil && *metric.ErrorCode != "" && !strings.EqualFold(*metric.ErrorCode, "Success") {
		msg := *metric.ErrorCode
		if metric.ErrorMessage != nil {
			msg += ": " + *metric.ErrorMessage
		}
		return fmt.Errorf("metric %s: %s", name, msg)
	}
	for _, ts := range metric.Timeseries {
		if ts == nil {
			continue
		}
		sub, errKind := "", ""
		for _, md := range ts.Metadatavalues {
			if md == nil || md.Name == nil || md.Name.Value == nil || md.Value == nil {
				continue
			}
			switch {
			case strings.EqualFold(*md.Name.Value, dimSubscription):
				sub = *md.Value
			case strings.EqualFold(*md.Name.Value, dimError):
				errKind = *md.Value
			}
		}
		if sub == "" {
			continue // not split by subscription: nothing to match a folder to
		}
		key := strings.ToUpper(sub)
		if _, ok := names[key]; !ok {
			names[key] = sub
			minutes[key] = map[time.Time]*rules.MinuteCounts{}
		}
		for _, v := range ts.Data {
			if v == nil || v.TimeStamp == nil || v.Total == nil {
				continue
			}
			at := v.TimeStamp.UTC()
			mc := minutes[key][at]
			if mc == nil {
				mc = &rules.MinuteCounts{At: at, FailedBy: map[string]int64{}}
				minutes[key][at] = mc
			}
			n := int64(*v.Total)
			switch name {
			case MetricFailed:
				mc.Failed += n
				if n > 0 {
					mc.FailedBy[errKind] += n
				}
			case MetricSucceeded:
				mc.Succeeded += n
			case MetricDeadLettered:
				mc.DeadLettered += n
			case MetricDropped:
				mc.Dropped += n
			}
		}
	}
	return nil
}

// DefaultStartsWindow is how far back the activity log is read for the Function App's starts (it keeps 90 days).
const DefaultStartsWindow = 30 * 24 * time.Hour

// The activity log's operations that start the Function App's workers (the budget guard stops and starts it
// through this plane). A scale-out is no operation: the log never shows one.
const (
	OpStart   = "Microsoft.Web/sites/start/action"
	OpRestart = "Microsoft.Web/sites/restart/action"
)

// CheckFunctionAppID checks that id is a Function App's (a Microsoft.Web/sites resource's) ID and returns the
// Azure subscription ID in it.
func CheckFunctionAppID(id string) (string, error) {
	r, err := arm.ParseResourceID(id)
	if err != nil {
		return "", fmt.Errorf("%q is not an Azure resource ID: %w", id, err)
	}
	if t := r.ResourceType.String(); !strings.EqualFold(t, "Microsoft.Web/sites") {
		return "", fmt.Errorf("%q is a %s, not a Function App (Microsoft.Web/sites)", id, t)
	}
	return r.SubscriptionID, nil
}

// Starts reads the Function App's starts and restarts from the activity log, over StartsWindow before now: the
// newest that succeeded. What it cannot read is said in Problem, never guessed.
func (m *Monitor) Starts(ctx context.Context, now time.Time) rules.AppStarts {
	since := now.UTC().Add(-m.o.StartsWindow).Truncate(time.Second)
	a := rules.AppStarts{Resource: m.o.FunctionApp, Since: since}
	filter := fmt.Sprintf("eventTimestamp ge '%s' and eventTimestamp le '%s' and resourceUri eq '%s'",
		since.Format(time.RFC3339), now.UTC().Truncate(time.Second).Format(time.RFC3339), m.o.FunctionApp)
	pager := m.activity.NewListPager(filter, &armmonitor.ActivityLogsClientListOptions{
		Select: to.Ptr("eventTimestamp,operationName,status,resourceId")})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			p := problem(m.o.FunctionApp, err)
			a.Problem = p.Err
			if p.Status != 0 {
				a.Problem = fmt.Sprintf("%d %s", p.Status, p.Err)
			}
			return a
		}
		for _, e := range page.Value {
			if at, ok := startOf(e); ok && at.After(a.Last) {
				a.Last = at
			}
		}
	}
	return a
}

// startOf is when an activity-log entry says the app was started or restarted (ok false for any other entry).
func startOf(e *armmonitor.EventData) (time.Time, bool) {
	if e == nil || e.OperationName == nil || e.OperationName.Value == nil || e.EventTimestamp == nil {
		return time.Time{}, false
	}
	op := *e.OperationName.Value
	if !strings.EqualFold(op, OpStart) && !strings.EqualFold(op, OpRestart) {
		return time.Time{}, false
	}
	if e.Status == nil || e.Status.Value == nil || !strings.EqualFold(*e.Status.Value, "Succeeded") {
		return time.Time{}, false
	}
	return e.EventTimestamp.UTC(), true
}
