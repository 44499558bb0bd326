package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// get writes every byte of the hostile corpus as stored, from a directory and from Azurite, to a pipe and to a
// new 0600 file; it never writes over a file.
func TestGetWritesExactBytes(t *testing.T) {
	t.Parallel()
	corpus := hostileCorpus(t)[:15] // (the generated 50 MB and 10,000-event payloads add time, not cases)
	check := func(t *testing.T, c store.Container, args []string) {
		for i, cc := range corpus {
			name := strings.TrimSuffix(hostileNames[i%len(hostileNames)], ".json") + "-" + cc.file
			if strings.HasPrefix(name, "LONG") {
				name = longName(cc.file)
			}
			if _, err := c.Write(context.Background(), name, cc.body, store.WriteOptions{}); err != nil {
				t.Fatalf("%s: %v", cc.file, err)
			}
			out := mustRun(t, append([]string{"get", name}, args...)...)
			if !bytes.Equal([]byte(out), cc.body) {
				t.Fatalf("%s: get wrote %d bytes, the blob holds %d", cc.file, len(out), len(cc.body))
			}
		}
	}
	t.Run("dir", func(t *testing.T) {
		dir := t.TempDir()
		d, _ := dirstore.Open(dir)
		check(t, d, []string{"--dir", dir})
		// --to: a new file, the operator's only, never written over.
		name := "S/2026/1/2/3/x.json"
		d.Write(context.Background(), name, []byte("[\x1b]0;x\x07]"), store.WriteOptions{})
		to := filepath.Join(t.TempDir(), "payload.json")
		mustRun(t, "get", name, "--dir", dir, "--to", to)
		b, err := os.ReadFile(to)
		if err != nil || string(b) != "[\x1b]0;x\x07]" {
			t.Fatalf("--to: %q %v", b, err)
		}
		if fi, _ := os.Stat(to); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
			t.Fatalf("--to mode %v", fi.Mode().Perm())
		}
		if _, errs, code := runCmd(t, "get", name, "--dir", dir, "--to", to); code == 0 || !strings.Contains(errs, "not written over") {
			t.Fatalf("second --to: exit %d %s", code, errs)
		}
	})
	t.Run("azurite", func(t *testing.T) {
		cs := storetest.AzuriteConnectionString(t)
		az := storetest.Azure(t)
		check(t, az, []string{"--connection-string", cs, "--container", strings.TrimPrefix(az.Describe(), "devstoreaccount1/")})
	})
}

// On a terminal, get refuses to write raw bytes (the payload's escape sequences would reach it).
func TestGetRefusesATerminalInTmux(t *testing.T) {
	dir := t.TempDir()
	d, _ := dirstore.Open(dir)
	d.Write(context.Background(), "S/2026/1/2/3/x.json", []byte("[\x1b[2J]"), store.WriteOptions{})
	tm := newTerm(t, 100, 20, binary(t), "get", "S/2026/1/2/3/x.json", "--dir", dir)
	tm.screen("standard output is a terminal")
	if code := tm.exited(); code != 2 {
		t.Fatalf("exit %d", code)
	}
}

// editorScript is an $EDITOR that replaces the file it is given with want (and, when then is set, runs it too).
func editorScript(t *testing.T, want string, then string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the test editor is a shell script")
	}
	dir := t.TempDir()
	fixed := filepath.Join(dir, "fixed.json")
	os.WriteFile(fixed, []byte(want), 0o600)
	script := filepath.Join(dir, "editor")
	os.WriteFile(script, []byte("#!/bin/sh\ncp '"+fixed+"' \"$1\"\n"+then+"\n"), 0o700)
	return script
}

const (
	noData   = `[{"id":"ev-1","subject":"s","eventType":"ProcessPushNotification","dataVersion":"1","deadLetterReason":"MaxDeliveryAttemptsExceeded"}]`
	withData = `[{"id":"ev-1","subject":"s","eventType":"ProcessPushNotification","dataVersion":"1","data":{"k":1},"deadLetterReason":"MaxDeliveryAttemptsExceeded"}]`
)

