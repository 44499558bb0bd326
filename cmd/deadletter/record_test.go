package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/output"
	"github.com/deadletter/deadletter/internal/record"
	"github.com/deadletter/deadletter/internal/session"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/azureblob"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// logOf is deadletter log -o json of args.
func logOf(t *testing.T, args ...string) output.LogJSON {
	t.Helper()
	out, errs, code := runCmd(t, append([]string{"log", "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("log: exit %d\n%s%s", code, out, errs)
	}
	var l output.LogJSON
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("log -o json: %v\n%s", err, out)
	}
	return l
}

func namesIn(t *testing.T, dir, prefix string) []string {
	t.Helper()
	var out []string
	for _, n := range strings.Split(strings.TrimSpace(mustRun(t, "ls", "--dir", dir, "-o", "name")), "\n") {
		if n != "" && (prefix == "" && rules.IsRoot(n) || prefix != "" && strings.HasPrefix(n, prefix)) {
			out = append(out, n)
		}
	}
	return out
}

// After a drain, a restore, an ack and an edit on the demo, log -o json holds four records with user, host,
// estate, blobs, ETags and outcomes; two hours of twin time later each drained blob's record says where it went.
func TestTheRecordOfADrainARestoreAnAckAndAnEdit(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "twin", "start", "--dir", dir)
	quarantined := namesIn(t, dir, "quarantine/")
	if len(quarantined) < 3 {
		t.Fatalf("the demo has %d quarantine copies", len(quarantined))
	}
	runExit(t, 0, "drain", "--dir", dir, "--yes")
	// The ETag after is the drained blob's own, as the container has it now.
	d, _ := dirstore.Open(dir)
	for _, b := range logOf(t, "--dir", dir).Records[0].Blobs {
		if bi, err := d.Stat(context.Background(), string(b.Name)); b.Outcome == "drained" && (err != nil || bi.ETag != string(b.ETagAfter)) {
			t.Fatalf("%s: recorded ETag after %s, the container says %s (%v)", b.Name, b.ETagAfter, bi.ETag, err)
		}
	}
	runCmd(t, "restore", "--dir", dir, "--yes", "--force", quarantined[0])
	mustRun(t, "ack", "--dir", dir, "--yes", "--for", "4h", quarantined[1])
	// Two hours of twin time later, each drained blob's record says where it went. (Before the edit: an edit
	// that changes events' ids is a loss in the twin's account, so its advance would fail.)
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "2h")
	for _, r := range logOf(t, "--dir", dir).Records {
		for _, b := range r.Blobs {
			if r.Action != "drain" || b.Outcome != "drained" {
				continue
			}
			if b.Now.Where != "archived" && b.Now.Where != "quarantined" || !strings.Contains(string(b.Now.Fate), string(b.Now.Name)) {
				t.Fatalf("two hours later, drained %s: %+v", b.Name, b.Now)
			}
		}
	}
	t.Setenv("EDITOR", editorScript(t, withData, ""))
	t.Setenv("VISUAL", "")
	runCmd(t, "edit", quarantined[2], "--dir", dir, "--yes", "--force")

	l := logOf(t, "--dir", dir)
	if len(l.Records) != 4 {
		t.Fatalf("%d records, want 4: %+v", len(l.Records), l.Records)
	}
	me := record.DefaultWho()
	actions := map[string]output.LogRecordJSON{}
	for _, r := range l.Records {
		actions[string(r.Action)] = r
		if string(r.Who.User) != me.User || string(r.Who.Host) != me.Host || !r.Mine || string(r.Estate.Where) != "dir:"+dir ||
			string(r.Estate.Directory) != dir || r.State == "interrupted" || r.ServiceTime == "" || len(r.Blobs) == 0 {
			t.Fatalf("record %s: %+v", r.Action, r)
		}
		for _, b := range r.Blobs {
			if b.ETag == "" || b.Outcome == "" {
				t.Fatalf("%s: blob without its ETag or outcome: %+v", r.Action, b)
			}
			if rules.Outcome(b.Outcome).Done() && b.ETagAfter == "" && r.Action != "edit" {
				t.Fatalf("%s: done without the ETag after: %+v", r.Action, b)
			}
		}
	}
	for _, a := range []string{"drain", "restore", "ack", "edit"} {
		if _, ok := actions[a]; !ok {
			t.Fatalf("no %s record: %v", a, actions)
		}
	}
	if r := actions["restore"]; r.Blobs[0].Target == "" || r.Blobs[0].ETagAfter == r.Blobs[0].ETag {
		t.Fatalf("the restore's copy: %+v", r.Blobs[0])
	}
	if r := actions["ack"]; r.Blobs[0].ETagAfter != r.Blobs[0].ETag || r.Blobs[0].Outcome != "acked" {
		t.Fatalf("an ack changes no ETag: %+v", r.Blobs[0])
	}
	drained := 0
	for _, b := range actions["drain"].Blobs {
		if b.Outcome == "drained" {
			drained++
			if b.ETagAfter == b.ETag {
				t.Fatalf("a drained blob kept its ETag: %+v", b)
			}
		}
	}
	if drained == 0 {
		t.Fatal("nothing drained")
	}

	// The words say the same.
	out := mustRun(t, "log", "--dir", dir, "--filter", "action:drain")
	if !strings.Contains(out, "replayed: archived at") || strings.Contains(out, "restore by") {
		t.Fatalf("log --filter action:drain:\n%s", out)
	}
	if out := mustRun(t, "log", "--dir", dir, "--filter", "action:ack who:"+me.User); strings.Count(out, "  ack by ") != 1 || strings.Contains(out, "drain by") {
		t.Fatalf("log --filter action:ack:\n%s", out)
	}
	if out := mustRun(t, "log", "--dir", dir, "--filter", "-who:"+me.User); !strings.Contains(out, "--filter -who:"+me.User+" matched none of the") {
		t.Fatalf("log --filter -who:me:\n%s", out)
	}
	if _, errs, code := runCmd(t, "log", "--dir", dir, "--filter", "action:drian"); code != exitError || !strings.Contains(errs, "the actions are drain, restore") {
		t.Fatalf("log --filter action:drian (a typo): exit %d\n%s", code, errs)
	}
}

