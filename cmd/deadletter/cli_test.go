package main

import (
	"context"
	"encoding/json"
	"maps"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/present"
	"github.com/deadletter/deadletter/internal/scenario"
	"github.com/deadletter/deadletter/replay"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// Durations take days everywhere, and what the tool prints parses back.
func TestDaysInDurations(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	for _, d := range []string{"3d", "1d12h", "90m", "3d0h", "720h"} {
		if _, errs, code := runCmd(t, "check", "--dir", dir, "--expiring-within", d); code == 2 {
			t.Fatalf("--expiring-within %s refused: %s", d, errs)
		}
	}
	out, _, _ := runCmd(t, "check", "--dir", dir, "--expiring-within", "3d")
	if !strings.Contains(out, "within 3d ") {
		t.Fatalf("check says %q", out)
	}
	if _, _, code := runCmd(t, "ls", "--dir", dir, "--older-than", "1d12h", "--ttl", "45m", "--retention", "30d"); code != 0 {
		t.Fatal("days in --older-than, --ttl, --retention")
	}
	for _, bad := range [][]string{{"--expiring-within", "-3d"}, {"--ttl", "soon"}, {"--concurrency", "-1"}, {"--max-quarantine", "-2"}} {
		args := append([]string{"check", "--dir", dir}, bad...)
		if bad[0] == "--concurrency" {
			args = append([]string{"drain", "--dir", dir, "--yes"}, bad...)
		}
		if _, errs, code := runCmd(t, args...); code != 2 || !strings.Contains(errs, strings.TrimPrefix(bad[0], "--")) {
			t.Errorf("%v: exit %d %q", bad, code, errs)
		}
	}
	if _, errs, code := runCmd(t, "seed", "--dir", t.TempDir(), "--count", "-1"); code != 2 || !strings.Contains(errs, "count") {
		t.Errorf("--count -1: %d %s", code, errs)
	}
}

func TestVersionHelpAndCompletion(t *testing.T) {
	t.Parallel()
	if out := mustRun(t, "--version"); !strings.Contains(out, "deadletter version") {
		t.Fatalf("--version: %q", out)
	}
	for _, cmd := range []string{"ls", "show", "get", "edit", "resubmit", "export", "drain", "restore", "ack", "check", "watch", "report", "seed", "demo", "completion"} {
		if out := mustRun(t, cmd, "-h"); !strings.Contains(out, "Usage:") {
			t.Errorf("%s -h: %q", cmd, out)
		}
	}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		if out := mustRun(t, "completion", sh); len(out) < 200 {
			t.Errorf("completion %s: %d bytes", sh, len(out))
		}
	}
	// Blob names complete from the container by what was typed (as a shell completes: its start); restore
	// offers quarantine blobs only.
	dir := seeded(t)
	out := mustRun(t, "__complete", "show", "--dir", dir, "WEBHOOKS")
	if !strings.Contains(out, "WEBHOOKS/2026/") || strings.Contains(out, "quarantine/WEBHOOKS/") {
		t.Fatalf("show completion: %q", out)
	}
	out = mustRun(t, "__complete", "restore", "--dir", dir, "")
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "quarantine/") && !strings.HasPrefix(l, ":") {
			t.Fatalf("restore completion offers %q", l)
		}
	}
	// Flags anywhere, --flag=value.
	mustRun(t, "ls", "--pane=stranded", "--dir="+dir)
	mustRun(t, "--dir", dir, "ls", "--json")
}

