package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"

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
	targets := map[string][]string{
		"sas, unreachable":      {"--connection-string", "BlobEndpoint=http://" + closed + "/acct;SharedAccessSignature=sv=2024-08-04&ss=b&srt=co&sp=rl&sig=" + sig},
		"account key, refused":  {"--connection-string", strings.Join(wrongKey, ";")},
		"account key, no route": {"--connection-string", "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=" + key + ";BlobEndpoint=http://" + closed + "/acct;"},
		"entra id":              {"--account-url", "http://" + closed + "/acct"},
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
	wg.Wait()
}