// The demo after a drain of every stranded blob (25 in today's incident): report's Actions come from the record
// and list every one, though the replay took most of the drained blobs — and their drain metadata — away.
func TestReportListsEveryDrain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, "twin", "start", "--dir", dir)
	stranded := namesIn(t, dir, "")
	runExit(t, 0, "drain", "--dir", dir, "--yes")
	left := namesIn(t, dir, "")
	for _, n := range left { // what a drain of everything passes by (the crash blob): named, forced
		if out, _, _ := runCmd(t, "show", n, "--dir", dir); strings.Contains(out, "stranded") {
			runCmd(t, "drain", n, "--dir", dir, "--yes", "--force")
		}
	}
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "2h")
	out := mustRun(t, "report", "--dir", dir)
	if len(stranded) < 20 || !strings.Contains(out, fmt.Sprintf("### Drains: %d blob(s)", len(stranded))) {
		t.Fatalf("%d stranded; the report:\n%s", len(stranded), out[strings.Index(out, "## Actions"):])
	}
	for _, n := range stranded {
		if !strings.Contains(out, "| "+output.Md(n)+" |") {
			t.Fatalf("the report does not list the drain of %s", n)
		}
	}
	if !strings.Contains(out, "The record is **local only**") {
		t.Fatal("the report does not say the record is local only")
	}
	var rep struct {
		Record *struct {
			LocalOnly bool
			Actions   []struct{ Action string }
		}
	}
	if err := json.Unmarshal([]byte(mustRun(t, "report", "--dir", dir, "--format", "json")), &rep); err != nil || rep.Record == nil ||
		!rep.Record.LocalOnly || len(rep.Record.Actions) < 2 || rep.Record.Actions[0].Action != "drain" {
		t.Fatalf("report --format json's record: %v %+v", err, rep.Record)
	}
}