// show, drain, restore and ack take a full name, the blob's URL, its GUID or any unique fragment; an ambiguous
// fragment lists the candidates and exits 2; no match suggests the closest names.
func TestNamesFromFragments(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	// A quarantine blob whose GUID is its own (the seed also leaves a handled original beside its copy).
	all := mustRun(t, "ls", "--dir", dir, "-o", "name")
	var name, guid string
	for _, b := range lsJSONOf(t, "--dir", dir, "--pane", "quarantine").Blobs {
		n := b["name"].(string)
		g := strings.TrimSuffix(n[strings.LastIndex(n, "/")+1:], ".json")
		if strings.Count(all, g) == 1 && strings.Count(all, g[:8]) == 1 {
			name, guid = n, g
			break
		}
	}
	for _, arg := range []string{name, guid, guid[:8], "https://acct.blob.core.windows.net/deadletter/" + name, "http://127.0.0.1:10000/devstoreaccount1/deadletter/" + name} {
		var s map[string]any
		out, errs, code := runCmd(t, "show", arg, "--dir", dir, "--json")
		if code != 0 || json.Unmarshal([]byte(out), &s) != nil || s["name"] != name {
			t.Fatalf("show %q: exit %d %s", arg, code, errs)
		}
	}
	_, errs, code := runCmd(t, "show", "WEBHOOKS", "--dir", dir)
	if code != 2 || !strings.Contains(errs, `"WEBHOOKS" matches `) || strings.Count(errs, "\n  WEBHOOKS/") < 2 || strings.Contains(errs, `\n`) {
		t.Fatalf("ambiguous: %d %s", code, errs)
	}
	// Past ten candidates, how many more.
	_, errs, _ = runCmd(t, "show", "2026", "--dir", dir)
	if !strings.Contains(errs, "… and ") || !strings.Contains(errs, "more") {
		t.Fatalf("ambiguous past ten: %s", errs)
	}
	_, errs, code = runCmd(t, "show", guid[:8]+"x", "--dir", dir)
	if code != 2 || !strings.Contains(errs, "no blob matches") || !strings.Contains(errs, "\n  "+name) {
		t.Fatalf("no match, closest: %d %s", code, errs)
	}
	// restore by GUID: the quarantine copy of that GUID, even though the GUID is a fragment of nothing else.
	out, _, code := runCmd(t, "restore", guid[:8], "--dir", dir, "--yes", "--json", "--force")
	if code != 0 || !strings.Contains(out, name) {
		t.Fatalf("restore by GUID: %d %s", code, out)
	}
	// A name that does not exist: notFound, exit 3 (nothing failed, not everything was done), for drain and
	// restore alike.
	for _, cmd := range [][]string{{"drain", "NOPE/2026/1/1/1/none.json"}, {"restore", "quarantine/NOPE/none.json"}} {
		out, _, code := runCmd(t, append(cmd, "--dir", dir, "--yes", "--json")...)
		if code != 3 || !strings.Contains(out, `"notFound"`) {
			t.Errorf("%v: exit %d %s", cmd, code, out)
		}
	}
}

// ls: urgency order (expiring first, then pane, then age), ! marks, human sizes, -o name and wide, filters.
func TestLsForAPerson(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	out := mustRun(t, "ls", "--dir", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "PANE") || !strings.Contains(lines[1], "!") || !strings.Contains(lines[2], "!") {
		t.Fatalf("the two expiring blobs come first, marked:\n%s", strings.Join(lines[:4], "\n"))
	}
	if !regexp.MustCompile(`\d+\.\d KiB`).MatchString(out) || regexp.MustCompile(`\d{5,} bytes`).MatchString(out) {
		t.Fatalf("sizes are not human-readable:\n%s", lines[1])
	}
	var order []string
	for _, l := range lines[3:] {
		order = append(order, strings.Fields(l)[0])
	}
	rank := map[string]int{"stranded": 0, "quarantine": 1, "live": 2, "archived": 3}
	for i := 1; i < len(order); i++ {
		if rank[order[i]] < rank[order[i-1]] {
			t.Fatalf("pane order broken at %d: %v", i, order)
		}
	}
	names := strings.Split(strings.TrimSpace(mustRun(t, "ls", "--dir", dir, "-o", "name", "--pane", "quarantine")), "\n")
	if len(names) != len(lsJSONOf(t, "--dir", dir, "--pane", "quarantine").Blobs) || !strings.HasPrefix(names[0], "quarantine/") {
		t.Fatalf("-o name: %v", names)
	}
	if n := len(lsJSONOf(t, "--dir", dir, "--subscription", "webhooks").Blobs); n == 0 {
		t.Fatal("--subscription")
	}
	for _, b := range lsJSONOf(t, "--dir", dir, "--verdict", "cap").Blobs {
		if b["verdicts"].(map[string]any)["cap"] == nil {
			t.Fatalf("--verdict cap kept %v", b["name"])
		}
	}
	for _, b := range lsJSONOf(t, "--dir", dir, "--older-than", "2d").Blobs {
		if b["ageSeconds"].(float64) < 2*86400 {
			t.Fatalf("--older-than 2d kept %v", b["name"])
		}
	}
	wide := mustRun(t, "ls", "--dir", dir, "-o", "wide")
	if !strings.Contains(wide, "REASON / OUTCOME") || !strings.Contains(wide, "UndeliverableDueToProbationCausedByClientError") {
		t.Fatal("-o wide cuts nothing")
	}
	// --jsonl: one object per line, the same blobs as --json.
	jl := strings.Split(strings.TrimSpace(mustRun(t, "ls", "--dir", dir, "--jsonl")), "\n")
	if len(jl) != len(lsJSONOf(t, "--dir", dir).Blobs) {
		t.Fatalf("--jsonl %d lines", len(jl))
	}
	for _, l := range jl {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil || m["name"] == nil {
			t.Fatalf("--jsonl line %q", l)
		}
	}
}

