package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/store/storetest"
)

// --connection-string-file and a context's connection-string-file: read a connection string from a file (what
// systemd's LoadCredential= gives a service), never printing it.
func TestConnectionStringFile(t *testing.T) {
	cs := storetest.AzuriteConnectionString(t)
	az := storetest.Azure(t)
	container := strings.TrimPrefix(az.Describe(), "devstoreaccount1/")
	dir := t.TempDir()
	file := filepath.Join(dir, "connection-string")
	if err := os.WriteFile(file, []byte(cs+"\n"), 0o600); err != nil { // echo's newline, as an operator writes it
		t.Fatal(err)
	}
	if l := lsJSONOf(t, "--connection-string-file", file, "--container", container); l.Container == "" || len(l.Blobs) != 0 {
		t.Fatalf("ls through --connection-string-file: %+v", l)
	}
	t.Setenv("DEADLETTER_CONNECTION_STRING_FILE", file)
	if l := lsJSONOf(t, "--container", container); len(l.Blobs) != 0 || !strings.Contains(l.Container, container) {
		t.Fatalf("ls through DEADLETTER_CONNECTION_STRING_FILE: %+v", l)
	}
	t.Setenv("DEADLETTER_CONNECTION_STRING_FILE", "")

	// The context key: a config file may name the file, never hold the secret.
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte("contexts:\n  - name: az\n    connection-string-file: "+file+"\n    container: "+container+"\n"), 0o600)
	if l := lsJSONOf(t, "--config", cfg, "--context", "az"); !strings.Contains(l.Container, container) {
		t.Fatalf("ls through the context's connection-string-file: %+v", l)
	}
	both := filepath.Join(dir, "both.yaml")
	os.WriteFile(both, []byte("contexts:\n  - name: az\n    connection-string-file: "+file+"\n    connection-string-env: X\n"), 0o600)
	if _, errs, code := runCmd(t, "ls", "--config", both, "--context", "az"); code != exitError || !strings.Contains(errs, "names two connection strings") {
		t.Fatalf("a context with two connection strings: exit %d %s", code, errs)
	}

	// What cannot be used is said without the contents: empty, more than one line, missing, a directory, two
	// containers named.
	secret := "AccountKey=U2VjcmV0U2VjcmV0U2VjcmV0"
	bad := map[string]string{"empty": "  \n", "two lines": "AccountName=a;" + secret + "\nsecond line\n"}
	for label, body := range bad {
		p := filepath.Join(dir, strings.ReplaceAll(label, " ", "-"))
		os.WriteFile(p, []byte(body), 0o600)
		out, errs, code := runCmd(t, "ls", "--connection-string-file", p)
		if code != exitError || !strings.Contains(errs, "--connection-string-file") || strings.Contains(out+errs, "U2VjcmV0") {
			t.Errorf("%s file: exit %d\n%s%s", label, code, out, errs)
		}
	}
	for _, args := range [][]string{
		{"--connection-string-file", filepath.Join(dir, "missing")},
		{"--connection-string-file", dir},
		{"--connection-string-file", file, "--connection-string", "UseDevelopmentStorage=true"},
	} {
		_, errs, code := runCmd(t, append([]string{"ls"}, args...)...)
		if code != exitError || !strings.Contains(errs, "--connection-string-file") || strings.Contains(errs, "AccountKey=") {
			t.Errorf("%v: exit %d %s", args, code, errs)
		}
	}
}