// repairDir is a directory container with the seed's register and one malformed quarantine copy (no data).
func repairDir(t *testing.T) (dir, name string) {
	dir = t.TempDir()
	mustRun(t, "seed", "--dir", dir, "--count", "3")
	d, _ := dirstore.Open(dir)
	name = "quarantine/WEBHOOKS/2026/11/30/9/0b8c2f7e-repair.json"
	if _, err := d.Write(context.Background(), name, []byte(noData), store.WriteOptions{ContentType: "application/json"}); err != nil {
		t.Fatal(err)
	}
	return dir, name
}

// edit with an editor that adds the missing data: a root dead letter show predicts republished, and the quarantine
// copy gone only after; with an editor that leaves it broken, nothing is written (exit 3) and the edit is kept.
func TestEditFixesAMalformedPayload(t *testing.T) {
	dir, name := repairDir(t)
	t.Setenv("EDITOR", editorScript(t, withData, ""))
	t.Setenv("VISUAL", "")
	out, errs, code := runCmd(t, "edit", "0b8c2f7e-repair", "--dir", dir, "--yes", "--json")
	var r map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("edit: exit %d\n%s\n%s", code, out, errs)
	}
	written, _ := r["written"].(string)
	if r["outcome"] != "repaired" || r["retired"] != name || !strings.HasPrefix(written, "WEBHOOKS/2026/11/30/9/0b8c2f7e-repair.repaired-") || !strings.HasPrefix(r["estate"].(string), "dir:") {
		t.Fatalf("edit --json: %s", out)
	}
	if before := r["before"].(map[string]any); before["malformed"] != true {
		t.Fatalf("before: %v", before)
	}
	var s map[string]any
	json.Unmarshal([]byte(mustRun(t, "show", written, "--dir", dir, "--json")), &s)
	if pv := s["preview"].(map[string]any); len(pv["republish"].([]any)) != 1 || pv["malformed"] != false {
		t.Fatalf("show of the repaired blob: %v", pv)
	}
	d, _ := dirstore.Open(dir)
	if _, err := d.Stat(context.Background(), name); err == nil {
		t.Fatal("the quarantine copy is still there")
	}
	if b, _ := d.Read(context.Background(), written, 1<<20); string(b.Body) != withData {
		t.Fatalf("written %q", b.Body)
	}

	// An editor that leaves the payload broken: refused, nothing written, the edit kept.
	dir, name = repairDir(t)
	broken := strings.Replace(noData, "ev-1", "ev-2", 1)
	t.Setenv("EDITOR", editorScript(t, broken, ""))
	t.Chdir(t.TempDir())
	before := listNames(t, dir)
	out, errs, code = runCmd(t, "edit", name, "--dir", dir, "--yes")
	if code != 3 || !strings.Contains(errs, `field "data": missing`) || !strings.Contains(out, "refused") || !strings.Contains(out, "kept in") {
		t.Fatalf("broken edit: exit %d\n%s\n%s", code, out, errs)
	}
	if after := listNames(t, dir); after != before {
		t.Fatalf("a refused edit wrote:\n%s\n%s", before, after)
	}
	if b, err := os.ReadFile("0b8c2f7e-repair.edit.json"); err != nil || string(b) != broken {
		t.Fatalf("kept edit: %q %v", b, err)
	}
	// A dry run writes nothing, and keeps the edit too.
	fixed := strings.Replace(withData, "ev-1", "ev-3", 1)
	t.Setenv("EDITOR", editorScript(t, fixed, ""))
	if out, errs, code = runCmd(t, "edit", name, "--dir", dir, "--dry-run"); code != 0 || !strings.Contains(out, "would repair") || !strings.Contains(out, "kept in") {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, errs)
	}
	if after := listNames(t, dir); after != before {
		t.Fatal("a dry run wrote")
	}
	if b, err := os.ReadFile("0b8c2f7e-repair.edit-2.json"); err != nil || string(b) != fixed {
		t.Fatalf("kept dry-run edit: %q %v", b, err)
	}
	// An editor that changes nothing: refused as unchanged, nothing kept.
	t.Setenv("EDITOR", "true")
	if out, _, code = runCmd(t, "edit", name, "--dir", dir, "--yes"); code != 3 || !strings.Contains(out, "changes nothing") {
		t.Fatalf("unchanged: exit %d %s", code, out)
	}
	// The same broken edit under --force is written, and its preview says so rather than "refused".
	forcedDir, forcedName := repairDir(t)
	t.Setenv("EDITOR", editorScript(t, broken, ""))
	if _, errs, code = runCmd(t, "edit", forcedName, "--dir", forcedDir, "--yes", "--force"); code != 0 || strings.Contains(errs, "refused") || !strings.Contains(errs, "written anyway (--force), though: the payload is malformed") {
		t.Fatalf("forced edit: exit %d\n%s", code, errs)
	}
	// An editor that fails (or is killed) ends the edit: nothing written.
	t.Setenv("EDITOR", "false")
	if _, errs, code = runCmd(t, "edit", name, "--dir", dir, "--yes"); code == 0 || code == 3 || !strings.Contains(errs, "nothing was written") {
		t.Fatalf("failed editor: exit %d %s", code, errs)
	}
	if after := listNames(t, dir); after != before {
		t.Fatal("an edit whose editor failed wrote")
	}
	// --read-only refuses before any editor opens; not on a terminal, --yes is asked for before it opens too.
	t.Setenv("EDITOR", "false")
	if _, errs, code = runCmd(t, "edit", name, "--dir", dir, "--yes", "--read-only"); code != 2 || !strings.Contains(errs, "read-only") {
		t.Fatalf("read-only: exit %d %s", code, errs)
	}
	if _, errs, code = runCmd(t, "edit", name, "--dir", dir); code != 2 || !strings.Contains(errs, "--yes") {
		t.Fatalf("no terminal: exit %d %s", code, errs)
	}
}