// restore --all restores every quarantine blob with something to resume, after one confirmation, and lists
// the refused ones.
func TestRestoreAll(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	before := len(lsJSONOf(t, "--dir", dir, "--pane", "quarantine").Blobs)
	out, errs, code := runCmd(t, "restore", "--all", "--dir", dir, "--yes", "--json")
	if code != 3 { // the refused ones are not restored
		t.Fatalf("exit %d %s", code, errs)
	}
	var res struct {
		Results []struct{ Name, Outcome string }
	}
	json.Unmarshal([]byte(out), &res)
	got := map[string]int{}
	for _, r := range res.Results {
		got[r.Outcome]++
	}
	// Every quarantine blob has a result: restored, or refused (nothing resumes) and left where it is.
	if got["restored"] == 0 || got["refused"] == 0 || got["restored"]+got["refused"] != before || len(got) != 2 {
		t.Fatalf("outcomes %v of %d blobs", got, before)
	}
	if !strings.Contains(errs, "are refused or unreadable and left where they are") || !strings.Contains(errs, "event(s) resume") {
		t.Fatalf("the summary: %s", errs)
	}
	// Said once: nobody was asked (--yes), so each refusal is in the results alone, with the same hint.
	if strings.Contains(errs, "notIdempotent") || strings.Contains(errs, "unroutable)") {
		t.Fatalf("the refusals are said twice:\n%s", errs)
	}
	text, _, _ := runCmd(t, "restore", "--all", "--dry-run", "--dir", dir)
	if strings.Contains(text, "--force does it anyway") {
		t.Fatalf("--all takes no --force, yet the results offer it:\n%s", text)
	}
	if left := len(lsJSONOf(t, "--dir", dir, "--pane", "quarantine").Blobs); left != got["refused"] {
		t.Fatalf("%d left, want the %d refused", left, got["refused"])
	}
	if _, errs, code := runCmd(t, "restore", "--all", "x", "--dir", dir); code != 2 || !strings.Contains(errs, "not both") {
		t.Fatalf("names and --all: %d %s", code, errs)
	}
}