// A local record that cannot be written stops the action before it writes; --read-only writes no record.
func TestNoRecordNoAction(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	mustRun(t, "twin", "start", "--dir", dir)
	before := namesIn(t, dir, "")
	os.WriteFile(filepath.Join(state, "deadletter", "record"), []byte("a file where the record's folder goes"), 0o600)
	_, errs, code := runCmd(t, "drain", "--dir", dir, "--yes")
	if code == 0 || !strings.Contains(errs, "nothing was done") {
		t.Fatalf("drain with no record: exit %d\n%s", code, errs)
	}
	d, _ := dirstore.Open(dir)
	for _, n := range before {
		if bi, _ := d.Stat(context.Background(), n); bi.Metadata[rules.MetaDrainCount] != "" {
			t.Fatalf("%s was drained though its record could not be written", n)
		}
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	runCmd(t, "ack", "--dir", dir, "--yes", "--read-only", "--for", "1h", before[0])
	if l := logOf(t, "--dir", dir); len(l.Records) != 0 {
		t.Fatalf("read-only recorded %d actions", len(l.Records))
	}
}

// kill -9 after the intent: log shows the action interrupted, with what the container says of its blobs now.
func TestAnInterruptedActionIsShownSo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, "twin", "start", "--dir", dir)
	name := namesIn(t, dir, "")[0]
	local, err := record.LocalDir()
	if err != nil {
		t.Fatal(err)
	}
	r := &record.Recorder{Local: local, Who: record.DefaultWho(), Estate: record.EstateOf("", "dir:"+dir)}
	if _, err := r.Begin(context.Background(), record.ActDrain, "deadletter drain --yes", time.Now(), []record.Blob{{Name: name, ETag: `"x"`}}, ""); err != nil {
		t.Fatal(err)
	}
	l := logOf(t, "--dir", dir)
	if len(l.Records) != 1 || l.Records[0].State != "interrupted" || l.Records[0].Blobs[0].Now.Where != "here" {
		t.Fatalf("%+v", l.Records)
	}
	if out := mustRun(t, "log", "--dir", dir); !strings.Contains(out, "INTERRUPTED") || !strings.Contains(out, "stranded") {
		t.Fatalf("log:\n%s", out)
	}
	// the report counts its blob, not "no blob"
	if out := mustRun(t, "report", "--dir", dir); !strings.Contains(out, "1 with no outcome written") {
		t.Fatalf("report:\n%s", out[strings.Index(out, "## Actions"):])
	}
}

// The command a record names is its words and flags, never a flag's value (a connection string's key).
func TestARecordNamesNoFlagValue(t *testing.T) {
	t.Parallel()
	a := newFactory(stdio{})
	root := a.root()
	root.SetArgs([]string{"drain", "--connection-string", "AccountName=a;AccountKey=SECRETKEY", "--yes", "--dry-run"})
	cmd, _, _ := root.Find([]string{"drain"})
	cmd.ParseFlags([]string{"--connection-string", "AccountName=a;AccountKey=SECRETKEY", "--yes"})
	if v := via(cmd); strings.Contains(v, "SECRET") || !strings.Contains(v, "--connection-string") || !strings.HasPrefix(v, "deadletter drain") {
		t.Fatalf("via: %q", v)
	}
}

