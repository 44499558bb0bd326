package main

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/internal/output"
)

// One voice (issue 51): on the demo's incident, every blob says the same of itself in show --json and ls --json;
// check --json and report --format json count the panes as ls does and name in each finding only blobs ls puts
// there; and the readiness report gives and drain --dry-run warns by are the same, witness by witness.
func TestEveryOutputSaysTheSameOfEachBlob(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "3h")

	var ls struct{ Blobs []map[string]any }
	if err := json.Unmarshal([]byte(mustRun(t, "ls", "--json", "--dir", dir)), &ls); err != nil {
		t.Fatal(err)
	}
	byName, panes := map[string]map[string]any{}, map[string]float64{}
	for _, b := range ls.Blobs {
		byName[b["name"].(string)] = b
		panes[b["pane"].(string)]++
	}
	same := []string{"pane", "size", "lastModified", "ageSeconds", "expiresAt", "malformed", "error", "maxReplayAttempt",
		"maxReplayAttemptAtLeast", "reasons", "outcomes", "verdicts", "expiring", "stalled", "handled", "untriggerable"}
	for name, b := range byName {
		var show map[string]any
		if err := json.Unmarshal([]byte(mustRun(t, "show", "--json", "--dir", dir, name)), &show); err != nil {
			t.Fatal(err)
		}
		for _, k := range same {
			if !reflect.DeepEqual(show[k], b[k]) {
				t.Errorf("%s: show says %s = %v, ls says %v", name, k, show[k], b[k])
			}
		}
		if show["eventCount"] != b["events"] {
			t.Errorf("%s: show counts %v events, ls %v", name, show["eventCount"], b["events"])
		}
	}

	var check struct {
		Counts   map[string]float64
		Findings []struct {
			Kind  string
			Count float64
			Names []string
			More  float64
		}
	}
	if err := json.Unmarshal([]byte(runAny(t, "check", "--json", "--dir", dir)), &check); err != nil {
		t.Fatal(err)
	}
	var report struct {
		Counts    map[string]float64
		Readiness []map[string]any
	}
	if err := json.Unmarshal([]byte(mustRun(t, "report", "--format", "json", "--dir", dir)), &report); err != nil {
		t.Fatal(err)
	}
	for what, counts := range map[string]map[string]float64{"check": check.Counts, "report": report.Counts} {
		for p, n := range panes {
			if counts[p] != n {
				t.Errorf("%s counts %v %s, ls lists %v", what, counts[p], p, n)
			}
		}
	}
	inPane := map[string]string{"stranded": "stranded", "crash": "stranded", "quarantine": "quarantine", "replayStalled": "live", "malformed": ""}
	for _, f := range check.Findings {
		if int(f.Count) != len(f.Names)+int(f.More) {
			t.Errorf("check's %s finding counts %v but names %d (+%v more)", f.Kind, f.Count, len(f.Names), f.More)
		}
		if f.Kind == "handlerFailing" {
			continue // (it names subscriptions)
		}
		for _, n := range f.Names {
			b, ok := byName[n]
			switch {
			case !ok:
				t.Errorf("check's %s finding names %s, which ls does not list", f.Kind, n)
			case inPane[f.Kind] != "" && b["pane"] != inPane[f.Kind]:
				t.Errorf("check's %s finding names %s, which ls puts in %v", f.Kind, n, b["pane"])
			case f.Kind == "stranded" && (b["handled"] == true):
				t.Errorf("check counts the handled %s as stranded", n)
			case f.Kind == "expiring" && b["expiring"] != true:
				t.Errorf("check's expiring finding names %s, which ls does not call expiring", n)
			}
		}
	}

	var dry struct{ Readiness []map[string]any }
	if err := json.Unmarshal([]byte(mustRun(t, "drain", "--dry-run", "--json", "--dir", dir)), &dry); err != nil {
		t.Fatal(err)
	}
	bySub := func(rs []map[string]any) map[string]map[string]any {
		m := map[string]map[string]any{}
		for _, r := range rs {
			m[r["subscription"].(string)] = r
		}
		return m
	}
	rep, dr := bySub(report.Readiness), bySub(dry.Readiness)
	if len(rep) == 0 {
		t.Fatal("the report has no readiness: the test proves nothing")
	}
	for sub, r := range dr {
		if !maps.EqualFunc(r, rep[sub], reflect.DeepEqual) {
			t.Errorf("%s: the drain's readiness %v, the report's %v", sub, r, rep[sub])
		}
	}
}

// runAny runs the command line whatever its exit (check exits 1 with findings) and returns its stdout.
func runAny(t *testing.T, args ...string) string {
	t.Helper()
	out, _, _ := runCmd(t, args...)
	return out
}