// The question before a drain counts the blobs it will re-upload, not the names it was given: a live blob and a
// quarantine copy named beside a stranded one are left alone and are not counted. A blob named twice is acted on
// and reported once.
func TestActionsCountWhatTheyTouch(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	first := func(pane string) string {
		t.Helper()
		for _, b := range lsJSONOf(t, "--dir", dir, "--pane", pane).Blobs {
			if h, _ := b["handled"].(bool); !h {
				return b["name"].(string)
			}
		}
		t.Fatalf("no %s blob", pane)
		return ""
	}
	stranded, live, quarantined := first("stranded"), first("live"), first("quarantine")
	out, errs, code := runCmd(t, "drain", "--dir", dir, "--dry-run", "--yes", stranded, live, quarantined)
	if code != 3 || !strings.Contains(errs, "1 blob(s) to drain") || !strings.Contains(errs, "2 more blob(s) are not stranded") {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if !strings.Contains(out, "1 would drain, 1 young, 1 excluded") {
		t.Fatalf("the dry run: %s", out)
	}
	guid := path.Base(strings.TrimSuffix(quarantined, ".json"))
	out, errs, code = runCmd(t, "restore", "--dir", dir, "--yes", "--force", "--json", guid, quarantined)
	var res struct {
		Results []struct{ Name, Outcome string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || len(res.Results) != 1 || res.Results[0].Outcome != "restored" {
		t.Fatalf("exit %d %v %s %s", code, err, out, errs)
	}
}

// check names the blobs behind each finding: the first ten, then how many more.
func TestCheckNamesTheBlobs(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	m, code := checkJSONOf(t, "--dir", dir)
	if code != 1 {
		t.Fatal(code)
	}
	for _, f := range m["findings"].([]any) {
		fm := f.(map[string]any)
		names := fm["names"].([]any)
		if len(names) == 0 || len(names) > 10 || len(names)+int(fm["more"].(float64)) != int(fm["count"].(float64)) {
			t.Fatalf("finding %v names %d of %v (+%v)", fm["kind"], len(names), fm["count"], fm["more"])
		}
	}
	out, _, _ := runCmd(t, "check", "--dir", dir)
	if !strings.Contains(out, "… and ") || !strings.Contains(out, "/2026/") {
		t.Fatalf("check text names blobs:\n%s", out)
	}
}

// --timeout: an endpoint that accepts connections and never answers is reported as could-not-check within the
// deadline, not after five one-minute tries.
func TestTimeoutOnABlackHole(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // accept, read nothing, answer nothing
		}
	}()
	cs := "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=" + strings.Repeat("QUJD", 16) + ";BlobEndpoint=http://" + l.Addr().String() + "/acct;"
	start := time.Now()
	out, errs, code := runCmd(t, "check", "--json", "--connection-string", cs, "--timeout", "3s")
	took := time.Since(start)
	var m map[string]any
	if code != 2 || json.Unmarshal([]byte(out), &m) != nil || m["healthy"] != false || !strings.Contains(errs, "--timeout") {
		t.Fatalf("exit %d out %s errs %s", code, out, errs)
	}
	if took > 10*time.Second {
		t.Fatalf("a 3s --timeout took %s", took)
	}
}

// Azurite on any port: UseDevelopmentStorage=true with DevelopmentStorageProxyUri; a refused development
// storage asks whether Azurite is running.
func TestDevelopmentStorageOnAnyPort(t *testing.T) {
	t.Parallel()
	az := storetest.AzuriteConnectionString(t)
	m := regexp.MustCompile(`BlobEndpoint=(http://[^/;]+)`).FindStringSubmatch(az)
	if m == nil {
		t.Fatalf("no endpoint in %q", az)
	}
	c := storetest.NewName()
	cs := "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=" + m[1]
	mustRun(t, "seed", "--connection-string", cs, "--container", c, "--count", "2", "--register-out", filepath.Join(t.TempDir(), "h.json"))
	if n := len(lsJSONOf(t, "--connection-string", cs, "--container", c).Blobs); n == 0 {
		t.Fatal("nothing listed through the proxy URI")
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := l.Addr().String()
	l.Close()
	_, errs, code := runCmd(t, "ls", "--connection-string", "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://"+closed, "--timeout", "5s")
	_, port, _ := net.SplitHostPort(closed)
	if code != 2 || !strings.Contains(errs, "is Azurite running on http://"+closed) || !strings.Contains(errs, "--blobPort "+port) {
		t.Fatalf("refused: %d %s", code, errs)
	}
}

// --container is a container name: 3–63 lowercase letters, digits and single hyphens — not a path.
func TestContainerNameIsValidated(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"deadletter/quarantine", "DeadLetter", "ab", "a--b", "-ab", strings.Repeat("a", 64), "dead letter"} {
		if _, errs, code := runCmd(t, "ls", "--connection-string", "UseDevelopmentStorage=true", "--container", bad); code != 2 || !strings.Contains(errs, "not a container name") {
			t.Errorf("--container %q: %d %s", bad, code, errs)
		}
	}
}

// seed writes only to a directory, to Azurite, or to an empty container; a second seed never overwrites.
func TestSeedIsCareful(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, "seed", "--dir", dir)
	before := map[string]string{}
	d, _ := dirstore.Open(dir)
	l, _ := store.ListAll(context.Background(), d)
	for _, b := range l.Blobs {
		before[b.Name] = b.ETag
	}
	out := mustRun(t, "seed", "--dir", dir)
	if !strings.Contains(out, "already taken and left as they were") {
		t.Fatalf("second seed: %s", out)
	}
	l, _ = store.ListAll(context.Background(), d)
	for _, b := range l.Blobs {
		if e, ok := before[b.Name]; ok && e != b.ETag {
			t.Fatalf("a second seed overwrote %s", b.Name)
		}
	}
	// Into a container of an account that is not the emulator: only one this seed creates, or with --force,
	// naming the account — even an empty one, even on a loopback endpoint (a tunnel).
	remote := &remoteMem{Mem: storetest.NewMem(time.Now())}
	if err := seedGuard(context.Background(), remote, false); err != nil {
		t.Fatalf("a container the seed creates: %v", err)
	}
	remote.exists = true
	if err := seedGuard(context.Background(), remote, false); err == nil || !strings.Contains(err.Error(), "mem/deadletter") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("an existing container in a real account: %v", err)
	}
	if err := seedGuard(context.Background(), remote, true); err != nil {
		t.Fatal(err)
	}
	remote.emulator = true
	if err := seedGuard(context.Background(), remote, false); err != nil {
		t.Fatalf("the emulator: %v", err)
	}
}

