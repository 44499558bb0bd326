package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// putDeadLetter writes a dead letter of sub as Event Grid would have written it at: named by that hour.
func putDeadLetter(t *testing.T, d *dirstore.Dir, sub string, at time.Time, n int) {
	t.Helper()
	at = at.UTC()
	name := fmt.Sprintf("%s/%d/%d/%d/%d/%08d-0000-4000-8000-000000000000.json", sub, at.Year(), at.Month(), at.Day(), at.Hour(), n)
	body := fmt.Sprintf(`[{"id":"%s-%d","subject":"/s","eventType":"ProcessWebhook","dataVersion":"1","data":{}}]`, sub, n)
	ctx := context.Background()
	if _, err := d.Write(ctx, name, []byte(body), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := d.Backdate(ctx, name, at); err != nil {
		t.Fatal(err)
	}
}

// Has the handler recovered? A subscription whose newest dead letter is 5 minutes old is still failing; one whose
// newest is 5 hours old is not — in drain --dry-run --json, report --format json, and the dry run's words.
func TestDrainSaysWhetherTheHandlerStillFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, err := dirstore.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	putDeadLetter(t, d, "FRESH", now.Add(-5*time.Minute), 1) // live: too young to drain, but evidence
	putDeadLetter(t, d, "FRESH", now.Add(-3*time.Hour), 2)   // stranded: the drain takes it
	putDeadLetter(t, d, "STALE", now.Add(-5*time.Hour), 3)

	var out struct {
		Results   []map[string]any `json:"results"`
		Readiness []struct {
			Subscription     string `json:"subscription"`
			NewestDeadLetter string `json:"newestDeadLetter"`
			LastHour         int    `json:"lastHour"`
			Failing          bool   `json:"failing"`
		} `json:"readiness"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "drain", "--dir", dir, "--dry-run", "--json")), &out); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range out.Readiness {
		got[r.Subscription] = r.Failing
		newest, err := time.Parse(time.RFC3339, r.NewestDeadLetter)
		if err != nil {
			t.Fatalf("newestDeadLetter %q: %v", r.NewestDeadLetter, err)
		}
		switch r.Subscription {
		case "FRESH":
			if r.LastHour != 1 || now.Sub(newest) > 10*time.Minute {
				t.Errorf("FRESH: lastHour %d, newest %v ago", r.LastHour, now.Sub(newest))
			}
		case "STALE":
			if r.LastHour != 0 {
				t.Errorf("STALE: lastHour %d", r.LastHour)
			}
		}
	}
	if len(out.Results) != 2 || !got["FRESH"] || got["STALE"] || len(got) != 2 {
		t.Fatalf("readiness %+v over %d results", out.Readiness, len(out.Results))
	}

	var rep struct {
		Readiness []struct {
			Subscription string `json:"subscription"`
			Failing      bool   `json:"failing"`
		} `json:"readiness"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "report", "--dir", dir, "--format", "json")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Readiness) != 2 || rep.Readiness[0].Subscription != "FRESH" || !rep.Readiness[0].Failing || rep.Readiness[1].Failing {
		t.Fatalf("report readiness %+v", rep.Readiness)
	}

	_, errs, code := runCmd(t, "drain", "--dir", dir, "--dry-run")
	if code != 0 || !strings.Contains(errs, "FRESH: last dead letter 5m ago, 1 in the last 1h") || !strings.Contains(errs, "Last dead letter: FRESH 5m ago") || strings.Contains(errs, "STALE:") {
		t.Fatalf("exit %d, the dry run's words:\n%s", code, errs)
	}
}