// Two operators (each its own state directory) acting on one Azurite estate with a shared audit container, 50
// actions at once (50 processes, 25 each): each sees all 50 records in log, the other's included, and the shared
// log holds every line whole — none lost, none interleaved.
func TestTwoOperatorsSeeEachOthersRecords(t *testing.T) {
	t.Parallel()
	az := storetest.Azure(t)
	cs := storetest.AzuriteConnectionString(t)
	name := az.Describe()[strings.IndexByte(az.Describe(), '/')+1:]
	var blobs []string
	for i := 0; i < 50; i++ {
		n := fmt.Sprintf("quarantine/S/2026/12/1/2/%02d.json", i)
		if _, err := az.Write(context.Background(), n, []byte(`[{"id":"1","eventType":"E","subject":"s","dataVersion":"1","data":{}}]`), store.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, n)
	}
	audit := storetest.NewName()
	bin := binary(t)
	env := func(state string) []string {
		return append(os.Environ(), "XDG_STATE_HOME="+state, "AZURE_STORAGE_ACCOUNT_CONNECTION_STRING="+cs, "DEADLETTER_CONTAINER="+name,
			"DEADLETTER_AUDIT_CONTAINER="+audit, "XDG_CONFIG_HOME="+state)
	}
	states := []string{t.TempDir(), t.TempDir()}
	c := exec.Command(bin, "audit", "init")
	c.Env = env(states[0])
	if out, err := c.CombinedOutput(); err != nil || !strings.Contains(string(out), "made") {
		t.Fatalf("audit init: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if a, err := azureblob.Open(azureblob.Options{ConnectionString: cs, Container: audit}); err == nil {
			a.DeleteContainer(context.Background())
		}
	})
	var wg sync.WaitGroup
	for i, b := range blobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := exec.Command(bin, "ack", b, "--yes", "--for", "1h")
			c.Env = env(states[i%2])
			if out, err := c.CombinedOutput(); err != nil || strings.Contains(string(out), "warning") {
				t.Errorf("ack %d: %v\n%s", i, err, out)
			}
		}()
	}
	wg.Wait()
	for i := range states {
		c := exec.Command(bin, "log", "--json")
		c.Env = env(states[i])
		out, err := c.Output()
		if err != nil {
			t.Fatalf("log %d: %v", i, err)
		}
		var l struct {
			Shared  string
			Records []struct {
				State string
				Blobs []struct{ Name string }
			}
		}
		if err := json.Unmarshal(out, &l); err != nil || len(l.Records) != 50 || !strings.Contains(l.Shared, audit) {
			t.Fatalf("operator %d's log: %v, %d records", i, err, len(l.Records))
		}
		seen := map[string]bool{}
		for _, r := range l.Records {
			if r.State != "done" {
				t.Fatalf("operator %d: a record %s", i, r.State)
			}
			seen[r.Blobs[0].Name] = true
		}
		if len(seen) != 50 {
			t.Fatalf("operator %d sees %d of the 50 acked blobs", i, len(seen))
		}
		// This operator's own log holds only its 25: the other 25 came from the shared one.
		local, _, _ := record.Read(context.Background(), record.OpenDir(filepath.Join(states[i], "deadletter", "record")))
		if len(local) != 25 {
			t.Fatalf("operator %d's local log holds %d records, want 25", i, len(local))
		}
	}
	shared, err := azureblob.Open(azureblob.Options{ConnectionString: cs, Container: name})
	if err != nil {
		t.Fatal(err)
	}
	al, _ := shared.AuditLog(audit)
	srcs, err := session.SharedRecord(al).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, src := range srcs {
		ls, bad := record.Parse(src)
		if len(bad) > 0 {
			t.Fatalf("the shared log: %v", bad[0])
		}
		lines += len(ls)
	}
	if lines != 100 {
		t.Fatalf("the shared log holds %d lines, want 100", lines)
	}
}

// A twin script change is recorded (at the twin's clock; a refused one not at all), and a hostile blob name in a
// record is escaped in log's words, never sent raw to the terminal.
func TestATwinScriptChangeAndAHostileNameAreRecorded(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "twin", "start", "--dir", dir)
	a := newFactory(stdio{in: strings.NewReader(""), out: os.Stdout, err: os.Stderr})
	a.g.dir = dir
	sp := a.g.spec("")
	c, err := session.OpenContainer(&sp)
	if err != nil {
		t.Fatal(err)
	}
	runExit(t, exitError, "twin", "script", "set", "nosuch", "down", "--dir", dir) // refused: recorded nowhere
	mustRun(t, "twin", "advance", "--by", "30m", "--dir", dir)                     // the twin's clock is not the wall's
	mustRun(t, "twin", "script", "set", "webhooks", "up", "--at", "+2h", "--dir", dir)
	var l struct {
		Records []struct{ Action, State, ServiceTime string }
	}
	if err := json.Unmarshal([]byte(mustRun(t, "log", "--dir", dir, "-o", "json")), &l); err != nil {
		t.Fatal(err)
	}
	var st struct{ Clock string }
	json.Unmarshal([]byte(mustRun(t, "twin", "status", "--dir", dir, "--json")), &st)
	clock, _ := time.Parse(time.RFC3339, st.Clock)
	if len(l.Records) != 1 || l.Records[0].Action != "twin-script" {
		t.Fatalf("the script's records: %+v", l.Records)
	}
	if at, err := time.Parse(time.RFC3339, l.Records[0].ServiceTime); err != nil || clock.Sub(at) < 0 || clock.Sub(at) > 5*time.Minute {
		t.Fatalf("the change is recorded at %s; the twin's clock is at %s", l.Records[0].ServiceTime, st.Clock)
	}
	local, _ := record.LocalDir()
	r := &record.Recorder{Local: local, Who: record.DefaultWho(), Estate: record.EstateOf("", c.Describe())}
	act, _ := r.Begin(context.Background(), record.ActDrain, "x", time.Now(), []record.Blob{{Name: "EVIL/2026/12/1/2/\x1b]0;pwned\x07.json"}}, "")
	act.End(context.Background(), time.Now(), []record.Blob{{Name: "EVIL/2026/12/1/2/\x1b]0;pwned\x07.json", Outcome: "gone"}}, nil)
	out := mustRun(t, "log", "--dir", dir)
	if !strings.Contains(out, "twin-script by") || !regexp.MustCompile(`webhooks up from \S+Z`).MatchString(out) {
		t.Fatalf("log:\n%s", out)
	}
	if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `\x1b]0;pwned\x07`) {
		t.Fatalf("a hostile name reached the terminal raw:\n%q", out)
	}
}

