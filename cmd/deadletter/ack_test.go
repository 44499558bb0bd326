package main

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// An acknowledged quarantine blob stops making check fail, and comes back when the ack runs out or the blob is
// rewritten; setting the ack changes neither its ETag nor its Last-Modified — on Azurite and on a directory.
func TestAckSilencesAFindingUntilItEnds(t *testing.T) {
	t.Parallel()
	storetest.Backends(t, func(t *testing.T, c store.Container) {
		ctx := context.Background()
		target := containerArgs(t, c)
		q := "quarantine/S/2026/1/1/1/q.json"
		body := `[{"id":"a","subject":"s","eventType":"T","dataVersion":"1","data":{}}]`
		if _, err := c.Write(ctx, q, []byte(body), store.WriteOptions{ContentType: "application/json"}); err != nil {
			t.Fatal(err)
		}
		before, _ := c.Stat(ctx, q)
		if _, _, code := runCmd(t, append([]string{"check"}, target...)...); code != 1 {
			t.Fatalf("a quarantine blob is a finding: exit %d", code)
		}
		if _, errs, code := runCmd(t, append([]string{"ack", "q.json", "--for", "3s", "--note", "ticket INC-42", "--by", "oncall", "--yes"}, target...)...); code != 0 {
			t.Fatalf("ack: %d %s", code, errs)
		}
		after, _ := c.Stat(ctx, q)
		if after.ETag != before.ETag || !after.LastModified.Equal(before.LastModified) {
			t.Fatalf("the ack changed the blob: %+v → %+v", before, after)
		}
		out, _, code := runCmd(t, append([]string{"check"}, target...)...)
		if code != 0 || !strings.Contains(out, "1 acknowledged") {
			t.Fatalf("acked: exit %d %s", code, out)
		}
		l := lsJSONOf(t, target...)
		ack, _ := l.Blobs[0]["ack"].(map[string]any)
		if ack == nil || ack["by"] != "oncall" || ack["note"] != "ticket INC-42" || ack["active"] != true {
			t.Fatalf("ls --json ack: %v", l.Blobs[0])
		}
		show := mustRun(t, append([]string{"show", q}, target...)...)
		if !strings.Contains(show, "ACKED") || !strings.Contains(show, "ticket INC-42") {
			t.Fatalf("show: %s", show)
		}
		// The ack runs out.
		eventually(t, "the ack to run out", func() bool {
			_, _, code := runCmd(t, append([]string{"check"}, target...)...)
			return code == 1
		})
		// Acked again, then rewritten: the ack no longer covers it.
		mustRun(t, append([]string{"ack", q, "--for", "1h", "--yes"}, target...)...)
		if _, _, code := runCmd(t, append([]string{"check"}, target...)...); code != 0 {
			t.Fatal("acked for an hour")
		}
		cur, _ := c.Stat(ctx, q)
		c.Write(ctx, q, []byte(body), store.WriteOptions{IfMatch: cur.ETag, ContentType: "application/json"})
		if _, _, code := runCmd(t, append([]string{"check"}, target...)...); code != 1 {
			t.Fatal("a rewritten blob is not covered by the old ack")
		}
		// --clear, and --read-only refuses.
		mustRun(t, append([]string{"ack", q, "--for", "1h", "--yes"}, target...)...)
		mustRun(t, append([]string{"ack", "--clear", q, "--yes"}, target...)...)
		if _, _, code := runCmd(t, append([]string{"check"}, target...)...); code != 1 {
			t.Fatal("a cleared ack still silences")
		}
		if _, errs, code := runCmd(t, append([]string{"ack", q, "--yes", "--read-only"}, target...)...); code != 2 || !strings.Contains(errs, "read-only") {
			t.Fatalf("--read-only: %d %s", code, errs)
		}
	})
}

// containerArgs are the flags that point the binary at a test container.
func containerArgs(t *testing.T, c store.Container) []string {
	if d, ok := c.(*dirstore.Dir); ok {
		return []string{"--dir", d.Root()}
	}
	name := c.Describe()[strings.IndexByte(c.Describe(), '/')+1:]
	return []string{"--connection-string", storetest.AzuriteConnectionString(t), "--container", name}
}