// remoteMem is a container of an account, the emulator's or not, that exists or not.
type remoteMem struct {
	*storetest.Mem
	emulator, exists bool
}

func (r *remoteMem) Emulator() bool                       { return r.emulator }
func (r *remoteMem) Exists(context.Context) (bool, error) { return r.exists, nil }

// ls hides nothing by default: a blob dated ahead of the clock (a snapshot copied from a machine whose clock ran
// fast) is listed, and --verdict handled finds the blobs handled through their quarantine copy as well as the
// archived ones — as many as ls --json marks handled.
func TestLsHidesNothing(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	l := lsJSONOf(t, "--dir", dir)
	handled := 0
	for _, b := range l.Blobs {
		if b["handled"] == true {
			handled++
		}
	}
	out, _, code := runCmd(t, "ls", "--dir", dir, "--verdict", "handled", "-o", "name")
	if got := len(strings.Fields(out)); code != 0 || handled < 2 || got != handled {
		t.Fatalf("--verdict handled: %d names, ls --json marks %d handled:\n%s", got, handled, out)
	}
	future := filepath.Join(dir, "FUTURE", "x.json")
	os.MkdirAll(filepath.Dir(future), 0o755)
	os.WriteFile(future, []byte(`[]`), 0o644)
	ahead := time.Now().Add(2 * time.Hour)
	os.Chtimes(future, ahead, ahead)
	if out, _, _ := runCmd(t, "ls", "--dir", dir, "-o", "name"); !strings.Contains(out, "FUTURE/x.json") {
		t.Fatal("a blob dated ahead of the clock is not listed")
	}
}

// On an 80-column terminal ls keeps STATE: without it a handled or acknowledged blob passes for an ordinary one.
func TestLsAt80ColumnsKeepsState(t *testing.T) {
	t.Parallel()
	widths := present.Layout(lsColumns, 80)
	for i, c := range lsColumns {
		if c.ID == "state" && widths[i] == 0 {
			t.Fatalf("STATE dropped at 80 columns: %v", widths)
		}
	}
}

// A full name means that blob and no other: renamed away, its name is notFound — never the blob it became — and a
// case-only variant of a name does not reach the real one. A fragment is case-sensitive and its full name is said
// before the action asks.
func TestFullNamesNeverResolveElsewhere(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	var name string
	for _, b := range lsJSONOf(t, "--dir", dir, "--pane", "stranded").Blobs {
		if h, _ := b["handled"].(bool); !h && strings.HasPrefix(b["name"].(string), "PUSH-NOTIFICATIONS/") {
			name = b["name"].(string)
			break
		}
	}
	old := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.Rename(old, old+".old"); err != nil {
		t.Fatal(err)
	}
	out, _, code := runCmd(t, "drain", "--dir", dir, "--yes", "--json", name)
	if code != 3 || !strings.Contains(out, `"notFound"`) || strings.Contains(out, `"drained"`) {
		t.Fatalf("drain of a renamed blob's old name: exit %d %s", code, out)
	}
	out, _, code = runCmd(t, "drain", "--dir", dir, "--yes", "--json", strings.ToLower(name)+".old")
	if code != 3 || !strings.Contains(out, `"notFound"`) || strings.Contains(out, `"drained"`) {
		t.Fatalf("drain of a case-only variant: exit %d %s", code, out)
	}
	guid := strings.TrimSuffix(path.Base(name), ".json")
	if _, errs, code := runCmd(t, "show", strings.ToUpper(guid[:8]), "--dir", dir); code != 2 || !strings.Contains(errs, "no blob matches") {
		t.Fatalf("a fragment in another case: exit %d %s", code, errs)
	}
	_, errs, code := runCmd(t, "drain", "--dir", dir, "--dry-run", guid[:8])
	if code != 0 && code != 3 || !strings.Contains(errs, guid[:8]+" is "+name+".old") {
		t.Fatalf("the fragment's full name is not said: exit %d %s", code, errs)
	}
}

