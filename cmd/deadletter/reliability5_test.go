package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/made"
	"github.com/deadletter/deadletter/internal/twin"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// drain --filter "" (an unset variable in a script) is refused: it would take every stranded blob.
func TestAnEmptyFilterIsRefused(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	before := listNames(t, dir)
	for _, args := range [][]string{{"drain", "--filter", "", "--yes"}, {"drain", "--filter=", "--yes"}, {"drain", "--filter", "  ", "--yes"}, {"export", "--filter", "", "--to", t.TempDir()}} {
		_, errs, code := runCmd(t, append(args, "--dir", dir)...)
		if code != 2 || !strings.Contains(errs, "--filter") {
			t.Errorf("%v: exit %d\n%s", args, code, errs)
		}
	}
	if listNames(t, dir) != before {
		t.Fatal("an empty --filter wrote")
	}
}

// An editor that leaves a link in place of the file it was given: the link is not followed, nothing is written.
func TestEditNeverFollowsALinkTheEditorLeaves(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the test editor is a shell script")
	}
	dir, name := repairDir(t)
	secret := filepath.Join(t.TempDir(), "secret.json")
	os.WriteFile(secret, []byte(withData), 0o600) // (a payload the repair would take, were the link followed)
	script := filepath.Join(t.TempDir(), "editor")
	os.WriteFile(script, []byte("#!/bin/sh\nrm -f \"$1\"\nln -s '"+secret+"' \"$1\"\n"), 0o700)
	t.Setenv("EDITOR", script)
	t.Setenv("VISUAL", "")
	before := listNames(t, dir)
	_, errs, code := runCmd(t, "edit", name, "--dir", dir, "--yes")
	if code == 0 || !strings.Contains(errs, "symbolic link") || !strings.Contains(errs, "nothing was written") {
		t.Fatalf("an editor that left a link: exit %d\n%s", code, errs)
	}
	if listNames(t, dir) != before {
		t.Fatal("the link's target was written")
	}
}

// A resubmit retried in another hour finds what it wrote in the first: nothing is written twice. Once the replay
// has handled it, the same payload resubmitted again is refused (its events would go out a second time) unless
// forced.
func TestAResubmitIsNamedByItsContentNotTheHour(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "twin")
	mustRun(t, "twin", "start", "--dir", dir)
	file := filepath.Join(t.TempDir(), "fix.json")
	os.WriteFile(file, []byte(withData), 0o600)
	var first map[string]any
	json.Unmarshal([]byte(mustRun(t, "resubmit", file, "--subscription", "webhooks", "--dir", dir, "--yes", "--json")), &first)
	written, _ := first["written"].(string)
	if !strings.Contains(written, "/resubmitted-") {
		t.Fatalf("first resubmit: %v", first)
	}
	// Two hours on, the twin's replay may have taken it: pause the replay by reading the blob where it is now.
	d, _ := dirstore.Open(dir)
	if _, err := d.Stat(context.Background(), written); err == nil {
		// still at the root an hour on (the twin's clock stood still): a retry finds it
		out, errs, code := runCmd(t, "resubmit", file, "--subscription", "webhooks", "--dir", dir, "--yes")
		if code != 0 || !strings.Contains(out, "nothing is written again") {
			t.Fatalf("a retry: exit %d\n%s\n%s", code, out, errs)
		}
	}
	mustRun(t, "twin", "advance", "--dir", dir, "--by", "3h")
	names := listNames(t, dir)
	out, errs, code := runCmd(t, "resubmit", file, "--subscription", "webhooks", "--dir", dir, "--yes")
	if code != 3 || !strings.Contains(out+errs, "resubmitted before and the replay has handled it") || listNames(t, dir) != names {
		t.Fatalf("a resubmit of what the replay handled, three hours on: exit %d\n%s\n%s", code, out, errs)
	}
	if n := strings.Count(listNames(t, dir), filepath.Base(written)); n != 1 {
		t.Fatalf("%s stands %d times", filepath.Base(written), n)
	}
}

