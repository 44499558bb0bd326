package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/twin"
)

// pushVerdict is what drain --dry-run --json on a twin's directory says Event Grid's witness says of
// PUSH-NOTIFICATIONS: its verdict, and as of which minute.
func pushVerdict(t *testing.T, dir string) (verdict, asOf string) {
	t.Helper()
	var out struct {
		Readiness []struct {
			Subscription string `json:"subscription"`
			EventGrid    *struct {
				Verdict string `json:"verdict"`
			} `json:"eventGrid"`
		} `json:"readiness"`
		EventGrid *struct {
			Source string `json:"source"`
			AsOf   string `json:"asOf"`
		} `json:"eventGrid"`
	}
	js := mustRun(t, "drain", "--dry-run", "--json", "--dir", dir)
	if err := json.Unmarshal([]byte(js), &out); err != nil {
		t.Fatalf("drain --dry-run --json: %v\n%s", err, js)
	}
	if out.EventGrid == nil || out.EventGrid.Source != twin.WitnessSource {
		t.Fatalf("drain on a twin's directory read no witness of the twin's:\n%s", js)
	}
	for _, r := range out.Readiness {
		if r.Subscription == "PUSH-NOTIFICATIONS" && r.EventGrid != nil {
			return r.EventGrid.Verdict, out.EventGrid.AsOf
		}
	}
	t.Fatalf("drain's readiness has no PUSH-NOTIFICATIONS with Event Grid's verdict:\n%s", js)
	return "", ""
}

// A twin whose script fails PUSH-NOTIFICATIONS from T to T+1h (push-outage): drain --dry-run --json and the
// overview (the binary's dashboard on the directory, in tmux) say it failing within two twin minutes of T — not
// before — still failing at T+1h, and recovered within two twin minutes of T+1h. The container's own witness
// cannot: its first dead letter of the outage comes an hour after T.
func TestTwinWitnessSeesThePushOutage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opens := time.Date(2026, 12, 2, 17, 0, 0, 0, time.UTC)
	tw, err := twin.Start(ctx, dir, made.Twin, "push-outage", 1, opens)
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	step := func(to time.Time) {
		t.Helper()
		if _, err := tw.Advance(ctx, to); err != nil {
			t.Fatal(err)
		}
	}
	T := opens.Add(twin.PushOutageFrom)

	tm := newTerm(t, 160, 40, binary(t), "--dir", dir, "--interval", "1s")
	tm.screen("REHEARSAL")
	tm.keys("o")
	tm.screenMatches(`PUSH-NOTIFICATIONS.*EG ok`)

	step(T)
	if v, asOf := pushVerdict(t, dir); v != "healthy" {
		t.Fatalf("as of %s, before the outage's first minute is complete: %s, want healthy", asOf, v)
	}
	within := func(from time.Time, ok func(string) bool, what string) {
		t.Helper()
		var seen []string
		for m := 1; m <= 2; m++ {
			step(from.Add(time.Duration(m) * time.Minute))
			v, asOf := pushVerdict(t, dir)
			seen = append(seen, asOf+" "+v)
			if ok(v) {
				return
			}
		}
		t.Fatalf("not %s within two twin minutes of %s: %v", what, from.Format("15:04"), seen)
	}
	within(T, func(v string) bool { return v == "failing" }, "failing")
	tm.screenMatches(`PUSH-NOTIFICATIONS.*EG failing`)
	for _, at := range []time.Duration{20 * time.Minute, 59 * time.Minute, time.Hour} {
		step(T.Add(at))
		if v, asOf := pushVerdict(t, dir); v != "failing" {
			t.Fatalf("as of %s, inside the outage: %s, want failing", asOf, v)
		}
	}
	within(T.Add(time.Hour), func(v string) bool { return v == "recovering" || v == "healthy" }, "recovered")
	tm.screenMatches(`PUSH-NOTIFICATIONS.*EG (recovering|ok)`)
	tm.keys("q")
	tm.exited()
}

// With the replay scripted down (replay-stopped: five minutes after the rehearsal opens), check raises
// replayDropping — Event Grid giving up the triggers of the blobs written since — while not one of those blobs is
// old enough to be stranded yet: the stranded count is still the one the rehearsal opened on.
func TestTwinWitnessSeesTheReplayDropping(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opens := time.Date(2026, 12, 2, 17, 0, 0, 0, time.UTC)
	tw, err := twin.Start(ctx, dir, made.Twin, "replay-stopped", 1, opens)
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	type checkOut struct {
		Counts   map[string]int `json:"counts"`
		Findings []struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		} `json:"findings"`
	}
	look := func() (checkOut, string) {
		t.Helper()
		out, _, _ := runCmd(t, "check", "--json", "--dir", dir)
		var c checkOut
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatalf("check --json: %v\n%s", err, out)
		}
		for _, f := range c.Findings {
			if f.Kind == "replayDropping" {
				return c, f.Message
			}
		}
		return c, ""
	}
	open, msg := look()
	if msg != "" {
		t.Fatalf("replayDropping as the rehearsal opens, before the replay stopped: %s", msg)
	}
	stranded := open.Counts["stranded"]
	// The replay stops at +5m; the first trigger it misses is given up after its last attempt, some 47 minutes on
	// (10 s, 30 s, 1 m, 5 m, 10 m, 30 m: the next would be past its hour). Step a minute at a time from before.
	step := 30 * time.Minute
	for now := opens; now.Before(opens.Add(3 * time.Hour)); {
		now = now.Add(step)
		step = time.Minute
		if _, err := tw.Advance(ctx, now); err != nil {
			t.Fatal(err)
		}
		c, msg := look()
		if c.Counts["stranded"] != stranded {
			t.Fatalf("at %s the stranded count is %d (was %d) and replayDropping is not raised yet", now.Format("15:04"), c.Counts["stranded"], stranded)
		}
		if msg != "" {
			if text, _, _ := runCmd(t, "check", "--dir", dir); !strings.Contains(text, twin.ReplaySubscription+": Event Grid dropped") {
				t.Errorf("check's evidence does not name the replay's subscription:\n%s", text)
			}
			t.Logf("at %s (+%s): %s", now.Format("15:04"), now.Sub(opens), msg)
			// And the blobs it speaks of do become stranded, later: the finding was ahead of the TTL.
			if _, err := tw.Advance(ctx, now.Add(30*time.Minute)); err != nil {
				t.Fatal(err)
			}
			if c, _ := look(); c.Counts["stranded"] <= stranded {
				t.Fatalf("half an hour after replayDropping, %d stranded (was %d): the dropped triggers' blobs never stranded", c.Counts["stranded"], stranded)
			}
			return
		}
	}
	t.Fatalf("no replayDropping within three hours of the replay stopping (%d stranded)", stranded)
}