// A group refuses a word it does not know as the root does (exit 2, the nearest names), never its help with exit
// 0; and twin's help lists only the global flags it reads.
func TestGroupsRefuseUnknownWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"twin", "bogus"}, "it takes start, advance, status"},
		{[]string{"twin", "statu"}, "did you mean start or status?"},
		{[]string{"context", "bogus"}, "it takes list, use, show"},
		{[]string{"twin", "dif"}, `unknown command "dif" for "deadletter twin"`},
		// a group at any depth, and help's topic
		{[]string{"twin", "script", "bogus"}, "it takes set, show"},
		{[]string{"twin", "script", "shw", "--dir", "t1"}, "did you mean set or show?"},
		{[]string{"help", "bogus"}, `unknown command "bogus" for "deadletter"`},
		{[]string{"help", "twin", "script", "bogus"}, "it takes set, show"},
	} {
		out, errs, code := runCmd(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("deadletter %v: exit %d, want 2 saying %q\n%s%s", c.args, code, c.want, out, errs)
		}
	}
	for _, args := range [][]string{{"twin"}, {"twin", "script"}, {"help", "twin", "script"}} {
		if out, _, code := runCmd(t, args...); code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("deadletter %v: exit %d, want its help", args, code)
		}
	}
	// Commands that take no estate, or only its bytes, list only the global flags they read.
	for _, c := range []struct {
		cmd  string
		keep []string
	}{{"version", nil}, {"completion", nil}, {"context", []string{"--config"}}, {"get", []string{"--dir", "--account-url", "--timeout"}}} {
		out := mustRun(t, c.cmd, "--help")
		for _, flag := range []string{"--ttl", "--handlers", "--read-only", "--witness-window", "--audit-container"} {
			if strings.Contains(out, flag) {
				t.Errorf("%s --help lists %s, which it never reads:\n%s", c.cmd, flag, out)
			}
		}
		for _, flag := range c.keep {
			if !strings.Contains(out, flag) {
				t.Errorf("%s --help lacks %s:\n%s", c.cmd, flag, out)
			}
		}
	}
	out := mustRun(t, "twin", "start", "--help")
	for _, flag := range []string{"--account-url", "--read-only", "--connection-string"} {
		if strings.Contains(out, flag) {
			t.Errorf("twin start --help lists %s, which it never reads:\n%s", flag, out)
		}
	}
	if !strings.Contains(out, "--dir") || !strings.Contains(out, "--ttl") { // (the twin runs by the estate's rules)
		t.Errorf("twin start --help lacks --dir or --ttl:\n%s", out)
	}
	if out := mustRun(t, "twin", "advance", "--help"); strings.Contains(out, "--ttl") {
		t.Errorf("twin advance --help lists --ttl, which it never reads:\n%s", out)
	}
	// The flags hidden for twin's help are back for everyone else's.
	if out := mustRun(t, "ls", "--help"); !strings.Contains(out, "--account-url") {
		t.Errorf("ls --help lost --account-url:\n%s", out)
	}
}