// A twin's clock file that is a FIFO, empty ({}) or holds a field twice is refused — said, exit 2 — never read as
// the wall clock (ages years off) nor waited on.
func TestAHostileTwinClockIsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, body string }{
		{"empty object", "{}"},
		{"at twice", `{"at":"2026-12-01T00:00:00Z","wall":"2026-12-01T00:00:00Z","speed":0,"at":"2019-01-01T00:00:00Z"}`},
		{"a field it does not know", `{"at":"2026-12-01T00:00:00Z","speed":0,"tz":"x"}`},
		{"fifo", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "twin")
			mustRun(t, "twin", "start", "--dir", dir)
			p, err := twin.Find(dir)
			if err != nil {
				t.Fatal(err)
			}
			clock := twin.ClockPath(p)
			os.Remove(clock)
			if c.name == "fifo" {
				storetest.Mkfifo(t, clock)
			} else {
				os.WriteFile(clock, []byte(c.body), 0o600)
			}
			done := make(chan struct{})
			var errs string
			var code int
			go func() { _, errs, code = runCmd(t, "ls", "--dir", dir); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("ls hung on the twin's clock")
			}
			if code != 2 || !strings.Contains(errs, "clock") {
				t.Fatalf("ls on a twin whose clock is %s: exit %d\n%s", c.name, code, errs)
			}
		})
	}
}

// A config file reached through a folder others can write (no sticky bit) is refused, as ssh refuses one, with
// the chmod that fixes it.
func TestAConfigInAFolderOthersCanWriteIsRefused(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no mode bits")
	}
	open := filepath.Join(t.TempDir(), "shared")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	cfg := filepath.Join(open, "config.yaml")
	os.WriteFile(cfg, []byte("contexts:\n  - name: snap\n    dir: "+t.TempDir()+"\n"), 0o600)
	_, errs, code := runCmd(t, "ls", "--config", cfg, "--context", "snap")
	if code != 2 || !strings.Contains(errs, "a folder others can write") || !strings.Contains(errs, "chmod go-w "+open) {
		t.Fatalf("a config in a world-writable folder: exit %d\n%s", code, errs)
	}
	// A link to a config in such a folder, from a folder of the operator's, is refused too.
	link := filepath.Join(t.TempDir(), "config.yaml")
	os.Symlink(cfg, link)
	if _, errs, code := runCmd(t, "ls", "--config", link, "--context", "snap"); code != 2 || !strings.Contains(errs, "a folder others can write") {
		t.Fatalf("a link to it: exit %d\n%s", code, errs)
	}
	os.Chmod(open, 0o755)
	if _, errs, code := runCmd(t, "ls", "--config", cfg, "--context", "snap"); code != 0 {
		t.Fatalf("once fixed: exit %d\n%s", code, errs)
	}
}

// Small things: get --to - writes to standard output, never a file named -; a cron drain of every stranded blob
// passes the handled blobs by (said, exit 0) rather than exit 3 for ever.
func TestGetToDashAndACronDrainPassesHandledBy(t *testing.T) {
	dir := seeded(t)
	wd, _ := os.Getwd()
	tmp := t.TempDir()
	os.Chdir(tmp)
	defer os.Chdir(wd)
	name := namesIn(t, dir, "")[0]
	out := mustRun(t, "get", name, "--to", "-", "--dir", dir)
	if out == "" {
		t.Fatal("get --to - wrote nothing to standard output")
	}
	if _, err := os.Stat(filepath.Join(tmp, "-")); err == nil {
		t.Fatal("get --to - made a file named -")
	}
	handled := 0
	for _, b := range lsJSONOf(t, "--dir", dir, "--pane", "stranded").Blobs {
		if h, _ := b["handled"].(bool); h {
			handled++
		}
	}
	out, errs, code := runCmd(t, "drain", "--dir", dir, "--yes")
	if handled > 0 && (code != 0 || !strings.Contains(out, "already handled passed by")) {
		t.Fatalf("a drain of every stranded blob with %d handled: exit %d\n%s\n%s", handled, code, out, errs)
	}
}