// check's text starts every finding's message in one column (whatever the longest kind: handlerFailing is 14
// wide) and puts its names under the message; its stranded count and what it counts apart add up to the pane.
func TestCheckTextIsAlignedAndAddsUp(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "3h")
	out := runAny(t, "check", "--dir", dir)
	// One voice: every finding's JSON message is the sentence the text prints, counted-apart note and all.
	var chk output.CheckJSON
	json.Unmarshal([]byte(runAny(t, "check", "--json", "--dir", dir)), &chk)
	for _, f := range chk.Findings {
		if !strings.Contains(out, "  "+string(f.Message)+"\n") {
			t.Errorf("check --json says %s as %q; the text does not", f.Kind, f.Message)
		}
	}
	msg := regexp.MustCompile(`(?m)^  ([a-zA-Z]+)( +)(\S)`)
	cols := map[int]bool{}
	for _, m := range msg.FindAllStringSubmatchIndex(out, -1) {
		cols[m[6]-m[0]] = true
	}
	if len(cols) != 1 {
		t.Errorf("the findings' messages start in %d columns:\n%s", len(cols), out)
	}
	for col := range cols {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "   ") && strings.TrimSpace(l) != "" && len(l)-len(strings.TrimLeft(l, " ")) != col {
				t.Errorf("a name is not under its message (column %d): %q", col, l)
			}
		}
	}
	pane := regexp.MustCompile(`\((\d+) stranded,`).FindStringSubmatch(out)
	found := regexp.MustCompile(`stranded +(\d+) stranded blob\(s\).*?(?:\((\d+) handled)?(?: and )?(?:\(?(\d+) the replay throws on)?(?:: counted apart, not to drain\))?\n`).FindStringSubmatch(out)
	if pane == nil || found == nil {
		t.Fatalf("no stranded pane count or finding:\n%s", out)
	}
	sum := 0
	for _, s := range found[1:] {
		n, _ := strconv.Atoi(s)
		sum += n
	}
	if p, _ := strconv.Atoi(pane[1]); sum != p {
		t.Errorf("the stranded finding and what it counts apart make %d, the pane holds %d:\n%s", sum, p, out)
	}
}

// An export of a twin whose clock runs ahead says so, and ls of the export explains the negative ages it shows
// rather than leaving them to look like a bug.
func TestAnExportOfATwinAheadSaysItsTimesAreTheTwins(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "3h")
	to := filepath.Join(t.TempDir(), "export")
	if out := mustRun(t, "export", "--all", "--dir", dir, "--to", to); !strings.Contains(out, "keep the twin's times") {
		t.Errorf("the export does not say its times are the twin's:\n%s", out)
	}
	if _, errs, _ := runCmd(t, "ls", "--dir", to); !strings.Contains(errs, "ahead of the container's clock") {
		t.Errorf("ls of the export does not explain its negative ages:\n%s", errs)
	}
}

// A blob drained into a replay that takes no trigger comes back stranded: show says it was drained and why it is
// stranded again, not "Drain it" as if nothing had happened (issue 51, found by a fresh-eyes audit).
func TestShowTellsABlobStrandedAgainAfterADrain(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir, "--scenario", "replay-stopped")
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "10m")
	name := strings.SplitN(strings.TrimSpace(mustRun(t, "ls", "--dir", dir, "--pane", "stranded", "--filter", "sub:friend-requests", "-o", "name")), "\n", 2)[0]
	if name == "" {
		t.Fatal("no stranded friend-requests blob to drain")
	}
	mustRun(t, "drain", "--dir", dir, name, "--yes")
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "2h")
	out := mustRun(t, "show", "--dir", dir, name)
	if !strings.Contains(out, "stranded again") || !strings.Contains(out, "drained 1 time(s)") || strings.Contains(out, "→ Drain it:") {
		t.Fatalf("show of a blob stranded again after a drain:\n%s", out)
	}
}

// One verdict on each handler: where report's readiness says a subscription's handler fails now, show's advice
// for its stranded blobs warns of it, and where it says the handler is healthy, none does — whichever witness
// decided (issue 51: show said only "Drain it" while report and check said Event Grid saw it failing).
func TestShowWarnsAsTheReportJudgesEachHandler(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	var report struct {
		Readiness []struct {
			Subscription, Verdict string
		}
	}
	if err := json.Unmarshal([]byte(mustRun(t, "report", "--format", "json", "--dir", dir)), &report); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range report.Readiness {
		if r.Verdict != "failing" && r.Verdict != "healthy" {
			continue
		}
		names := strings.Fields(mustRun(t, "ls", "--dir", dir, "--pane", "stranded", "--filter", "sub:"+strings.ToLower(r.Subscription)+" -is:handled", "-o", "name"))
		if len(names) == 0 {
			continue
		}
		var show struct {
			Advice   []string
			Verdicts map[string]int
		}
		if err := json.Unmarshal([]byte(mustRun(t, "show", "--json", "--dir", dir, names[0])), &show); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(show.Advice[0], "Drain it") || show.Verdicts["replay"] == 0 {
			continue // (not to be drained, or none of its events republished: its handler changes nothing for it)
		}
		warns := strings.Contains(strings.Join(show.Advice, " "), "fails now") || strings.Contains(strings.Join(show.Advice, " "), "still fails")
		if warns != (r.Verdict == "failing") {
			t.Errorf("%s is %s by the report; show of %s advises %q", r.Subscription, r.Verdict, names[0], show.Advice)
		}
		seen[r.Verdict] = true
	}
	if !seen["failing"] {
		t.Fatalf("no failing subscription with a stranded blob to drain: the test proves nothing (%+v)", report.Readiness)
	}
}
