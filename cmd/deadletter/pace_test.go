package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// Issue 50: drain --rate 5/s of 30 blobs takes at least the 5.8 s its pace allows, and drains every one; a rate
// that is not one is a usage error that touches nothing.
func TestDrainRate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 30 {
		name := fmt.Sprintf("WEBHOOKS/2026/12/1/10/%08d-0000-0000-0000-000000000000.json", i)
		body := fmt.Sprintf(`[{"id":"e%d","subject":"s","eventType":"ProcessWebhook","dataVersion":"1","data":{}}]`, i)
		if _, err := d.Write(ctx, name, []byte(body), store.WriteOptions{ContentType: "application/json"}); err != nil {
			t.Fatal(err)
		}
		if err := d.Backdate(ctx, name, time.Now().Add(-2*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []string{"0/s", "-1/s", "5/h", "fast", "NaN/s"} {
		if _, errs, code := runCmd(t, "drain", "--dir", dir, "--rate", bad, "--yes"); code != exitError || !strings.Contains(errs, "--rate") {
			t.Errorf("--rate %s: exit %d, %q", bad, code, errs)
		}
	}
	start := time.Now()
	out := mustRun(t, "drain", "--dir", dir, "--rate", "5/s", "--yes")
	if took := time.Since(start); took < 5800*time.Millisecond {
		t.Fatalf("30 blobs at 5/s took %s", took)
	}
	if !strings.Contains(out, "30 drained") {
		t.Fatalf("%s", out)
	}
}
