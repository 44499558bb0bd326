package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/testkit"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

func checkJSONOf(t *testing.T, args ...string) (map[string]any, int) {
	t.Helper()
	out, errs, code := runCmd(t, append([]string{"check", "--json"}, args...)...)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("check --json: %v\n%s\n%s", err, out, errs)
	}
	return m, code
}

func TestCheckExitCodesOnADirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if m, code := checkJSONOf(t, "--dir", dir); code != 0 || m["healthy"] != true {
		t.Fatalf("empty: %d %v", code, m)
	}
	d, _ := dirstore.Open(dir)
	d.Write(context.Background(), "S/a.json", []byte(`[{"id":"a","subject":"s","eventType":"T","dataVersion":"1","data":{}}]`), store.WriteOptions{})
	d.Backdate(context.Background(), "S/a.json", time.Now().Add(-2*time.Hour))
	m, code := checkJSONOf(t, "--dir", dir)
	if code != 1 || m["healthy"] != false {
		t.Fatalf("stranded: %d %v", code, m)
	}
	f := m["findings"].([]any)[0].(map[string]any)
	if f["kind"] != "stranded" || f["count"].(float64) != 1 || f["oldest"] == nil || !strings.Contains(f["message"].(string), "drain") {
		t.Fatalf("finding %v", f)
	}
	for _, k := range []string{"healthy", "counts", "findings"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("check --json lacks %s", k)
		}
	}
	out, _, code := runCmd(t, "check", "--dir", dir)
	if code != 1 || !strings.Contains(out, "stranded") || !strings.Contains(out, "deadletter drain") {
		t.Fatalf("human: %d %s", code, out)
	}
	mustRun(t, "drain", "--dir", dir, "--yes")
	if _, code := checkJSONOf(t, "--dir", dir); code != 0 {
		t.Fatal("healthy again after the drain")
	}
}

// A check that cannot see the container never reports healthy.
func TestCheckUnreachableIsTwo(t *testing.T) {
	t.Parallel()
	cs := "DefaultEndpointsProtocol=http;AccountName=a;AccountKey=YWJjZGVmZ2hpams=;BlobEndpoint=http://127.0.0.1:1/a;"
	m, code := checkJSONOf(t, "--connection-string", cs)
	if code != 2 || m["healthy"] != false || !strings.Contains(m["error"].(string), "cannot reach") {
		t.Fatalf("%d %v", code, m)
	}
}

// On Azurite, with a short TTL: healthy, then stalled past the grace, then stranded past the TTL.
func TestCheckOnAzurite(t *testing.T) {
	t.Parallel()
	cs := storetest.AzuriteConnectionString(t)
	az := storetest.Azure(t)
	container := strings.TrimPrefix(az.Describe(), "devstoreaccount1/")
	args := []string{"--connection-string", cs, "--container", container, "--ttl", "4s", "--live-grace", "2s"}
	if _, code := checkJSONOf(t, args...); code != 0 {
		t.Fatal("empty container is healthy")
	}
	az.Write(context.Background(), "S/a.json", []byte(`[{"id":"a","subject":"s","eventType":"T","dataVersion":"1","data":{}}]`), store.WriteOptions{})
	seen := map[string]bool{}
	for deadline := time.Now().Add(30 * time.Second); !seen["stranded"]; time.Sleep(250 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("saw %v, never stranded", seen)
		}
		m, code := checkJSONOf(t, args...)
		for _, f := range m["findings"].([]any) {
			seen[f.(map[string]any)["kind"].(string)] = true
			if code != 1 {
				t.Fatalf("a finding with exit %d", code)
			}
		}
	}
	if !seen["replayStalled"] {
		t.Fatalf("the stall before the stranding was never reported: %v", seen)
	}
}

func TestWatchPrintsChangesAndRunsExec(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, _ := dirstore.Open(dir)
	d.Write(context.Background(), "S/a.json", []byte(`[{"id":"a","subject":"s","eventType":"T","dataVersion":"1","data":{}}]`), store.WriteOptions{})
	d.Backdate(context.Background(), "S/a.json", time.Now().Add(-2*time.Hour))
	execOut := filepath.Join(t.TempDir(), "exec.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	out := &testkit.LockedBuffer{}
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"watch", "--dir", dir, "--json", "--interval", "100ms", "--exec", "cat >> " + execOut}, stdio{in: strings.NewReader(""), out: out, err: out})
	}()
	printed := func(want string) {
		t.Helper()
		eventually(t, "watch prints "+want, func() bool { return strings.Contains(out.String(), want) })
	}
	printed(`"event":"state","count":1,"total":1,"names":["S/a.json"]`)
	mustRun(t, "drain", "--dir", dir, "--yes")
	printed(`"event":"resolved","count":1,"total":0,"names":["S/a.json"]`)
	// (the hook runs beside the watch: wait for what it wrote, else the stop below kills it mid-run, as it should)
	eventually(t, "--exec writes the finding", func() bool {
		got, _ := os.ReadFile(execOut)
		return strings.Contains(string(got), `"kind":"stranded"`)
	})
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("watch exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if strings.Count(out.String(), `"event":"state"`) != 1 || strings.Contains(out.String(), `"event":"new"`) {
		t.Fatalf("one finding, stated once:\n%s", out.String())
	}
	for _, l := range lines {
		var c map[string]any
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
	}
	got, _ := os.ReadFile(execOut)
	if !strings.Contains(string(got), `"kind":"stranded"`) || strings.Contains(string(got), `"resolved"`) {
		t.Fatalf("--exec got %q", got)
	}
}

