package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// view add writes the file as context use does — every other byte as written, comments and all — and a view it
// saved drives --view on the commands exactly as the same words on --filter; rm takes it out again, leaving the
// file as it was.
func TestASavedViewDrivesTheCommandsAsItsFilterDoes(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	body := "# on call: keep this comment\r\ncurrent-context: dev\r\ncontexts:\r\n  - name: dev   # the demo's\r\n    dir: " + dir + "\r\n  - name: prod\r\n    dir: " + t.TempDir() + "\r\n"
	cfg := writeConfig(t, body)
	os.Chmod(cfg, 0o600)
	mustRun(t, "view", "add", "stranded-webhooks", "--filter", "sub:=WEBHOOKS is:root", "--config", cfg)
	mustRun(t, "view", "add", "mine", "--filter", "type:ProcessPushNotification", "--sort", "events desc", "--this-context", "--config", cfg)
	after, _ := os.ReadFile(cfg)
	if !strings.HasPrefix(string(after), body) || strings.Count(string(after), "\r\n") != strings.Count(string(after), "\n") {
		t.Fatalf("view add rewrote what it did not add, or mixed line endings:\n%q", after)
	}
	runExit(t, 2, "view", "add", "stranded-webhooks", "--filter", "is:root", "--config", cfg) // saved already
	runExit(t, 2, "view", "add", "bad", "--filter", "sub:", "--config", cfg)                  // a filter that does not parse

	var list struct {
		Views []struct{ Name, Filter, Sort, Context string }
	}
	if err := json.Unmarshal([]byte(mustRun(t, "view", "list", "--json", "--config", cfg)), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Views) != 2 || list.Views[0].Name != "mine" || list.Views[0].Context != "dev" || list.Views[0].Sort != "events desc" {
		t.Errorf("view list in dev: %+v", list.Views)
	}
	if out := mustRun(t, "view", "list", "--context", "prod", "--config", cfg); strings.Contains(out, "mine") || !strings.Contains(out, "stranded-webhooks") {
		t.Errorf("prod sees dev's own view, or not the shared one:\n%s", out)
	}
	for _, args := range [][]string{{"drain", "--dry-run", "--json"}, {"ls", "--json"}, {"restore", "--all", "--dry-run", "--json"}} {
		viewed := mustRun(t, append(args, "--view", "stranded-webhooks", "--config", cfg)...)
		filtered := mustRun(t, append(args, "--filter", "sub:=WEBHOOKS is:root", "--config", cfg)...)
		if names(t, viewed) == nil || !maps.Equal(names(t, viewed), names(t, filtered)) {
			t.Errorf("%v --view differs from --filter:\n%s\n%s", args, viewed, filtered)
		}
	}
	// --view and --filter together: both words hold.
	both := names(t, mustRun(t, "ls", "--json", "--view", "stranded-webhooks", "--filter", "reason:ttl", "--config", cfg))
	for n := range both {
		if !strings.HasPrefix(n, "WEBHOOKS/") {
			t.Errorf("%s listed under --view stranded-webhooks", n)
		}
	}
	if _, errs, code := runCmd(t, "ls", "--view", "nope", "--config", cfg); code != 2 || !strings.Contains(errs, "have: mine, stranded-webhooks") {
		t.Errorf("--view nope: exit %d, %s", code, errs)
	}
	mustRun(t, "view", "rm", "mine", "--config", cfg)
	mustRun(t, "view", "rm", "stranded-webhooks", "--config", cfg)
	final, _ := os.ReadFile(cfg)
	if got := strings.TrimSuffix(string(final), "views:\r\n"); got != body {
		t.Errorf("after rm the file is not as it was:\n%q\nwant\n%q", final, body)
	}
}

// A view that is wrong stops only what uses a view: the other commands run.
func TestABadViewStopsOnlyWhatUsesIt(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	cfg := writeConfig(t, "contexts:\n  - name: dev\n    dir: "+dir+"\ncurrent-context: dev\nviews:\n  - name: x\n    filter: \"is:bogus\"\n")
	os.Chmod(cfg, 0o600)
	mustRun(t, "ls", "--config", cfg, "-o", "name")
	if _, errs, code := runCmd(t, "ls", "--view", "x", "--config", cfg); code == 0 || !strings.Contains(errs, filepath.Base(cfg)+":6") {
		t.Errorf("a bad view: exit %d, %s (want its line)", code, errs)
	}
	// A hand-written sort of a column the dashboard cannot sort by is refused as the file is read — as view add
	// refuses it — never kept for the dashboard to announce and not do.
	withSort := func(sort string) string {
		cfg := writeConfig(t, "contexts:\n  - name: dev\n    dir: "+dir+"\ncurrent-context: dev\nviews:\n  - name: x\n    filter: \"is:root\"\n    sort: "+sort+"\n")
		os.Chmod(cfg, 0o600)
		return cfg
	}
	for _, sort := range []string{"size desc", "bytes", "events sideways"} {
		if _, errs, code := runCmd(t, "ls", "--view", "x", "--config", withSort(sort)); code == 0 || !strings.Contains(errs, "sort: view \"x\": want one of") {
			t.Errorf("sort %q: exit %d, %s", sort, code, errs)
		}
	}
	for _, sort := range []string{"events desc", "Age", "deletesIn asc"} {
		if _, errs, code := runCmd(t, "ls", "--view", "x", "--config", withSort(sort), "-o", "name"); code != 0 {
			t.Errorf("sort %q: exit %d, %s", sort, code, errs)
		}
	}
}

// names are the blob names of an ls or an action's JSON.
func names(t *testing.T, out string) map[string]bool {
	t.Helper()
	var doc struct {
		Blobs   []struct{ Name string }
		Results []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	m := map[string]bool{}
	for _, b := range append(doc.Blobs, doc.Results...) {
		m[b.Name] = true
	}
	return m
}
