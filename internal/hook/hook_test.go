package hook

import (
	"context"
	"errors"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/testkit"
)

func TestScrubTakesEverySecretOut(t *testing.T) {
	env := []string{"PATH=/bin", "AZURE_STORAGE_ACCOUNT_CONNECTION_STRING=x", "azure_client_secret=y", "BACKUP=AccountName=a;AccountKey=abc",
		"URL=https://a.blob.core.windows.net/c?sv=2024-01-01&sig=abc", "TOKEN=sv=2024-01-01&ss=b&sig=x", "GIVEN=the-flag-secret-value", "HOME=/root"}
	got := strings.Join(Scrub(env, []string{"the-flag-secret-value"}), " ")
	if got != "PATH=/bin HOME=/root" {
		t.Fatalf("scrubbed environment: %s", got)
	}
}

// A hook that hangs is killed at its timeout, with what it started; its output reaches the writer.
func TestRunTimeoutKillsTheGroup(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	var out testkit.LockedBuffer
	start := time.Now()
	done, err := Run(context.Background(), "echo hello; sleep 30 & sleep 30", Options{Output: &out, Timeout: 300 * time.Millisecond, Grace: 100 * time.Millisecond})
	<-done
	if !errors.Is(err, ErrTimeout) || time.Since(start) > 5*time.Second || !strings.Contains(out.String(), "hello") {
		t.Fatalf("err %v after %s, output %q", err, time.Since(start), out.String())
	}
}

// A hook gets an allow-list of the environment, plus the variables the operator names — never a credential
// variable, named or not (the managed identity's, the CLI's, Terraform's).
func TestAHookGetsAnAllowList(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	for k, v := range map[string]string{"SOMETHING_ELSE": "leak1", "IDENTITY_HEADER": "leak2", "MSI_SECRET": "leak3", "ARM_CLIENT_SECRET": "leak4",
		"AZURE_ACCESS_TOKEN": "leak5", "PASS_ME": "passed"} {
		t.Setenv(k, v)
	}
	var out testkit.LockedBuffer
	done, err := Run(context.Background(), "env", Options{Output: &out, Pass: []string{"PASS_ME", "IDENTITY_HEADER"}, Timeout: 5 * time.Second})
	<-done
	if err != nil || strings.Contains(out.String(), "leak") || !strings.Contains(out.String(), "PASS_ME=passed") || !strings.Contains(out.String(), "PATH=") {
		t.Fatalf("the hook's environment (%v):\n%s", err, out.String())
	}
}

// A variable that holds only a part of a credential — the account key alone, a SAS's signature alone, encoded or
// not — is a secret too, and never reaches a hook.
func TestASecretsPartsAreSecrets(t *testing.T) {
	key := "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	sig := "AbC+dEf/gHi=="
	cs := "DefaultEndpointsProtocol=https;AccountName=estate;AccountKey=" + key + ";EndpointSuffix=core.windows.net"
	sasCS := "BlobEndpoint=https://estate.blob.core.windows.net;SharedAccessSignature=sv=2024-01-01&ss=b&srt=co&sp=rl&sig=" + url.QueryEscape(sig)
	sasURL := "https://estate.blob.core.windows.net/?sv=2024-01-01&sp=rl&sig=" + url.QueryEscape(sig)
	env := []string{"KEYONLY=" + key, "SIGONLY=" + sig, "SIGENCODED=" + url.QueryEscape(sig), "KEEP=hello", "HALFKEY=" + key[:20]}
	for _, secret := range []string{cs, sasCS, sasURL} {
		got := Scrub(env, []string{secret})
		for _, kv := range got {
			k, _, _ := strings.Cut(kv, "=")
			switch {
			case k == "KEYONLY" && secret == cs, (k == "SIGONLY" || k == "SIGENCODED") && secret != cs:
				t.Errorf("%s reached the hook with the secret %q", k, secret[:30])
			}
		}
		if !slices.Contains(got, "KEEP=hello") {
			t.Errorf("an innocent variable was dropped: %v", got)
		}
	}
}
