package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/internal/twin"
	"github.com/deadletter/deadletter/replay/rules"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// A twin that lost an event says so and exits 1 — twin status and twin advance, text and JSON — so a soak or a
// script stops on it. The loss is seeded: a root dead letter deleted behind the twin's back.
func TestTwinStatusExitsNonZeroOnALoss(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, "twin", "start", "--dir", dir)
	if out := mustRun(t, "twin", "status", "--dir", dir); strings.Contains(out, "NOWHERE") || strings.Contains(out, "VIOLATION") {
		t.Fatalf("a fresh twin is broken:\n%s", out)
	}
	d, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l, err := store.ListAll(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	gone := ""
	for _, bi := range l.Blobs {
		if rules.IsRoot(bi.Name) {
			gone = bi.Name
			break
		}
	}
	if gone == "" {
		t.Fatal("the twin has no root blob")
	}
	if err := d.Delete(ctx, gone, ""); err != nil {
		t.Fatal(err)
	}

	out, errs, code := runCmd(t, "twin", "status", "--dir", dir)
	if code != exitFindings || !strings.Contains(out, "NOWHERE") || !strings.Contains(errs, "account does not balance") {
		t.Fatalf("twin status after a loss: exit %d\n%s\n%s", code, out, errs)
	}
	out, _, code = runCmd(t, "twin", "status", "--dir", dir, "--json")
	var st struct {
		Account struct {
			Nowhere []string `json:"nowhere"`
		} `json:"account"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != exitFindings || len(st.Account.Nowhere) == 0 {
		t.Fatalf("twin status --json after a loss: exit %d, %v\n%s", code, err, out)
	}
	if out, errs, code := runCmd(t, "twin", "advance", "--dir", dir, "--by", "1m"); code != exitFindings || !strings.Contains(out, "NOWHERE") {
		t.Fatalf("twin advance after a loss: exit %d\n%s\n%s", code, out, errs)
	}
}

// A violation alone — the account balanced — is exit 1 too, and says how many; a clean twin is exit 0. (No
// command can make the twin break an estate rule, so this is the seam twin status and advance share.)
func TestTwinBrokenCountsViolations(t *testing.T) {
	t.Parallel()
	ok := twin.Account{Published: 3, Delivered: 1, InBlobs: 2, Nowhere: []string{}}
	if err := twinBroken(ok, nil, true); err != nil {
		t.Fatalf("a clean twin: %v", err)
	}
	err := twinBroken(ok, []string{"2026-12-01T12:00:00Z: event x|3 was republished past the cap (2)"}, true)
	var ec exitCode
	if !errors.As(err, &ec) || ec.code != exitFindings || !strings.Contains(err.Error(), "broken 1 time(s)") {
		t.Fatalf("a violation: %v", err)
	}
}