// --filter takes the dashboard's language and selects what the dashboard's filter shows for the same words: ls and
// restore --all against the same query applied as the tables apply it (replay.Query over the listing).
func TestFilterFlagSelectsWhatTheDashboardShows(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	// One register for both sides, named on the command line (whatever the seed left about it).
	reg, _ := json.Marshal(scenario.IncidentRegister)
	handlers := filepath.Join(t.TempDir(), "handlers.json")
	if err := os.WriteFile(handlers, reg, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"sub:webhooks", "is:malformed", "verdict:cap", "sub:=WEBHOOKS -is:handled", "maxdelivery", "reason:=MaxDeliveryAttemptsExceeded is:root"} {
		got := map[string]bool{}
		for _, b := range lsJSONOf(t, "--dir", dir, "--handlers", handlers, "--filter", q).Blobs {
			got[b["name"].(string)] = true
		}
		want := map[string]bool{}
		c, err := dirstore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		cfg := rules.DefaultConfig()
		cfg.Handlers = scenario.IncidentRegister
		l := replay.NewLoader(c, cfg)
		snap, err := l.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		l.HydrateWhere(context.Background(), snap, nil)
		parsed, err := rules.ParseFilter(q)
		if err != nil {
			t.Fatal(err)
		}
		keep := parsed.Select(cfg, snap)
		for i := range snap.Items {
			if keep(i) {
				want[snap.Items[i].Name] = true
			}
		}
		if len(want) == 0 || len(got) != len(want) {
			t.Errorf("ls --filter %q: %d blobs, the dashboard's filter shows %d", q, len(got), len(want))
		}
		for n := range want {
			if !got[n] {
				t.Errorf("ls --filter %q lacks %s", q, n)
			}
		}
		// The actions select the same, in their panes: drain the stranded blobs shown, restore --all the
		// quarantined ones (their dry runs name every blob taken, left ones with their reasons), ack all shown.
		inPane := func(p rules.Pane) map[string]bool {
			m := map[string]bool{}
			for i := range snap.Items {
				if want[snap.Items[i].Name] && snap.Items[i].Pane == p {
					m[snap.Items[i].Name] = true
				}
			}
			return m
		}
		for _, c := range []struct {
			want map[string]bool
			args []string
		}{
			{inPane(rules.PaneStranded), []string{"drain", "--dry-run"}},
			{inPane(rules.PaneQuarantine), []string{"restore", "--all", "--dry-run"}},
		} {
			out, errs, _ := runCmd(t, append(c.args, "--dir", dir, "--handlers", handlers, "--filter", q, "--json")...)
			if names := resultNames(t, out); !maps.Equal(names, c.want) {
				t.Errorf("%v --filter %q takes %d blobs, the dashboard's filter shows %d there:\n%v\n%v\n%s", c.args, q, len(names), len(c.want), names, c.want, errs)
			}
		}
	}
	// ack --filter (it writes, so once, last): every blob the filter shows, in any pane.
	q := "sub:=WEBHOOKS -is:handled"
	parsed, _ := rules.ParseFilter(q)
	c, _ := dirstore.Open(dir)
	cfg := rules.DefaultConfig()
	cfg.Handlers = scenario.IncidentRegister
	l := replay.NewLoader(c, cfg)
	snap, _ := l.List(context.Background())
	l.HydrateWhere(context.Background(), snap, nil)
	want, keep := map[string]bool{}, parsed.Select(cfg, snap)
	for i := range snap.Items {
		if keep(i) {
			want[snap.Items[i].Name] = true
		}
	}
	out, errs, _ := runCmd(t, "ack", "--dir", dir, "--handlers", handlers, "--filter", q, "--yes", "--json")
	if names := resultNames(t, out); len(want) == 0 || !maps.Equal(names, want) {
		t.Errorf("ack --filter %q acknowledged %d blobs, the dashboard's filter shows %d:\n%s", q, len(names), len(want), errs)
	}
	for _, args := range [][]string{{"ls"}, {"drain", "--dry-run"}, {"restore", "--all", "--dry-run"}, {"ack"}} {
		if _, errs, code := runCmd(t, append(args, "--dir", dir, "--filter", "colour:red")...); code != 2 || !strings.Contains(errs, "is not a filter field") {
			t.Errorf("%v a bad --filter: exit %d %s", args, code, errs)
		}
		// a lone "-" (a negation left without its word) would match every GUID's hyphen: refused, not everything
		if _, errs, code := runCmd(t, append(args, "--dir", dir, "--filter", "sub:webhooks -")...); code != 2 || !strings.Contains(errs, "-is:handled") {
			t.Errorf("%v --filter with a lone -: exit %d %s", args, code, errs)
		}
		// so would a word of punctuation alone: every name holds a "." and a "/"
		for _, w := range []string{".", "/", "--", "-."} {
			if _, errs, code := runCmd(t, append(args, "--dir", dir, "--filter", "sub:webhooks "+w)...); code != 2 || !strings.Contains(errs, "no letter or digit") {
				t.Errorf("%v --filter with %q: exit %d %s", args, w, code, errs)
			}
		}
	}
	if _, errs, code := runCmd(t, "drain", "--dir", dir, "--filter", "sub:webhooks", "WEBHOOKS"); code != 2 || !strings.Contains(errs, "names or --filter") {
		t.Errorf("drain with names and --filter: exit %d %s", code, errs)
	}
}

