package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/testkit"
	"github.com/deadletter/deadletter/store/storetest"
)

// No output, error or log line contains an account key, a SAS signature, a client secret or a bearer token,
// whatever fails: an unreachable endpoint, a refused key, a failed Entra ID sign-in.
func TestNoSecretInAnyOutput(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := l.Addr().String()
	l.Close()
	const key = "U2VjcmV0QWNjb3VudEtleVNlY3JldEFjY291bnRLZXlTZWNyZXRBY2NvdW50S2V5U2VjcmV0QWNjb3VudEtleQ=="
	const sig = "SuperSecretSasSignature0123456789abcdef%3D"
	const clientSecret = "client-secret-Zm9vYmFyYmF6cXV4"
	secrets := []string{key, key[:24], sig, "SuperSecretSasSignature", clientSecret, "Bearer "}

	azurite := storetest.AzuriteConnectionString(t)
	var wrongKey []string
	for _, p := range strings.Split(azurite, ";") {
		if strings.HasPrefix(p, "AccountKey=") {
			p = "AccountKey=" + key
		}
		wrongKey = append(wrongKey, p)
	}
	hole, _ := blackHole(t) // accepts connections, never answers
	azEndpoint := azurite[strings.Index(azurite, "BlobEndpoint=")+len("BlobEndpoint="):]
	azEndpoint = strings.TrimSuffix(azEndpoint, ";")
	sas := "sv=2024-08-04&ss=b&srt=sco&sp=rl&se=2030-01-01T00:00:00Z&sig=" + sig
	targets := map[string][]string{
		"sas, refused port":       {"--connection-string", "BlobEndpoint=http://" + closed + "/acct;SharedAccessSignature=" + sas},
		"sas, black hole":         {"--connection-string", "BlobEndpoint=http://" + hole + "/acct;SharedAccessSignature=" + sas, "--timeout", "2s"},
		"sas, refused (403)":      {"--connection-string", "BlobEndpoint=" + azEndpoint + ";SharedAccessSignature=" + sas},
		"account key, refused":    {"--connection-string", strings.Join(wrongKey, ";")},
		"account key, no route":   {"--connection-string", "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=" + key + ";BlobEndpoint=http://" + closed + "/acct;"},
		"account key, black hole": {"--connection-string", "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=" + key + ";BlobEndpoint=http://" + hole + "/acct;", "--timeout", "2s"},
		"entra id":                {"--account-url", "http://" + closed + "/acct"},
		"bad account url":         {"--account-url", "https://[acct.blob.core.windows.net/?sp=r&sig=" + sig},
		"account url with sas":    {"--account-url", "http://" + hole + "/acct?sp=r&sig=" + sig, "--timeout", "2s"},
	}
	t.Setenv("AZURE_TENANT_ID", "00000000-0000-0000-0000-000000000000")
	t.Setenv("AZURE_CLIENT_ID", "00000000-0000-0000-0000-000000000001")
	t.Setenv("AZURE_CLIENT_SECRET", clientSecret)
	t.Setenv("AZURE_AUTHORITY_HOST", "http://"+closed+"/") // fail fast instead of reaching out
	// Each failure waits out the SDK's retries; the runs go side by side (each has its own options).
	var wg sync.WaitGroup
	for label, target := range targets {
		for _, cmd := range [][]string{
			{"ls"}, {"ls", "--json"}, {"show", "S/a.json"}, {"show", "S/a.json", "--json"}, {"check"}, {"check", "--json"},
			{"drain", "--yes"}, {"drain", "S/a.json", "--yes", "--json"}, {"restore", "quarantine/S/a.json", "--yes"}, {"seed", "--count", "1"},
		} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var out, errs bytes.Buffer
				code := run(context.Background(), append(cmd, target...), stdio{in: strings.NewReader(""), out: &out, err: &errs})
				if code == 0 && cmd[0] != "drain" && cmd[0] != "restore" {
					t.Errorf("%s %v succeeded against a broken target", label, cmd)
				}
				for _, s := range secrets {
					if strings.Contains(out.String(), s) || strings.Contains(errs.String(), s) {
						t.Errorf("%s %v printed a secret (%q):\n%s\n%s", label, cmd, s, out.String(), errs.String())
					}
				}
			}()
		}
	}
	// The --exec hook's stdin carries the failure too: scrubbed like everything else.
	for label, target := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hook := filepath.Join(t.TempDir(), "hook.jsonl")
			ctx, cancel := context.WithCancel(context.Background())
			out := &testkit.LockedBuffer{}
			done := make(chan int)
			go func() {
				done <- run(ctx, append([]string{"watch", "--json", "--interval", "1h", "--exec", "cat >> " + hook}, target...), stdio{in: strings.NewReader(""), out: out, err: out})
			}()
			finished := false
			for deadline := time.Now().Add(60 * time.Second); !finished && !strings.Contains(out.String(), `"kind":"error"`); {
				select {
				case code := <-done: // a target that cannot even be opened ends watch at once, exit 2
					finished = true
					if code != 2 {
						t.Errorf("%s: watch exit %d", label, code)
					}
				case <-time.After(20 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					t.Errorf("%s: watch never reported the failure: %s", label, out.String())
					break
				}
			}
			cancel()
			if !finished {
				<-done
			}
			got, _ := os.ReadFile(hook)
			for _, s := range secrets {
				if strings.Contains(out.String(), s) || strings.Contains(string(got), s) {
					t.Errorf("%s: watch or its --exec input carried a secret (%q):\n%s\n%s", label, s, out.String(), got)
				}
			}
		}()
	}
	wg.Wait()
}

// blackHole is an address that accepts connections and never answers (a look at it hangs until stopped), and
// how many connections it has taken.
func blackHole(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	accepted := &atomic.Int64{}
	go func() {
		var held []net.Conn
		for {
			c, err := l.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			accepted.Add(1)
			held = append(held, c)
		}
	}()
	return l.Addr().String(), accepted
}

// A secret typed as a flag is in every process's view of the command line: the tool warns, naming the variable to
// use instead (and says nothing for the storage emulator's well-known key).
func TestASecretFlagIsWarnedAbout(t *testing.T) {
	t.Parallel()
	cs := "DefaultEndpointsProtocol=https;AccountName=prod;AccountKey=" + strings.Repeat("k", 40) + ";EndpointSuffix=core.windows.net"
	_, errs, _ := runCmd(t, "ls", "--connection-string", cs, "--timeout", "1ms")
	if !strings.Contains(errs, "warning: --connection-string holds a secret") || !strings.Contains(errs, "AZURE_STORAGE_ACCOUNT_CONNECTION_STRING") || strings.Contains(errs, strings.Repeat("k", 40)) {
		t.Fatalf("stderr: %s", errs)
	}
	_, errs, _ = runCmd(t, "ls", "--account-url", "https://prod.blob.core.windows.net/?sv=2024-01-01&sig=abc", "--timeout", "1ms")
	if !strings.Contains(errs, "warning: --account-url holds a secret") {
		t.Fatalf("stderr: %s", errs)
	}
}