// A line of the record that is not one deadletter writes (cut, planted, a newer build's) is skipped and named in
// log — file and line — and the rest of the record shown; report reports the actions it could read and says the
// line it skipped. Nobody has to edit the file by hand before they can read their record again.
func TestAHostileRecordLineIsSkippedAndSaid(t *testing.T) {
	dir, files := ackedTwinRecord(t)
	f, _ := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"v":2,"id":"ee","phase":"intent","action":"drain","wall":"2026-12-02T04:00:00Z","who":{"user":"x","host":"y"},"estate":{"where":"dir:` + dir + `"},"via":"newer","blobs":[]}` + "\n")
	f.WriteString(`{"v":1,"id":"ff","phase":"intent","action":"drain","wall":"2026-12-02T04:00:00Z","who":{"user":"x","host":"y"},"estate":{"where":"dir:` + dir + `"},"via":"forged`)
	f.Close()
	out, errs, code := runCmd(t, "log", "--dir", dir)
	if code != 0 || !strings.Contains(errs, filepath.Base(files[0])+" line 3: version 2") || !strings.Contains(errs, filepath.Base(files[0])+" line 4: cut short") ||
		!strings.Contains(out, "ack by") || strings.Contains(out, "forged") || strings.Contains(out, "newer") {
		t.Fatalf("log of a record with a newer and a cut line: exit %d\n%s\n%s", code, out, errs)
	}
	var lj output.LogJSON
	if err := json.Unmarshal([]byte(mustRun(t, "log", "--dir", dir, "-o", "json")), &lj); err != nil || len(lj.Records) != 1 || len(lj.Skipped) != 2 {
		t.Fatalf("log -o json: %d records, skipped %v (%v)", len(lj.Records), lj.Skipped, err)
	}
	report := mustRun(t, "report", "--dir", dir)
	actions := report[strings.Index(report, "## Actions"):]
	if strings.Contains(report, "could not be read**, so") || !strings.Contains(actions, "2 line(s) of the record could not be read") || !strings.Contains(actions, "line 4") ||
		!strings.Contains(actions, "ack") {
		t.Fatalf("report:\n%s", actions)
	}
}

// A twin started again where one was removed is an estate of its own: the old twin's records are not its.
func TestARecordDoesNotOutliveItsTwin(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "ack", "--dir", dir, "--yes", "--for", "1h", namesIn(t, dir, "")[0])
	if out := mustRun(t, "log", "--dir", dir); !strings.Contains(out, "ack by") {
		t.Fatalf("log before:\n%s", out)
	}
	mustRun(t, "twin", "rm", "--dir", dir)
	mustRun(t, "twin", "start", "--dir", dir)
	if out := mustRun(t, "log", "--dir", dir); !strings.Contains(out, "no action recorded") {
		t.Fatalf("a new twin at the old one's path shows its records:\n%s", out)
	}
}

// A twin's records are its directory's only while that very twin is there: after twin rm, a plain directory made
// at the same path has none of them — log lists nothing, report no action (found by a fresh-eyes test: the old
// twin's script change was listed under the plain directory's Actions).
func TestARemovedTwinsRecordsStayWithIt(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "t2")
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "twin", "script", "set", "webhooks", "up", "--dir", dir)
	name := namesIn(t, dir, "")[0]
	mustRun(t, "ack", "--dir", dir, "--yes", "--for", "1h", name)
	if l := logOf(t, "--dir", dir); len(l.Records) != 2 {
		t.Fatalf("the twin's log holds %d records, want its script change and its ack", len(l.Records))
	}
	mustRun(t, "twin", "rm", "--dir", dir)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if l := logOf(t, "--dir", dir); len(l.Records) != 0 {
		t.Fatalf("a plain directory where a twin was shows %d of its records: %+v", len(l.Records), l.Records)
	}
	if out := mustRun(t, "report", "--dir", dir); strings.Contains(out, "twin-script") || strings.Contains(out, "### Acks") {
		t.Fatalf("the report of a plain directory lists the removed twin's actions:\n%s", out[strings.Index(out, "## Actions"):])
	}
}