// A twin of a source holding blobs it can never hold — one over the largest dead letter, a name beside a folder
// of the same name — is made without them, said; a start that stopped part-way is said as that by every command.
func TestATwinOfASourceWithBlobsItCannotHold(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	mustRun(t, "seed", "--dir", src, "--count", "3")
	d, _ := dirstore.Open(src)
	ctx := context.Background()
	big := make([]byte, store.MaxBlobBytes+1)
	copy(big, "[")
	if _, err := d.Write(ctx, "WEBHOOKS/2026/11/30/9/huge.json", big, store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "twin")
	out, errs, code := runCmd(t, "twin", "start", "--dir", dir, "--from", src)
	if code != 0 || !strings.Contains(errs, "are not in the twin") || !strings.Contains(errs, "huge.json") {
		t.Fatalf("twin start --from a source with a blob too large: exit %d\n%s\n%s", code, out, errs)
	}
	mustRun(t, "twin", "status", "--dir", dir)
	// A start that stops part-way: every command says it never finished, none an open error.
	broken := filepath.Join(t.TempDir(), "broken")
	os.MkdirAll(broken, 0o700)
	p, err := made.Make(broken, made.Twin)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p.File("copying"), []byte("directory "+src+"\n"), 0o600)
	for _, args := range [][]string{{"twin", "status"}, {"ls"}} {
		_, errs, code := runCmd(t, append(args, "--dir", broken)...)
		if code != 2 || !strings.Contains(errs, "never finished") || strings.Contains(errs, "state.json") {
			t.Errorf("%v on a twin never finished: exit %d\n%s", args, code, errs)
		}
	}
}