func listNames(t *testing.T, dir string) string {
	t.Helper()
	d, _ := dirstore.Open(dir)
	l, err := store.ListAll(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, bi := range l.Blobs {
		b.WriteString(bi.Name + " " + bi.ETag + "\n")
	}
	return b.String()
}

// The original rewritten by someone else while the editor is open: both versions stay — the other one in the
// container, the edit in a file — and nothing is written.
func TestEditOfAChangedOriginalWritesNothing(t *testing.T) {
	dir, name := repairDir(t)
	other := strings.Replace(noData, "ev-1", "someone-else", 1)
	t.Setenv("EDITOR", editorScript(t, withData, "printf '%s' '"+other+"' > '"+filepath.Join(dir, name)+"'"))
	t.Setenv("VISUAL", "")
	t.Chdir(t.TempDir())
	out, errs, code := runCmd(t, "edit", name, "--dir", dir, "--yes", "--json")
	var r map[string]any
	json.Unmarshal([]byte(out), &r)
	if code != 3 || r["outcome"] != "changed" || r["written"] != nil || r["kept"] == nil {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	d, _ := dirstore.Open(dir)
	if b, _ := d.Read(context.Background(), name, 1<<20); string(b.Body) != other {
		t.Fatalf("the other version: %q", b.Body)
	}
	if b, _ := os.ReadFile(r["kept"].(string)); string(b) != withData {
		t.Fatalf("the edit: %q", b)
	}
	if strings.Contains(listNames(t, dir), ".repaired-") {
		t.Fatal("a repair was written")
	}
}

// resubmit: a payload fixed elsewhere, previewed with --dry-run, then written; --replaces retires the original.
func TestResubmit(t *testing.T) {
	t.Parallel()
	dir, name := repairDir(t)
	file := filepath.Join(t.TempDir(), "fix.json")
	os.WriteFile(file, []byte(withData), 0o600)
	before := listNames(t, dir)
	out, errs, code := runCmd(t, "resubmit", file, "--subscription", "webhooks", "--dir", dir, "--dry-run")
	if code != 0 || !strings.Contains(errs, "republishes 1") || !strings.Contains(out, "would repair") || listNames(t, dir) != before {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, errs)
	}
	if _, errs, code = runCmd(t, "resubmit", file, "--subscription", "webhooks", "--dir", dir, "--yes", "--read-only"); code != 2 || !strings.Contains(errs, "read-only") {
		t.Fatalf("read-only: %d %s", code, errs)
	}
	if _, errs, code = runCmd(t, "resubmit", file, "--dir", dir, "--yes"); code != 2 || !strings.Contains(errs, "--subscription") {
		t.Fatalf("no subscription: %d %s", code, errs)
	}
	broken := filepath.Join(t.TempDir(), "broken.json")
	os.WriteFile(broken, []byte(noData), 0o600)
	if out, _, code = runCmd(t, "resubmit", broken, "--subscription", "webhooks", "--dir", dir, "--yes"); code != 3 || !strings.Contains(out, "refused") {
		t.Fatalf("broken: %d %s", code, out)
	}
	// --subscription against --replaces: the replaced dead letter's subscription must be the one named (in any
	// case); another is a usage error before anything is written.
	if _, errs, code = runCmd(t, "resubmit", file, "--replaces", name, "--subscription", "push-notifications", "--dir", dir, "--yes"); code != 2 || !strings.Contains(errs, "not of --subscription") || listNames(t, dir) != before {
		t.Fatalf("--replaces a WEBHOOKS dead letter with --subscription push-notifications: exit %d\n%s", code, errs)
	}
	if _, errs, code = runCmd(t, "resubmit", file, "--replaces", name, "--subscription", "WebHooks", "--dir", dir, "--dry-run"); code != 0 {
		t.Fatalf("--replaces with its own subscription in another case: exit %d\n%s", code, errs)
	}
	out = mustRun(t, "resubmit", file, "--replaces", name, "--dir", dir, "--yes", "--json")
	var r map[string]any
	json.Unmarshal([]byte(out), &r)
	if r["outcome"] != "repaired" || r["retired"] != name || !strings.Contains(r["written"].(string), ".repaired-") {
		t.Fatalf("--replaces: %s", out)
	}
	out = mustRun(t, "resubmit", file, "--subscription", "webhooks", "--dir", dir, "--yes", "--json")
	r = nil
	json.Unmarshal([]byte(out), &r)
	if w := r["written"].(string); !strings.HasPrefix(w, "WEBHOOKS/") || !strings.Contains(w, "/resubmitted-") || r["retired"] != nil {
		t.Fatalf("resubmit: %s", out)
	}
	// a subscription the container holds no dead letter of is written (the operator may know better) with a note
	if _, errs, code := runCmd(t, "resubmit", file, "--subscription", "brand-new-sub", "--dir", dir, "--dry-run"); code != 0 || !strings.Contains(errs, "holds no dead letter of BRAND-NEW-SUB") {
		t.Fatalf("a subscription never seen: exit %d\n%s", code, errs)
	}
	if _, errs, _ := runCmd(t, "resubmit", file, "--subscription", "webhooks", "--dir", dir, "--dry-run"); strings.Contains(errs, "holds no dead letter") {
		t.Fatalf("a subscription the container holds was noted:\n%s", errs)
	}
	// The same file again (a retry): it is there already — said, nothing written, asked or recorded.
	records, names := len(logOf(t, "--dir", dir).Records), listNames(t, dir)
	if out, errs, code = runCmd(t, "resubmit", file, "--subscription", "webhooks", "--dir", dir); code != 0 || !strings.Contains(out, "nothing is written again") || !strings.Contains(errs, "already stands") {
		t.Fatalf("a retried resubmit: exit %d\n%s\n%s", code, out, errs)
	}
	if n := len(logOf(t, "--dir", dir).Records); n != records || listNames(t, dir) != names {
		t.Fatalf("a retried resubmit wrote or was recorded: %d records, were %d", n, records)
	}
}

// On a twin, the repaired blob is a BlobCreated like any other: the twin's replay republishes and archives it.
func TestEditIsRehearsedOnATwin(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	d, _ := dirstore.Open(dir)
	name := "quarantine/WEBHOOKS/2026/11/30/9/0b8c2f7e-repair.json"
	if _, err := d.Write(context.Background(), name, []byte(noData), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EDITOR", editorScript(t, withData, ""))
	t.Setenv("VISUAL", "")
	var r map[string]any
	json.Unmarshal([]byte(mustRun(t, "edit", name, "--dir", dir, "--yes", "--json")), &r)
	written, _ := r["written"].(string)
	if written == "" {
		t.Fatalf("edit: %v", r)
	}
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "10m")
	if _, err := d.Stat(context.Background(), "archived/"+written); err != nil {
		t.Fatalf("the twin's replay did not archive %s: %v\n%s", written, err, listNames(t, dir))
	}
}

// export round-trips every blob of the incident — bytes, metadata, tags, Last-Modified — into a directory that
// --dir opens as the same container; a second export writes over nothing.
func TestExportRoundTrips(t *testing.T) {
	t.Parallel()
	t.Run("dir", func(t *testing.T) {
		dir := seeded(t)
		exportRoundTrip(t, []string{"--dir", dir}, dirOf(t, dir))
	})
	t.Run("azurite", func(t *testing.T) {
		cs := storetest.AzuriteConnectionString(t)
		az := storetest.Azure(t)
		args := []string{"--connection-string", cs, "--container", strings.TrimPrefix(az.Describe(), "devstoreaccount1/")}
		mustRun(t, append([]string{"seed", "--count", "10", "--register-out", filepath.Join(t.TempDir(), "handlers.json")}, args...)...)
		exportRoundTrip(t, args, az)
	})
}

func dirOf(t *testing.T, dir string) store.Container {
	d, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func exportRoundTrip(t *testing.T, src []string, c store.Container) {
	t.Helper()
	ctx := context.Background()
	l, _ := store.ListAll(ctx, c)
	acked := l.Blobs[0].Name
	mustRun(t, append([]string{"ack", acked, "--yes", "--note", "exported"}, src...)...)
	to := filepath.Join(t.TempDir(), "export")
	var r struct {
		Written []struct{ Name string }
		Refused []struct{ Name, Error string }
	}
	json.Unmarshal([]byte(mustRun(t, append([]string{"export", "--all", "--to", to, "--json"}, src...)...)), &r)
	if len(r.Written) != len(l.Blobs) || len(r.Refused) != 0 {
		t.Fatalf("wrote %d of %d, refused %v", len(r.Written), len(l.Blobs), r.Refused)
	}
	sl, _ := store.ListAll(ctx, c)
	dl, _ := store.ListAll(ctx, dirOf(t, to))
	if len(sl.Blobs) != len(dl.Blobs) {
		t.Fatalf("%d blobs, exported %d", len(sl.Blobs), len(dl.Blobs))
	}
	for i, s := range sl.Blobs {
		d := dl.Blobs[i]
		sb, _ := c.Read(ctx, s.Name, store.MaxBlobBytes)
		db, _ := dirOf(t, to).Read(ctx, d.Name, store.MaxBlobBytes)
		if s.Name != d.Name || !bytes.Equal(sb.Body, db.Body) || !reflect.DeepEqual(lower(s.Metadata), lower(d.Metadata)) ||
			!reflect.DeepEqual(s.Tags, d.Tags) || !s.LastModified.Equal(d.LastModified) || s.ContentType != d.ContentType {
			t.Fatalf("%s differs:\n%+v\n%+v", s.Name, s, d)
		}
	}
	if !strings.Contains(mustRun(t, "show", acked, "--dir", to), "exported") {
		t.Fatal("the ack did not travel")
	}
	// Into the container itself: refused.
	if src[0] == "--dir" {
		if _, errs, code := runCmd(t, append([]string{"export", "--all", "--to", src[1]}, src...)...); code != 2 || !strings.Contains(errs, "overlap") {
			t.Fatalf("export into itself: exit %d %s", code, errs)
		}
	}
	// Again: nothing is written over.
	out, _, code := runCmd(t, append([]string{"export", "--all", "--to", to}, src...)...)
	if code != 3 || !strings.Contains(out, "never written over") || !strings.Contains(out, "0 blob(s)") {
		t.Fatalf("second export: exit %d\n%s", code, out)
	}
}

// lower is metadata with its keys folded (Azure hands metadata names back in its own case).
func lower(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out
}

// export --filter takes what the dashboard's filter shows: here, the malformed blobs of the seed.
func TestExportFilter(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	want := lsJSONOf(t, "--dir", dir, "--verdict", "malformed").Blobs
	to := filepath.Join(t.TempDir(), "malformed")
	var r struct{ Written []struct{ Name string } }
	json.Unmarshal([]byte(mustRun(t, "export", "--filter", "is:malformed", "--to", to, "--dir", dir, "--json")), &r)
	if len(want) == 0 || len(r.Written) != len(want) {
		t.Fatalf("exported %d, %d malformed", len(r.Written), len(want))
	}
	for i, b := range want {
		if r.Written[i].Name != b["name"] {
			t.Fatalf("exported %v, want %v", r.Written, want)
		}
	}
	for _, bad := range [][]string{{"--filter", "colour:red"}, {"--filter", "  "}, {"--pane", "stranded"}, {"--all", "--pane", "nowhere"}} {
		if _, errs, code := runCmd(t, append([]string{"export", "--to", to, "--dir", dir}, bad...)...); code != 2 {
			t.Errorf("%v: exit %d %s", bad, code, errs)
		}
	}
	// names none of which is a blob: said, exit 3, and no directory made for nothing
	none := filepath.Join(t.TempDir(), "none")
	for _, args := range [][]string{{}, {"--json"}} {
		out, errs, code := runCmd(t, append([]string{"export", "nosuch-blob", "--to", none, "--dir", dir}, args...)...)
		if code != 3 || !strings.Contains(out, "nosuch-blob") {
			t.Errorf("export of no blob %v: exit %d\n%s\n%s", args, code, out, errs)
		}
		if _, err := os.Lstat(none); err == nil {
			t.Fatalf("export of no blob %v made %s", args, none)
		}
	}
}

// resubmit --subscription takes only what can be an Event Grid subscription's name (3 to 64 letters, digits and
// hyphens): anything else is a usage error that says the rule, and nothing is written (.deadletter would have
// written .DEADLETTER/…, a folder export refuses).
func TestResubmitRefusesWhatIsNoSubscriptionName(t *testing.T) {
	t.Parallel()
	dir, _ := repairDir(t)
	file := filepath.Join(t.TempDir(), "fix.json")
	os.WriteFile(file, []byte(withData), 0o600)
	before := listNames(t, dir)
	for _, sub := range []string{"a b", "x\x00", "x%00", ".deadletter", "a/b", "../x", "ab", strings.Repeat("a", 65), "web_hooks", "wébhooks"} {
		_, errs, code := runCmd(t, "resubmit", file, "--subscription", sub, "--dir", dir, "--yes")
		if code != 2 || !strings.Contains(errs, "3 to 64 letters, digits and hyphens") {
			t.Errorf("--subscription %q: exit %d\n%s", sub, code, errs)
		}
	}
	if listNames(t, dir) != before {
		t.Fatal("a refused --subscription wrote a blob")
	}
	if _, errs, code := runCmd(t, "resubmit", file, "--subscription", "web-hooks-2", "--dir", dir, "--dry-run"); code == 2 {
		t.Fatalf("a valid name refused: %s", errs)
	}
}

// A repair retried after it landed and retired its original — by the original's GUID or full name, forced or
// not — finds its own blob: nothing is written, retired or recorded, exit 0; never a repair of the repair.
func TestARepairRetriedAfterItLandedWritesNothing(t *testing.T) {
	dir, name := repairDir(t)
	file := filepath.Join(t.TempDir(), "fix.json")
	os.WriteFile(file, []byte(withData), 0o600)
	var r map[string]any
	json.Unmarshal([]byte(mustRun(t, "resubmit", file, "--replaces", name, "--dir", dir, "--yes", "--json")), &r)
	written, _ := r["written"].(string)
	if r["outcome"] != "repaired" || r["retired"] != name || written == "" {
		t.Fatalf("the first resubmit: %v", r)
	}
	records, names := len(logOf(t, "--dir", dir).Records), listNames(t, dir)
	guid := strings.SplitN(filepath.Base(name), "-", 2)[0]
	for _, args := range [][]string{{"--replaces", guid}, {"--replaces", guid, "--force"}, {"--replaces", name}, {"--replaces", name, "--force"}} {
		out, errs, code := runCmd(t, append([]string{"resubmit", file, "--dir", dir, "--yes", "--json"}, args...)...)
		r = nil
		json.Unmarshal([]byte(out), &r)
		if code != 0 || r["alreadyThere"] != written || r["written"] != nil || r["retired"] != nil {
			t.Fatalf("retried %v: exit %d\n%s\n%s", args, code, out, errs)
		}
	}
	// edit of it, by the original's name, leaving the bytes as they are: the same
	t.Setenv("EDITOR", editorScript(t, withData, ""))
	t.Setenv("VISUAL", "")
	if out, errs, code := runCmd(t, "edit", name, "--dir", dir, "--yes", "--force"); code != 0 || !strings.Contains(out, "already there") {
		t.Fatalf("edit retried: exit %d\n%s\n%s", code, out, errs)
	}
	if n := len(logOf(t, "--dir", dir).Records); n != records || listNames(t, dir) != names {
		t.Fatalf("a retry wrote or was recorded: %d records, were %d\n%s", n, records, listNames(t, dir))
	}
	// Once the replay took the repair (archived, its marks kept), repairing the original again — the same payload
	// or another — would send its events again: refused, nothing written.
	ctx := context.Background()
	d, _ := dirstore.Open(dir)
	b, err := d.Read(ctx, written, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write(ctx, "archived/"+written, b.Body, store.WriteOptions{ContentType: "application/json", Metadata: b.Metadata}); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, written, b.ETag); err != nil {
		t.Fatal(err)
	}
	names = listNames(t, dir)
	other := filepath.Join(t.TempDir(), "other.json")
	os.WriteFile(other, []byte(strings.Replace(withData, "ev-1", "ev-9", 1)), 0o600)
	for _, f := range []string{file, other} {
		if _, errs, code := runCmd(t, "resubmit", f, "--replaces", name, "--dir", dir, "--yes", "--force"); code != 3 || !strings.Contains(errs, "the replay has handled that repair since") {
			t.Fatalf("a repair of a replayed repair: exit %d\n%s", code, errs)
		}
	}
	if listNames(t, dir) != names {
		t.Fatal("a repair of a replayed repair wrote")
	}
}

// A refused repair's result says every reason its preview did — a script reading the JSON's error sees "its events
// would go twice" as well as "changes nothing".
func TestARefusedRepairSaysEveryReason(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	live := lsJSONOf(t, "--dir", dir, "--pane", "live").Blobs
	if len(live) == 0 {
		t.Fatal("the seed has no live blob")
	}
	name := live[0]["name"].(string)
	file := filepath.Join(t.TempDir(), "same.json")
	os.WriteFile(file, []byte(mustRun(t, "get", name, "--dir", dir)), 0o600)
	out, _, code := runCmd(t, "resubmit", file, "--replaces", name, "--dir", dir, "--yes")
	if code != 3 || !strings.Contains(out, "changes nothing") || !strings.Contains(out, "would go twice") {
		t.Fatalf("text: exit %d\n%s", code, out)
	}
	out, _, _ = runCmd(t, "resubmit", file, "--replaces", name, "--dir", dir, "--yes", "--json")
	var r map[string]any
	json.Unmarshal([]byte(out), &r)
	if e, _ := r["error"].(string); !strings.Contains(e, "changes nothing") || !strings.Contains(e, "would go twice") {
		t.Fatalf("JSON error: %q", e)
	}
}

// The advice to fix a malformed payload says, before anything is edited, what the repair will be refused for:
// a WEBHOOKS event (not idempotent) stays quarantined whatever the fix — and the repair is then refused for that.
func TestAdviceSaysARepairWillBeRefusedBeforeTheEdit(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "seed", "--dir", dir, "--count", "3")
	d, _ := dirstore.Open(dir)
	name := "WEBHOOKS/2026/11/30/9/0b8c2f7e-webhook.json"
	broken := strings.ReplaceAll(noData, "ProcessPushNotification", "ProcessWebhook")
	if _, err := d.Write(context.Background(), name, []byte(broken), store.WriteOptions{ContentType: "application/json"}); err != nil {
		t.Fatal(err)
	}
	d.Backdate(context.Background(), name, time.Now().Add(-3*time.Hour))
	var s struct{ Advice []string }
	if err := json.Unmarshal([]byte(mustRun(t, "show", name, "--dir", dir, "--json")), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Advice) == 0 || !strings.Contains(s.Advice[0], "no fix replays it") || !strings.Contains(s.Advice[0], "notIdempotent") {
		t.Fatalf("the advice does not say the repair is refused: %q", s.Advice)
	}
	fixed := strings.ReplaceAll(withData, "ProcessPushNotification", "ProcessWebhook")
	t.Setenv("EDITOR", editorScript(t, fixed, ""))
	t.Setenv("VISUAL", "")
	t.Chdir(t.TempDir())
	if out, errs, code := runCmd(t, "edit", name, "--dir", dir, "--yes"); code != 3 || !strings.Contains(out+errs, "notIdempotent") {
		t.Fatalf("the repair the advice warned of: exit %d\n%s\n%s", code, out, errs)
	}
}
