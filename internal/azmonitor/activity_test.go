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
)

const appID = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/estate/providers/Microsoft.Web/sites/estate-functions"

// Entry is one activity-log entry as Azure answers it.
func entry(op, status string, at time.Time) *armmonitor.EventData {
	return &armmonitor.EventData{OperationName: &armmonitor.LocalizableString{Value: to.Ptr(op)},
		Status: &armmonitor.LocalizableString{Value: to.Ptr(status)}, EventTimestamp: to.Ptr(at), ResourceID: to.Ptr(appID)}
}

// ActivityLog is a fake activity log: it records each filter asked and answers with pages of entries, or an error.
type activityLog struct {
	mu      sync.Mutex
	filters []string
	pages   [][]*armmonitor.EventData
	status  int
	code    string
}

func (l *activityLog) monitor(t *testing.T) *Monitor {
	t.Helper()
	srv := &fake.ActivityLogsServer{NewListPager: func(filter string, _ *armmonitor.ActivityLogsClientListOptions) (resp azfake.PagerResponder[armmonitor.ActivityLogsClientListResponse]) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.filters = append(l.filters, filter)
		if l.status != 0 {
			resp.AddResponseError(l.status, l.code)
			return
		}
		for _, p := range l.pages {
			resp.AddPage(http.StatusOK, armmonitor.ActivityLogsClientListResponse{EventDataCollection: armmonitor.EventDataCollection{Value: p}}, nil)
		}
		return
	}}
	m, err := New(Options{FunctionApp: appID, StartsWindow: 7 * 24 * time.Hour, Credential: &azfake.TokenCredential{},
		Client: &arm.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: fake.NewActivityLogsServerTransport(srv),
			Retry: policy.RetryOptions{MaxRetries: -1}}}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The activity log is asked for the Function App's entries over the window before now, and the newest start or
// restart that succeeded is the last start — over every page; a stop, a start still under way (Started), another
// resource's operation are not starts.
func TestTheLastStartComesFromTheActivityLog(t *testing.T) {
	h := func(n int) time.Time { return now.Add(time.Duration(-n) * time.Hour) }
	l := &activityLog{pages: [][]*armmonitor.EventData{
		{entry(OpStart, "Started", h(30)), entry(OpStart, "Succeeded", h(30)), entry("Microsoft.Web/sites/stop/action", "Succeeded", h(6))},
		{entry(OpRestart, "Succeeded", h(5)), entry(OpStart, "Started", h(1)), entry("microsoft.web/sites/write", "Succeeded", h(2)), nil},
	}}
	m := l.monitor(t)
	rep := m.Witness(context.Background(), now)
	a := rep.App
	if a.Problem != "" || a.Resource != appID || !a.Last.Equal(h(5).UTC()) || !a.Known() {
		t.Fatalf("starts: %+v, want the restart 5h ago", a)
	}
	if len(l.filters) != 1 {
		t.Fatalf("%d requests", len(l.filters))
	}
	want := "eventTimestamp ge '2026-11-25T18:13:27Z' and eventTimestamp le '2026-12-02T18:13:27Z' and resourceUri eq '" + appID + "'"
	if l.filters[0] != want {
		t.Errorf("filter %q, want %q", l.filters[0], want)
	}
	if !a.Since.Equal(now.Add(-7 * 24 * time.Hour)) {
		t.Errorf("since %s", a.Since)
	}
	// No start in the window: known, with none.
	l2 := &activityLog{pages: [][]*armmonitor.EventData{{entry("Microsoft.Web/sites/stop/action", "Succeeded", h(3))}}}
	if a := l2.monitor(t).Starts(context.Background(), now); !a.Known() || !a.Last.IsZero() {
		t.Errorf("no start: %+v", a)
	}
}

// A log it may not read is said, with Azure's status, and the start stays unknown.
func TestAnActivityLogRefusedIsSaid(t *testing.T) {
	l := &activityLog{status: http.StatusForbidden, code: "AuthorizationFailed"}
	a := l.monitor(t).Starts(context.Background(), now)
	if a.Known() || !strings.Contains(a.Problem, "403") || !strings.Contains(a.Problem, "AuthorizationFailed") {
		t.Fatalf("refused: %+v", a)
	}
}

// Only a Function App's ID is taken for the app.
func TestTheFunctionAppIsASite(t *testing.T) {
	if _, err := CheckFunctionAppID(appID); err != nil {
		t.Error(err)
	}
	if _, err := CheckFunctionAppID(topicID); err == nil || !strings.Contains(err.Error(), "not a Function App") {
		t.Errorf("a topic as the app: %v", err)
	}
	if _, err := New(Options{FunctionApp: "estate-functions", Credential: &azfake.TokenCredential{}}); err == nil {
		t.Error("a bare name as the app's resource ID")
	}
}
