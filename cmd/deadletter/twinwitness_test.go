package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
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
// before — still failing at T+1h, and recovered within two twin minutes of T+1h; watch's metrics endpoint follows. The container's own witness
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
	// …and watch's metrics endpoint: a series per subscription for its verdict.
	base, stop, _ := startWatch(t, dir)
	defer stop()
	scrapes := func(verdicts ...string) {
		t.Helper()
		eventually(t, "deadletter_handler_verdict of PUSH-NOTIFICATIONS "+strings.Join(verdicts, " or "), func() bool {
			s := scrape(t, base)
			for _, v := range verdicts {
				if n, ok := s.sum("deadletter_handler_verdict", "subscription", "PUSH-NOTIFICATIONS", "verdict", v); ok && n == 1 {
					return true
				}
			}
			return false
		})
	}
	scrapes("healthy")

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
	scrapes("failing")
	for _, at := range []time.Duration{20 * time.Minute, 59 * time.Minute, time.Hour} {
		step(T.Add(at))
		if v, asOf := pushVerdict(t, dir); v != "failing" {
			t.Fatalf("as of %s, inside the outage: %s, want failing", asOf, v)
		}
	}
	within(T.Add(time.Hour), func(v string) bool { return v == "recovering" || v == "healthy" }, "recovered")
	tm.screenMatches(`PUSH-NOTIFICATIONS.*EG (recovering|ok)`)
	scrapes("recovering", "healthy")
	tm.keys("q")
	tm.exited()
}

// With the replay scripted down (replay-stopped: five minutes after the rehearsal opens), check raises
// replayDropping — Event Grid giving up the triggers of the blobs written since — while not one of those blobs is
// old enough to be stranded yet: the stranded count is still the one the rehearsal opened on.
func TestTwinWitnessSeesTheReplayDropping(t *testing.T) {
	t.Parallel()
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
	// The replay stops at +5m. A trigger it misses is given up at its first scheduled attempt past its hour —
	// some 1h47m on (10 s, 30 s, 1 m, 5 m, 10 m, 30 m, 1 h: the eighth would be past the TTL) — so its blob shows
	// stranded by its age first, and the drop then confirms it: Event Grid will not try it again.
	step := 30 * time.Minute
	for now := opens; now.Before(opens.Add(3 * time.Hour)); {
		now = now.Add(step)
		step = time.Minute
		if _, err := tw.Advance(ctx, now); err != nil {
			t.Fatal(err)
		}
		c, msg := look()
		if msg == "" {
			continue
		}
		if said, _, _ := runCmd(t, "check", "--dir", dir); !strings.Contains(said, twin.ReplaySubscription+": Event Grid dropped") {
			t.Errorf("check's evidence does not name the replay's subscription:\n%s", said)
		}
		t.Logf("at %s (+%s): %s", now.Format("15:04"), now.Sub(opens), msg)
		// The blobs it speaks of are stranded already: the drop comes at the first attempt due past the hour —
		// 1h46m40s after the blob, give or take the schedule's 10% — not when the hour ends.
		if now.Sub(opens) < 5*time.Minute+95*time.Minute {
			t.Fatalf("replayDropping at +%s, before any trigger missed since +5m could have met its first attempt past the hour", now.Sub(opens))
		}
		if c.Counts["stranded"] <= stranded {
			t.Fatalf("replayDropping with %d stranded (was %d at the opening): the dropped triggers' blobs are not stranded", c.Counts["stranded"], stranded)
		}
		return
	}
	t.Fatalf("no replayDropping within three hours of the replay stopping (%d stranded)", stranded)
}

// The demo (the incident, its clock running): while the script fails PUSH-NOTIFICATIONS (busy until twenty
// minutes after the rehearsal opens) the drain dialog warns that Event Grid says its handler is failing now; once
// the script lets it recover, and two twin minutes on, the dialog says it recovering and warns of it no more.
func TestDemoDrainDialogWarnsOfTheFailingHandlerInTmux(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	tm := newTerm(t, 160, 50, binary(t), "demo", "--dir", dir, "--speed", "30")
	tm.screen("REHEARSAL", "[1 Stranded", "▲CRASH 1")
	var status struct {
		Start string `json:"start"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "twin", "status", "--dir", dir, "--json")), &status); err != nil {
		t.Fatal(err)
	}
	start, err := time.Parse(time.RFC3339, status.Start)
	if err != nil {
		t.Fatal(err)
	}
	script, _ := twin.ScriptOf("incident")
	var end time.Time // when the script lets the push service, down as the rehearsal opens, recover
	for _, w := range script.Windows {
		if w.Sub == "push-notifications" && w.From <= script.Opens && script.Opens < w.To {
			end = start.Add(w.To)
		}
	}
	if end.IsZero() {
		t.Fatal("the incident's script has no push outage around its opening")
	}
	asOfRe := regexp.MustCompile(`Event Grid, in the 15m to (\d\d):(\d\d)`)
	// asOf is the minute the dialog's witness speaks as of, on the day nearest end.
	asOf := func(s string) time.Time {
		m := asOfRe.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("the drain dialog does not say Event Grid's witness:\n%s", s)
		}
		h, _ := strconv.Atoi(m[1])
		mi, _ := strconv.Atoi(m[2])
		at := time.Date(end.Year(), end.Month(), end.Day(), h, mi, 0, 0, time.UTC)
		for at.Sub(end) > 12*time.Hour {
			at = at.Add(-24 * time.Hour)
		}
		for end.Sub(at) > 12*time.Hour {
			at = at.Add(24 * time.Hour)
		}
		return at
	}
	warning := "PUSH-NOTIFICATIONS: Event Grid says its handler is failing now"
	tm.keys("C-a", "d")
	s := tm.screen("Drain", "Event Grid, in the 15m to", warning)
	if at := asOf(s); !at.Before(end) {
		t.Fatalf("the first dialog is as of %s, after the script's outage ended at %s:\n%s", at.Format("15:04"), end.Format("15:04"), s)
	}
	tm.keys("Escape")
	for deadline := time.Now().Add(90 * time.Second); ; {
		time.Sleep(time.Second)
		tm.keys("C-a", "d")
		s = tm.screen("Drain", "Event Grid, in the 15m to")
		tm.keys("Escape")
		at := asOf(s)
		if at.Before(end.Add(2 * time.Minute)) {
			if time.Now().After(deadline) {
				t.Fatalf("the rehearsal's clock never passed %s:\n%s", end.Format("15:04"), s)
			}
			continue
		}
		// The dialog wraps its lines: read it as one line.
		flat := regexp.MustCompile(`-\s+`).ReplaceAllString(regexp.MustCompile(`[│\s]+`).ReplaceAllString(s, " "), "-")
		if !strings.Contains(flat, warning) && regexp.MustCompile(`PUSH-NOTIFICATIONS (recovering|ok)`).MatchString(flat) {
			break
		}
		// Recovered, the handler is "failing" in Event Grid's window until a delivery lands in it: the twin's
		// next push event, which a loaded machine's twin may take a few of its minutes to deliver.
		if time.Now().After(deadline) {
			t.Fatalf("as of %s, after the push service recovered at %s, the dialog still says:\n%s", at.Format("15:04"), end.Format("15:04"), s)
		}
	}
	tm.keys("q")
	tm.exited()
}