// A container that empties is still read at a time: the resolved line (and what --exec gets) is dated by the
// service clock, not year 1.
func TestWatchDatesAnEmptyContainer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, _ := dirstore.Open(dir)
	d.Write(context.Background(), "S/a.json", []byte(`[{"id":"a","subject":"s","eventType":"T","dataVersion":"1","data":{}}]`), store.WriteOptions{})
	d.Backdate(context.Background(), "S/a.json", time.Now().Add(-2*time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	out := &testkit.LockedBuffer{}
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"watch", "--dir", dir, "--json", "--interval", "100ms"}, stdio{in: strings.NewReader(""), out: out, err: out})
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), `"event":"resolved"`); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(out.String(), `"event":"state"`) {
			d.Delete(context.Background(), "S/a.json", "")
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch never resolved:\n%s", out.String())
		}
	}
	cancel()
	<-done
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var c struct{ Time time.Time }
		if err := json.Unmarshal([]byte(l), &c); err != nil || time.Since(c.Time) > time.Hour {
			t.Fatalf("an undated line: %q (%v)", l, err)
		}
	}
}

// An expiring blob the lifecycle rule deletes is announced as lost (and handed to --exec), not as resolved.
func TestWatchSaysLostNotResolved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, _ := dirstore.Open(dir)
	const name = "quarantine/S/a.json"
	d.Write(context.Background(), name, []byte(`[{"id":"a|9","subject":"s","eventType":"T","dataVersion":"1","data":{}}]`), store.WriteOptions{})
	d.Backdate(context.Background(), name, time.Now().Add(-31*24*time.Hour))
	execOut := filepath.Join(t.TempDir(), "exec.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	out := &testkit.LockedBuffer{}
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"watch", "--dir", dir, "--json", "--interval", "100ms", "--exec", "cat >> " + execOut}, stdio{in: strings.NewReader(""), out: out, err: out})
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), `"event":"lost"`); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(out.String(), `"kind":"expiring","event":"state"`) {
			d.Delete(context.Background(), name, "")
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch never said lost:\n%s", out.String())
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got, _ := os.ReadFile(execOut); strings.Contains(string(got), `"event":"lost"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("--exec never heard of the loss")
		}
	}
	cancel()
	<-done
	if strings.Contains(out.String(), `"kind":"expiring","event":"resolved"`) {
		t.Fatalf("a deleted blob is not a resolution:\n%s", out.String())
	}
}

// A notifier that hangs (a webhook with no timeout) must not hold the watch: the next change is still printed
// on time while the first --exec is stuck, and the watch stops promptly when asked.
func TestWatchIsNotHeldByAHungExec(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, _ := dirstore.Open(dir)
	body := []byte(`[{"id":"a","subject":"s","eventType":"T","dataVersion":"1","data":{}}]`)
	d.Write(context.Background(), "S/a.json", body, store.WriteOptions{})
	d.Backdate(context.Background(), "S/a.json", time.Now().Add(-2*time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	out := &testkit.LockedBuffer{}
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"watch", "--dir", dir, "--json", "--interval", "100ms", "--exec", "sleep 100"}, stdio{in: strings.NewReader(""), out: out, err: out})
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), `"event":"state"`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no first pass:\n%s", out.String())
		}
	}
	d.Write(context.Background(), "S/b.json", body, store.WriteOptions{})
	d.Backdate(context.Background(), "S/b.json", time.Now().Add(-2*time.Hour))
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(out.String(), `"event":"new"`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the hung --exec held the watch: no new line\n%s", out.String())
		}
	}
	start := time.Now()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the watch did not stop while --exec hung")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("stopping took %s", took)
	}
}

// --timeout 0 means no deadline, for check and for every pass of watch (not an instantly expired one).
func TestTimeoutZeroMeansNone(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	if _, errs, code := runCmd(t, "check", "--dir", dir, "--timeout", "0"); code != 1 {
		t.Fatalf("check --timeout 0: exit %d %s", code, errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := &testkit.LockedBuffer{}
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"watch", "--dir", dir, "--timeout", "0"}, stdio{in: strings.NewReader(""), out: out, err: out})
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), " state "); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) || strings.Contains(out.String(), "--timeout") {
			cancel()
			t.Fatalf("watch --timeout 0:\n%s", out.String())
		}
	}
	cancel()
	<-done
}
