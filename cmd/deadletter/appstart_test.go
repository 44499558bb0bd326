package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/internal/output"
)

// drain --dry-run says what the estate's own drain at a worker start would take — the stranded blobs the drain
// takes too, and the handled and crash blobs the drain leaves but the start would re-upload — and show advises
// the restart beside the drain, and warns where the start would repeat work.
func TestDrainSaysWhatAWorkerStartWouldTake(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	var res output.ResultsJSON
	if err := json.Unmarshal([]byte(mustRun(t, "drain", "--dry-run", "--json", "--dir", dir)), &res); err != nil {
		t.Fatal(err)
	}
	a := res.AppStart
	if a == nil {
		t.Fatal("no appStart in the drain's JSON")
	}
	by := map[string][]string{}
	for _, r := range res.Results {
		by[string(r.Outcome)] = append(by[string(r.Outcome)], string(r.Name))
	}
	names := func(ts []output.Text) []string {
		var out []string
		for _, n := range ts {
			out = append(out, string(n))
		}
		slices.Sort(out)
		return out
	}
	slices.Sort(by["handled"])
	slices.Sort(by["crash"])
	if a.Stranded != len(by["wouldDrain"]) || !slices.Equal(names(a.Handled), by["handled"]) || !slices.Equal(names(a.Crash), by["crash"]) {
		t.Errorf("appStart %+v, the drain: %d to drain, handled %v, crash %v", a, len(by["wouldDrain"]), by["handled"], by["crash"])
	}
	if len(a.Handled) == 0 || len(a.Crash) == 0 || !a.Repeats || a.Takes != a.Stranded+len(a.Handled)+len(a.Crash)+a.Untriggerable {
		t.Errorf("the seed holds handled and crash blobs the start would repeat: %+v", a)
	}
	// check, report and the drain say one start: the same counts.
	var chk output.CheckJSON
	json.Unmarshal([]byte(runAny(t, "check", "--json", "--dir", dir)), &chk)
	var rep output.ReportJSON
	json.Unmarshal([]byte(mustRun(t, "report", "--format", "json", "--dir", dir)), &rep)
	want := output.AppStartCountsJSON{Takes: a.Takes, Stranded: a.Stranded, Handled: len(a.Handled), HandledEvents: a.HandledEvents, Crash: len(a.Crash),
		Untriggerable: a.Untriggerable, Repeats: a.Repeats}
	if chk.AppStart != want || rep.AppStart != want {
		t.Errorf("check's start %+v, report's %+v; the drain's %+v", chk.AppStart, rep.AppStart, want)
	}
	if f := findingOf(chk, "appStartRepeats"); f == nil || f.Count != len(a.Handled) {
		t.Errorf("appStartRepeats %+v, want the %d handled blob(s) the start would take", f, len(a.Handled))
	}
	_, errs, _ := runCmd(t, "drain", "--dry-run", "--dir", dir)
	for _, want := range []string{"Or restart the Function App", "a second time", "make the replay throw on 1 crash blob(s) (THREAD-REPLIES) again"} {
		if !strings.Contains(errs, want) {
			t.Errorf("the drain's question lacks %q:\n%s", want, errs)
		}
	}
	for name, want := range map[string]string{
		by["wouldDrain"][0]: "every worker start re-uploads stranded blobs like this one by itself",
		by["handled"][0]:    "would re-upload it all the same and republish its events a second time",
		by["crash"][0]:      "the replay throws again at every start",
	} {
		if out := mustRun(t, "show", name, "--dir", dir); !strings.Contains(out, want) {
			t.Errorf("show %s lacks %q:\n%s", name, want, out)
		}
	}
}

// Words about the TTL come from the configuration in force: with --ttl 5s the drain's question never says the
// container's witness is an hour behind.
func TestTheDrainSpeaksOfTheTTLInForce(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	_, errs, _ := runCmd(t, "drain", "--dry-run", "--ttl", "5s", "--dir", dir)
	if !strings.Contains(errs, "at its first retry due past the TTL (5s), and five minutes after that — so it is at least 5s behind") || strings.Contains(errs, "an hour") {
		t.Errorf("the question with --ttl 5s:\n%s", errs)
	}
}

// check and report advise a crash blob as show does: fix it with edit — not "copy them out and fix them by hand"
// beside show's "fix its payload with deadletter edit".
func TestCheckAdvisesACrashBlobAsShowDoes(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	var rep struct {
		Findings []struct {
			Kind    string
			Message string
			Names   []string
		}
	}
	out, _, _ := runCmd(t, "check", "--json", "--dir", dir)
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Kind != "crash" {
			continue
		}
		show := mustRun(t, "show", f.Names[0], "--dir", dir)
		if !strings.Contains(f.Message, "deadletter edit") || !strings.Contains(show, "deadletter edit") || strings.Contains(f.Message, "by hand") {
			t.Errorf("check says %q; show says:\n%s", f.Message, show)
		}
		return
	}
	t.Fatal("the seed raised no crash finding: the test sees nothing")
}

// --config wins over DEADLETTER_CONFIG, which wins over the default place: each names a different current context,
// and ls lists the blobs of the one that should win.
func TestTheConfigFlagWinsOverTheEnvironment(t *testing.T) {
	flagDir, envDir := seeded(t), t.TempDir()
	flagCfg := writeConfig(t, "current-context: by-flag\ncontexts:\n  - name: by-flag\n    dir: "+flagDir+"\n")
	envCfg := writeConfig(t, "current-context: by-env\ncontexts:\n  - name: by-env\n    dir: "+envDir+"\n")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("DEADLETTER_CONFIG", envCfg)
	if out := mustRun(t, "context", "list"); !strings.Contains(out, "by-env") || strings.Contains(out, "by-flag") {
		t.Errorf("with DEADLETTER_CONFIG: %s", out)
	}
	if out := mustRun(t, "context", "list", "--config", flagCfg); !strings.Contains(out, "by-flag") || strings.Contains(out, "by-env") {
		t.Errorf("--config beside DEADLETTER_CONFIG: %s", out)
	}
	if out := mustRun(t, "ls", "--config", flagCfg); !strings.Contains(out, "stranded") {
		t.Errorf("ls --config listed nothing of the flag's context:\n%s", out)
	}
	t.Setenv("DEADLETTER_CONFIG", filepath.Join(t.TempDir(), "missing.yaml"))
	if _, errs, code := runCmd(t, "context", "list"); code != 2 || !strings.Contains(errs, "missing.yaml") {
		t.Errorf("a DEADLETTER_CONFIG that names no file: exit %d %s", code, errs)
	}
}

func findingOf(c output.CheckJSON, kind string) *output.FindingJSON {
	for i := range c.Findings {
		if string(c.Findings[i].Kind) == kind {
			return &c.Findings[i]
		}
	}
	return nil
}