// log --since keeps the actions begun within it (by the wall clock they were begun at), and says so when it
// keeps none; a log with no --audit-container says it is this machine's alone; an outcome whose intent line was
// rotated away is told as finished, saying its intent is gone.
func TestLogSinceLocalOnlyAndAnIntentGone(t *testing.T) {
	dir, files := ackedTwinRecord(t)
	first, _ := os.ReadFile(files[0])
	var ack struct {
		Estate json.RawMessage `json:"estate"`
	}
	if err := json.Unmarshal(first[:bytes.IndexByte(first, '\n')], &ack); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-72 * time.Hour).UTC().Format(time.RFC3339)
	line := func(id, phase, via string) string {
		return `{"v":1,"id":"` + id + `","phase":"` + phase + `","action":"drain","wall":"` + old + `","who":{"user":"x","host":"y"},"estate":` + string(ack.Estate) + `,"via":"` + via + `","blobs":[]}` + "\n"
	}
	f, _ := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(line("aa01", "intent", "three days ago") + line("aa01", "outcome", "three days ago") + line("bb02", "outcome", "its intent rotated away"))
	f.Close()

	out := mustRun(t, "log", "--dir", dir)
	if !strings.Contains(out, "local only") || !strings.Contains(out, "ack by") || !strings.Contains(out, "three days ago") ||
		strings.Count(out, "its intent line was not read") != 1 {
		t.Fatalf("log:\n%s", out)
	}
	var lj output.LogJSON
	if err := json.Unmarshal([]byte(mustRun(t, "log", "--dir", dir, "-o", "json")), &lj); err != nil || len(lj.Records) != 3 || lj.Shared != "" {
		t.Fatalf("log -o json: %d records, shared %q (%v)", len(lj.Records), lj.Shared, err)
	}
	gone := 0
	for _, r := range lj.Records {
		if r.Shared {
			t.Errorf("a local-only record said shared: %+v", r)
		}
		if r.IntentGone {
			gone++
			if r.State != "done" {
				t.Errorf("an outcome whose intent is gone reads %s", r.State)
			}
		}
	}
	if gone != 1 {
		t.Fatalf("%d records say their intent is gone, want 1", gone)
	}

	out = mustRun(t, "log", "--dir", dir, "--since", "1h")
	if !strings.Contains(out, "ack by") || strings.Contains(out, "three days ago") || strings.Contains(out, "rotated away") {
		t.Fatalf("log --since 1h:\n%s", out)
	}
	lj = output.LogJSON{}
	if err := json.Unmarshal([]byte(mustRun(t, "log", "--dir", dir, "--since", "1h", "-o", "json")), &lj); err != nil || len(lj.Records) != 1 || lj.Records[0].Action != "ack" {
		t.Fatalf("log --since 1h -o json: %+v (%v)", lj.Records, err)
	}
	if out = mustRun(t, "log", "--dir", dir, "--since", "1h", "--filter", "sub:no-such-subscription"); !strings.Contains(out, "matched none of the 3 action(s)") {
		t.Fatalf("log --since with nothing kept:\n%s", out)
	}
}

// ackedTwinRecord is a twin with one ack recorded, in a state directory of the test's own: the twin's directory
// and the record's files (one, unless the ack straddled UTC midnight). It sets XDG_STATE_HOME: not parallel.
func ackedTwinRecord(t *testing.T) (string, []string) {
	t.Helper()
	dir, state := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	mustRun(t, "twin", "start", "--dir", dir)
	mustRun(t, "ack", "--dir", dir, "--yes", "--for", "1h", namesIn(t, dir, "")[0])
	files, _ := filepath.Glob(filepath.Join(state, "deadletter", "record", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("record files %v", files)
	}
	return dir, files
}
