package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/monitor/armmonitor"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/monitor/armmonitor/fake"

	"github.com/deadletter/deadletter/internal/azmonitor"
	"github.com/deadletter/deadletter/replay/rules"
)

const egApp = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/estate/providers/Microsoft.Web/sites/estate-functions"

// startsLog is Azure Monitor's activity log through the SDK's own fake server: one start of the Function App, at
// at, succeeded.
func startsLog(t *testing.T, at time.Time) rules.Witness {
	t.Helper()
	srv := &fake.ActivityLogsServer{NewListPager: func(string, *armmonitor.ActivityLogsClientListOptions) (resp azfake.PagerResponder[armmonitor.ActivityLogsClientListResponse]) {
		resp.AddPage(http.StatusOK, armmonitor.ActivityLogsClientListResponse{EventDataCollection: armmonitor.EventDataCollection{Value: []*armmonitor.EventData{
			{OperationName: &armmonitor.LocalizableString{Value: to.Ptr(azmonitor.OpStart)}, Status: &armmonitor.LocalizableString{Value: to.Ptr("Succeeded")},
				EventTimestamp: to.Ptr(at), ResourceID: to.Ptr(egApp)}}}}, nil)
		return
	}}
	m, err := azmonitor.New(azmonitor.Options{FunctionApp: egApp, StartsWindow: 90 * 24 * time.Hour, Credential: &azfake.TokenCredential{},
		Client: &arm.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: fake.NewActivityLogsServerTransport(srv),
			Retry: policy.RetryOptions{MaxRetries: -1}}}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type showMissed struct {
	Advice        []string `json:"advice"`
	MissedByStart string   `json:"missedByStart"`
}

// Issue 54: with the Function App's starts read from the activity log (the SDK's fake server), a stranded blob
// older than the app's last start is reported as missed by the start's drain — "young" when it was younger than
// the TTL at that start, "listed" when it was a TTL old already — and one stranded since is not. The twin serves
// the same answer from its own starts.
func TestAStrandedBlobOlderThanTheLastStartIsMissedByItsDrain(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	stranded := lsNamesOf(t, "--dir", dir, "--pane", "stranded", "--filter", "-is:crash")
	if len(stranded.Blobs) < 5 {
		t.Fatalf("%d stranded", len(stranded.Blobs))
	}
	var oldest, newest time.Time
	for _, b := range stranded.Blobs {
		lm, _ := time.Parse(time.RFC3339, b.LastModified)
		if oldest.IsZero() || lm.Before(oldest) {
			oldest = lm
		}
		if lm.After(newest) {
			newest = lm
		}
	}
	ttl := rules.DefaultConfig().TTL
	start := newest.Add(ttl / 2) // after every stranded blob: the newest was younger than the TTL then
	w := startsLog(t, start)
	young, listed := 0, 0
	for _, b := range stranded.Blobs {
		out, errs, code := runWithWitness(t, w, "show", b.Name, "--dir", dir, "-o", "json")
		if code != 0 {
			t.Fatalf("show %s: exit %d\n%s", b.Name, code, errs)
		}
		var s showMissed
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatal(err)
		}
		lm, _ := time.Parse(time.RFC3339, b.LastModified)
		want := "listed"
		if start.Sub(lm) < ttl {
			want, young = "young", young+1
		} else {
			listed++
		}
		if s.MissedByStart != want || !strings.Contains(strings.Join(s.Advice, "\n"), "Missed by the Function App's last start") {
			t.Errorf("%s (modified %s, the app started %s): missed %q, want %q; advice %q", b.Name, lm, start, s.MissedByStart, want, s.Advice)
		}
	}
	if young == 0 || listed == 0 {
		t.Fatalf("the start at %s tells young %d, listed %d: want both", start, young, listed)
	}
	// A start before the oldest: every stranded blob stranded since — a restart would take it.
	before := startsLog(t, oldest.Add(-time.Minute))
	out, _, _ := runWithWitness(t, before, "show", stranded.Blobs[0].Name, "--dir", dir, "-o", "json")
	var s showMissed
	json.Unmarshal([]byte(out), &s)
	if s.MissedByStart != "" || !strings.Contains(strings.Join(s.Advice, "\n"), "Or restart the Function App") {
		t.Errorf("stranded after the last start: missed %q, advice %q", s.MissedByStart, s.Advice)
	}
	// The twin's own activity log: yesterday's start, whose listing failed, missed them.
	out = mustRun(t, "show", stranded.Blobs[0].Name, "--dir", dir, "-o", "json")
	json.Unmarshal([]byte(out), &s)
	if s.MissedByStart == "" {
		t.Errorf("the twin's own log: %s not missed by its last start; advice %q", stranded.Blobs[0].Name, s.Advice)
	}
}
