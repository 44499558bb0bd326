package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/dirstore"
	"github.com/deadletter/deadletter/store/storetest"
)

// get writes every byte of the hostile corpus as stored, from a directory and from Azurite, to a pipe and to a
// new 0600 file; it never writes over a file.
func TestGetWritesExactBytes(t *testing.T) {
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