// check's wrapped advice keeps a quoted command on one line: "run `deadletter drain`" never breaks inside the
// backquotes.
func TestWrappedAdviceKeepsCommandsWhole(t *testing.T) {
	t.Parallel()
	line := "- stranded (31): 31 stranded blob(s), oldest 28d12h old: nothing replays them; run `deadletter drain --dry-run` then `deadletter drain`"
	for w := 30; w <= 100; w++ {
		out := fitLine(line, w)
		for _, l := range strings.Split(out, "\n") {
			if strings.Count(l, "`")%2 != 0 {
				t.Fatalf("at %d columns a command is broken across lines:\n%s", w, out)
			}
		}
		if strings.ReplaceAll(strings.Join(strings.Fields(out), " "), "\n", " ") != strings.Join(strings.Fields(line), " ") {
			t.Fatalf("at %d columns the words changed:\n%s", w, out)
		}
	}
}

// resultNames are the names an action's JSON results carry.
func resultNames(t *testing.T, out string) map[string]bool {
	t.Helper()
	var r struct{ Results []struct{ Name string } }
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	m := map[string]bool{}
	for _, x := range r.Results {
		m[x.Name] = true
	}
	return m
}

// ls --filter matches the reason as its rows show it (TTLExpired, MaxAttempts) as well as Event Grid's own word:
// reason:TTLExpired selects what reason:TimeToLive does, and a plain TTLExpired the rows whose shown reason it is.
func TestFilterMatchesTheShortReasonShown(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	count := func(q string) int {
		return len(strings.Fields(mustRun(t, "ls", "--dir", dir, "--filter", q, "-o", "name")))
	}
	if short, long := count("reason:TTLExpired"), count("reason:TimeToLive"); short == 0 || short != long {
		t.Errorf("reason:TTLExpired %d blobs, reason:TimeToLive %d", short, long)
	}
	if n := count("TTLExpired"); n == 0 {
		t.Error("a plain TTLExpired matches no blob")
	}
	if short, long := count("MaxAttempts"), count("MaxDeliveryAttemptsExceeded"); short == 0 || short != long {
		t.Errorf("MaxAttempts %d blobs, MaxDeliveryAttemptsExceeded %d", short, long)
	}
}

// The rough edges a fresh-eyes test found say what happened: a drain filter that keeps none of the stranded blobs
// says so (not "nothing is stranded"), a log filter that matches none of the records says so (not "no action
// recorded"), a duration too long says the bound, and twin script set with the wrong count says its usage.
func TestWordsSayWhatHappened(t *testing.T) {
	dir := seeded(t)
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // (a record of this test's own)
	out := mustRun(t, "drain", "--dir", dir, "--filter", "archived", "--dry-run")
	if !strings.Contains(out, "the filter matches no stranded blob") || strings.Contains(out, "nothing is stranded") {
		t.Errorf("drain --filter archived:\n%s", out)
	}
	root := strings.SplitN(mustRun(t, "ls", "--dir", dir, "--pane", "stranded", "-o", "name"), "\n", 2)[0]
	mustRun(t, "ack", root, "--dir", dir, "--yes")
	if out := mustRun(t, "log", "--dir", dir, "--filter", "who:nobody"); !strings.Contains(out, "--filter who:nobody matched none of the 1 action(s) recorded") {
		t.Errorf("log --filter who:nobody:\n%s", out)
	}
	twinDir := t.TempDir()
	mustRun(t, "twin", "start", "--dir", twinDir)
	if _, errs, code := runCmd(t, "twin", "advance", "--dir", twinDir, "--by", "100000000h"); code != 2 || !strings.Contains(errs, "too long: at most 106,000 days") {
		t.Errorf("twin advance --by 100000000h: exit %d %s", code, errs)
	}
	if _, errs, code := runCmd(t, "twin", "script", "set", "webhooks", "--dir", twinDir); code != 2 || !strings.Contains(errs, "usage: deadletter twin script set SUB down|up") {
		t.Errorf("twin script set with one argument: exit %d %s", code, errs)
	}
}