// Without the permission to write tags, ack says which permission is missing.
func TestAckWithAndWithoutTagPermission(t *testing.T) {
	t.Parallel()
	az := storetest.Azure(t)
	name := az.Describe()[strings.IndexByte(az.Describe(), '/')+1:]
	az.Write(context.Background(), "quarantine/S/q.json", []byte(`[]`), store.WriteOptions{})
	cs := storetest.AzuriteConnectionString(t)
	svc, err := azblob.NewClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := svc.ServiceClient().NewContainerClient(name).GetSASURL(sas.ContainerPermissions{Read: true, List: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	pu, _ := url.Parse(u)
	endpoint := pu.Scheme + "://" + pu.Host + "/" + strings.Split(strings.Trim(pu.Path, "/"), "/")[0]
	sasCS := "BlobEndpoint=" + endpoint + ";SharedAccessSignature=" + pu.RawQuery
	out, errs, code := runCmd(t, "ack", "q.json", "--connection-string", sasCS, "--container", name, "--yes")
	if code == 0 || !strings.Contains(out+errs, "tags/write") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	// With the tag permissions a container SAS can carry, the ack is written: it needs no more (not even the
	// service's clock, which a container SAS may not read).
	u, err = svc.ServiceClient().NewContainerClient(name).GetSASURL(sas.ContainerPermissions{Read: true, List: true, Tag: true, FilterByTags: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	pu, _ = url.Parse(u)
	sasCS = "BlobEndpoint=" + endpoint + ";SharedAccessSignature=" + pu.RawQuery
	if out, errs, code = runCmd(t, "ack", "q.json", "--connection-string", sasCS, "--container", name, "--yes"); code != 0 || !strings.Contains(out, "1 acked") {
		t.Fatalf("ack with a tag-writing SAS: exit %d\n%s\n%s", code, out, errs)
	}
}

// An ack never hides data about to be lost: a quarantine blob inside --expiring-within stays an expiring finding
// after it is acknowledged (the other findings go quiet), and ack says so when it is given.
func TestAckDoesNotSilenceExpiry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, _ := dirstore.Open(dir)
	q := "quarantine/S/2026/1/1/1/q.json"
	d.Write(context.Background(), q, []byte(`[{"id":"a","subject":"s","eventType":"T","dataVersion":"1","data":{}}]`), store.WriteOptions{})
	d.Backdate(context.Background(), q, time.Now().Add(-29*24*time.Hour)) // deleted in a day (30d retention)
	_, errs, code := runCmd(t, "ack", q, "--dir", dir, "--yes", "--for", "7d")
	if code != 0 || !strings.Contains(errs, "an ack does not silence that") {
		t.Fatalf("ack: exit %d %s", code, errs)
	}
	out, _, code := runCmd(t, "check", "--dir", dir, "--json")
	var c struct {
		Findings, Acknowledged []struct {
			Kind  string
			Count int
			Acked []struct{ Name, By string }
		}
	}
	json.Unmarshal([]byte(out), &c)
	// Expiring stays a finding (the ack listed beside it); quarantine is silenced, listed as acknowledged.
	if code != 1 || len(c.Findings) != 1 || c.Findings[0].Kind != "expiring" || c.Findings[0].Count != 1 || len(c.Findings[0].Acked) != 1 ||
		len(c.Acknowledged) != 1 || c.Acknowledged[0].Kind != "quarantine" || c.Acknowledged[0].Acked[0].Name != q {
		t.Fatalf("check after the ack: exit %d %s", code, out)
	}
	// --ignore-acks: every blob counts.
	out, _, _ = runCmd(t, "check", "--dir", dir, "--json", "--ignore-acks")
	json.Unmarshal([]byte(out), &c)
	if len(c.Findings) != 2 || len(c.Acknowledged) != 0 {
		t.Fatalf("--ignore-acks: %s", out)
	}
}

// A drain says which of the blobs it re-uploads are acknowledged: the rewrite ends their acks.
func TestDrainSaysItEndsAcks(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	var name string
	for _, b := range lsJSONOf(t, "--dir", dir, "--pane", "stranded").Blobs {
		if h, _ := b["handled"].(bool); !h {
			name = b["name"].(string)
			break
		}
	}
	mustRun(t, "ack", name, "--dir", dir, "--yes")
	_, errs, code := runCmd(t, "drain", "--dir", dir, "--dry-run")
	// (exit 0: the handled blobs a drain of every stranded blob leaves are passed by, not left undone)
	if code != 0 || !strings.Contains(errs, "1 of them are acknowledged: re-uploading changes them, which ends their acks.") {
		t.Fatalf("drain: exit %d %s", code, errs)
	}
}

// ack --dry-run (docs/json.md's wouldAck, wouldClear) says what it would acknowledge or clear and writes no tag,
// under --read-only too; an archived copy is excluded with words that are true of ack (a quarantine blob is acked).
func TestAckDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	dir := seeded(t)
	name := func(pane string) string {
		return strings.SplitN(mustRun(t, "ls", "--dir", dir, "--pane", pane, "-o", "name"), "\n", 2)[0]
	}
	root, q, arch := name("stranded"), name("quarantine"), name("archived")
	before := listNames(t, dir)
	out, errs, code := runCmd(t, "ack", root, q, arch, "--dir", dir, "--dry-run", "--json", "--read-only")
	var res struct {
		DryRun  bool `json:"dryRun"`
		Results []struct{ Name, Outcome, Error string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || !res.DryRun || code != 3 {
		t.Fatalf("ack --dry-run --json: exit %d %v\n%s%s", code, err, out, errs)
	}
	got := map[string]string{}
	for _, r := range res.Results {
		got[r.Name] = r.Outcome
		if r.Name == arch && (!strings.Contains(r.Error, "quarantine/ blobs acknowledged") || !strings.Contains(r.Error, "archived/")) {
			t.Errorf("the archived copy's reason: %q", r.Error)
		}
	}
	if got[root] != "wouldAck" || got[q] != "wouldAck" || got[arch] != "excluded" {
		t.Fatalf("ack --dry-run: %v", got)
	}
	if len(lsJSONOf(t, "--dir", dir, "--filter", "is:acked").Blobs) != 0 || listNames(t, dir) != before {
		t.Fatal("ack --dry-run acknowledged a blob")
	}
	mustRun(t, "ack", root, "--dir", dir, "--yes")
	if out := mustRun(t, "ack", "--clear", root, "--dir", dir, "--dry-run"); !strings.Contains(out, "would clear") || !strings.Contains(out, "dry run, nothing changed") {
		t.Fatalf("ack --clear --dry-run:\n%s", out)
	}
	if n := len(lsJSONOf(t, "--dir", dir, "--filter", "is:acked").Blobs); n != 1 {
		t.Fatalf("ack --clear --dry-run cleared the ack: %d acked", n)
	}
}