// A repair racing a drain of its original never leaves the original's events at the root twice — the original
// re-uploaded and the repair beside it. Fifty times on a directory and on Azurite (its repair's write delayed by a
// proxy, so the drain falls in the window between the repair's check and its write): each round ends with exactly
// one root blob holding the event, and each command's exit and record say which won.
func TestARepairRacingADrainSendsNothingTwice(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the test editor is a shell script")
	}
	const rounds = 50
	script := filepath.Join(t.TempDir(), "editor")
	os.WriteFile(script, []byte("#!/bin/sh\nsed -i 's/\"dataVersion\":\"1\"/\"dataVersion\":\"1\",\"data\":{}/' \"$1\"\n"), 0o700)
	t.Setenv("EDITOR", script)
	t.Setenv("VISUAL", "")
	t.Chdir(t.TempDir()) // an edit that lost the race is kept in the working folder
	body := func(i int) string {
		return fmt.Sprintf(`[{"id":"race-%02d","subject":"s","eventType":"ProcessPushNotification","dataVersion":"1"}]`, i)
	}
	name := func(i int) string { return fmt.Sprintf("PUSH-NOTIFICATIONS/2026/1/1/1/race-%02d.json", i) }
	for _, backend := range []string{"dir", "azurite"} {
		t.Run(backend, func(t *testing.T) {
			var c store.Container
			var args []string
			var proxy *storetest.FaultProxy
			switch backend {
			case "dir":
				dir := seeded(t)
				d, _ := dirstore.Open(dir)
				for i := range rounds {
					d.Write(context.Background(), name(i), []byte(body(i)), store.WriteOptions{ContentType: "application/json"})
					d.Backdate(context.Background(), name(i), time.Now().Add(-2*time.Hour))
				}
				c, args = d, []string{"--dir", dir}
			default:
				az := storetest.Azure(t)
				for i := range rounds {
					az.Write(context.Background(), name(i), []byte(body(i)), store.WriteOptions{ContentType: "application/json"})
				}
				time.Sleep(1500 * time.Millisecond) // past the 1s TTL below
				p := storetest.NewFaultProxy(t, storetest.AzuriteConnectionString(t))
				proxy = p
				handlers := filepath.Join(t.TempDir(), "handlers.json")
				os.WriteFile(handlers, []byte(`{"ProcessPushNotification": true}`), 0o600)
				c = az
				args = []string{"--connection-string", p.ConnectionString(storetest.AzuriteConnectionString(t)),
					"--container", az.Describe()[strings.IndexByte(az.Describe(), '/')+1:], "--ttl", "1s", "--handlers", handlers}
			}
			editWon, drainWon := 0, 0
			for i := range rounds {
				var editOut, editErrs, drainOut, drainErrs string
				var editCode, drainCode int
				edit := func() {
					editOut, editErrs, editCode = runCmd(t, append([]string{"edit", name(i), "--yes"}, args...)...)
				}
				drain := func() {
					drainOut, drainErrs, drainCode = runCmd(t, append([]string{"drain", name(i), "--yes"}, args...)...)
				}
				if proxy != nil {
					// Each strikes in the other's window, in turn: the drain between the repair's check and its new
					// blob's write; the repair (its check, write and delete) between the drain's read and its write.
					first, second, trigger := edit, drain, "If-None-Match"
					if i%2 == 1 {
						first, second, trigger = drain, edit, "If-Match"
					}
					var once sync.Once
					proxy.SetFaults(func(r *http.Request) storetest.Fault {
						if r.Method == http.MethodPut && !strings.Contains(r.URL.RawQuery, "comp=") && strings.HasSuffix(r.URL.Path, name(i)) == (trigger == "If-Match") &&
							r.Header.Get(trigger) != "" {
							return storetest.Fault{Before: func() { once.Do(second) }}
						}
						return storetest.Fault{}
					})
					first()
					once.Do(second) // (the window never came: the second runs after)
				} else {
					var wg sync.WaitGroup
					wg.Add(2)
					go func() { defer wg.Done(); edit() }()
					go func() { defer wg.Done(); drain() }()
					wg.Wait()
				}
				l, err := store.ListAll(context.Background(), c)
				if err != nil {
					t.Fatal(err)
				}
				holding := 0
				for _, bi := range l.Blobs {
					if !rules.IsRoot(bi.Name) {
						continue
					}
					if b, err := c.Read(context.Background(), bi.Name, store.MaxBlobBytes); err == nil && strings.Contains(string(b.Body), fmt.Sprintf(`"race-%02d"`, i)) {
						holding++
					}
				}
				say := fmt.Sprintf("round %d: edit exit %d\n%s%s\ndrain exit %d\n%s%s", i, editCode, editOut, editErrs, drainCode, drainOut, drainErrs)
				if holding != 1 {
					t.Fatalf("%d root blobs hold the event race-%02d\n%s", holding, i, say)
				}
				switch {
				case editCode == 0 && strings.Contains(editOut, "repaired") && drainCode == exitNotDone && strings.Contains(drainOut, "changed") || strings.Contains(drainOut, "gone"):
					editWon++
				case drainCode == 0 && strings.Contains(drainOut, "drained") && editCode == exitNotDone && strings.Contains(editOut, "changed"):
					drainWon++
				default:
					t.Fatalf("the exits do not say one of them won:\n%s", say)
				}
			}
			t.Logf("%s: the repair won %d rounds, the drain %d", backend, editWon, drainWon)
			states := map[string]int{}
			for _, r := range logOf(t, args...).Records {
				states[string(r.Action)+" "+r.State]++
			}
			if states["edit done"] != editWon || states["drain done"] != drainWon || states["edit partly"]+states["edit done"] != rounds {
				t.Fatalf("the record says %v; the repair won %d, the drain %d", states, editWon, drainWon)
			}
		})
	}
}

// ack --by's value is not kept in the record (a flag's value, like any other); log shows no arrow with nothing
// after it for a blob an action left as it was.
func TestTheRecordKeepsNoByValueAndLogNoEmptyArrow(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	name := namesIn(t, dir, "")[0]
	mustRun(t, "ack", name, "--dir", dir, "--yes", "--by", "someone-else@example")
	out := mustRun(t, "log", "--dir", dir)
	if strings.Contains(out, "someone-else") {
		t.Fatalf("the record kept --by's value:\n%s", out)
	}
	runCmd(t, "drain", "--dir", dir, "--yes") // (its handled and crash blobs are left as they were)
	out = mustRun(t, "log", "--dir", dir)
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(strings.TrimSpace(line), "→") {
			t.Fatalf("an arrow to nothing: %q\n%s", line, out)
		}
	}
}
