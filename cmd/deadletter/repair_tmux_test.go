package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
)

// The dashboard's way out and back, on the real binary: v pages the payload escaped, s saves its exact bytes, e
// on a quarantine copy opens the editor, shows the preview, and on y opens the new root blob.
func TestRepairKeysInTmux(t *testing.T) {
	dir, name := repairDir(t)
	// A payload with an escape sequence in it: the pager must get it escaped.
	d, _ := dirstore.Open(dir)
	hostile := strings.Replace(noData, `"subject":"s"`, `"subject":"\u001b[2J"`, 1)
	raw := strings.Replace(hostile, `\u001b`, "\x1b", 1) // (a raw ESC in a JSON string is malformed: fine, it is to be fixed)
	if _, err := d.Write(context.Background(), name, []byte(raw), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	paged := filepath.Join(work, "paged")
	pager := filepath.Join(work, "pager")
	// (copied, then renamed: the test reads the file once it exists, so it must exist whole)
	os.WriteFile(pager, []byte("#!/bin/sh\ncp \"$1\" '"+paged+".tmp' && mv '"+paged+".tmp' '"+paged+"'\n"), 0o700)
	editor := editorScript(t, withData, "")
	saved := filepath.Join(work, "saved.json")
	tm := newTerm(t, 120, 40, "env", "PAGER="+pager, "EDITOR="+editor, "VISUAL=", binary(t), "--dir", dir, "--interval", "1h")
	tm.screen("[1 Stranded")
	tm.keys("2")
	tm.screen("[2 Quarantine")
	tm.keys("/")
	tm.keys("-l", "0b8c2f7e")
	tm.keys("Enter")
	tm.screen("filter: 0b8c2f7e")
	tm.keys("Enter")
	tm.screen("quarantine ·")

	tm.keys("v")
	waitFile(t, paged)
	if b, _ := os.ReadFile(paged); strings.ContainsRune(string(b), 0x1b) || !strings.Contains(string(b), `\x1b[2J`) {
		t.Fatalf("the pager got %q", b)
	}
	tm.screen("quarantine ·")

	tm.keys("s")
	tm.screen("Save the payload to a file", "file: ")
	tm.keys("C-u")
	tm.keys("-l", saved)
	tm.keys("Enter")
	tm.screen("saved ")
	if b, _ := os.ReadFile(saved); string(b) != raw {
		t.Fatalf("saved %q", b)
	}

	tm.keys("e")
	s := tm.screen("goes back as a new dead letter", "before the edit", "y confirm")
	if !strings.Contains(s, "republishes 1") {
		t.Fatalf("the preview:\n%s", s)
	}
	tm.keys("y")
	tm.screen("repaired", ".repaired-", "live ·")
	if _, err := d.Stat(context.Background(), name); err == nil {
		t.Fatal("the quarantine copy is still there")
	}
	tm.keys("q")
	if code := tm.exited(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// waitFile waits (with a deadline) until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s never appeared", path)
}

// n keeps the edit in a file and writes nothing; a refused edit's y says why it is off, and f writes it anyway.
func TestRepairDeclinedAndForcedInTmux(t *testing.T) {
	dir, name := repairDir(t)
	work := t.TempDir()
	broken := strings.Replace(noData, "ev-1", "ev-2", 1) // still without data: malformed
	editor := editorScript(t, broken, "")
	before := listNames(t, dir)
	tm := newTerm(t, 120, 40, "sh", "-c", `cd "$0" && exec "$@"`, work, "env", "EDITOR="+editor, "VISUAL=", binary(t), "--dir", dir, "--interval", "1h")
	tm.screen("[1 Stranded")
	tm.keys("2")
	tm.screen("[2 Quarantine")
	tm.keys("/")
	tm.keys("-l", "0b8c2f7e")
	tm.keys("Enter")
	tm.screen("filter: 0b8c2f7e")
	tm.keys("Enter")
	tm.screen("quarantine ·")
	tm.keys("e")
	tm.screen("refused: the payload is malformed", "f force")
	tm.keys("n")
	tm.screen("the edit is kept in")
	if b, err := os.ReadFile(filepath.Join(work, "0b8c2f7e-repair.edit.json")); err != nil || string(b) != broken {
		t.Fatalf("kept: %q %v", b, err)
	}
	if listNames(t, dir) != before {
		t.Fatal("a declined edit wrote")
	}
	tm.keys("e")
	tm.screen("refused: the payload is malformed")
	tm.keys("y")
	tm.screen("press f to write it anyway")
	tm.keys("f")
	tm.screen("f: written although refused")
	tm.keys("y")
	tm.screen("live ·", ".repaired-") // (the new root blob's detail: the repair has returned)
	d, _ := dirstore.Open(dir)
	if _, err := d.Stat(context.Background(), name); err == nil {
		t.Fatal("the quarantine copy is still there")
	}
	tm.keys("q")
	tm.exited()
}
