// Package hook runs the operator's notifier for watch --exec: one shell command per line, the line on its
// standard input, in a process group (a job object on Windows) of its own, so that whatever it starts — a
// `curl … &` included — ends with it: when the command's main process exits, the rest of its group gets a short
// grace and is then killed, and the same happens at its timeout or when watch stops. On Linux a child that left
// the group (setsid) is found by a mark in its environment and killed too, and deadletter is its subreaper, so
// nothing a hook starts outlives it. The command runs as the operator, and sees an allow-list of the environment
// (Allowed, plus what the operator passes by name, never a credential variable) and DEADLETTER_* variables
// describing the change.
package hook

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"
)

// Options are one run's input, output and bounds.
type Options struct {
	// Stdin is what the command reads.
	Stdin []byte
	// Env is added to the scrubbed environment (DEADLETTER_* variables).
	Env []string
	// Secrets are values that must not reach the command in any variable (a --connection-string's key).
	Secrets []string
	// Pass names variables the operator lets through besides Allowed (watch --exec-env): never one of the
	// credential variables (CredentialNames), nor one whose value holds a secret.
	Pass []string
	// Output receives the command's standard output and error.
	Output io.Writer
	// Timeout bounds the whole group; Grace is how long the rest of the group may run once the main process
	// has exited (or been told to stop) before it is killed.
	Timeout, Grace time.Duration
}

// ErrTimeout is returned when the command did not finish within Options.Timeout and was killed with its group.
var ErrTimeout = errors.New("did not finish in time and was stopped, with everything it started")

// Run runs command through the system shell (sh -c; cmd /C on Windows) and returns once its main process has
// exited, with its error. What the command left running in its group gets Options.Grace in the background and is
// then killed: done is closed when the group is gone. A cancelled ctx (watch stopping) or the timeout kills the
// whole group at once.
func Run(ctx context.Context, command string, o Options) (done <-chan struct{}, err error) {
	if o.Grace <= 0 {
		o.Grace = time.Second
	}
	finished := make(chan struct{})
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.Timeout, ErrTimeout)
		go func() { <-finished; cancel() }()
	}
	harden()
	cmd := shell(command)
	mark := newMark()
	cmd.Env = append(append(Scrub(Allow(os.Environ(), o.Pass), o.Secrets), o.Env...), markVar+"="+mark)
	cmd.Stdin = strings.NewReader(string(o.Stdin))
	// The output goes through a pipe of our own, not os/exec's: a background child that holds it open must not
	// keep Wait from seeing the main process exit.
	pr, pw, err := os.Pipe()
	if err != nil {
		close(finished)
		return finished, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		out := o.Output
		if out == nil {
			out = io.Discard
		}
		io.Copy(out, pr)
	}()
	g, err := start(cmd, mark)
	pw.Close()
	if err != nil {
		pr.Close()
		<-copied
		close(finished)
		return finished, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var runErr error
	select {
	case runErr = <-exited:
	case <-ctx.Done():
		g.kill()
		<-exited
		if errors.Is(context.Cause(ctx), ErrTimeout) {
			runErr = ErrTimeout
		} else {
			runErr = fmt.Errorf("stopped: %w", context.Cause(ctx))
		}
	}
	go func() {
		defer close(finished)
		g.reap(ctx, o.Grace) // whatever it left has the grace to finish, then goes
		g.close()
		// Every writer of the pipe is gone with the group: the copy sees its end (a process that left the group on
		// purpose could hold it; it is not waited for).
		select {
		case <-copied:
		case <-time.After(o.Grace):
		}
		pr.Close()
		<-copied
	}()
	return finished, runErr
}

// markVar carries a run's mark into everything it starts: on Linux, what left the process group is found by it.
const markVar = "DEADLETTER_HOOK_RUN"

func newMark() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Allowed are the variables a hook gets from deadletter's environment: what a shell and the usual notifiers
// (curl, mail, a script) need to run, and nothing that can carry a credential. Any other variable reaches it only
// when the operator names it (Options.Pass).
var Allowed = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM", "HOSTNAME",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR",
	// Windows
	"SystemRoot", "SYSTEMROOT", "windir", "WINDIR", "ComSpec", "COMSPEC", "PATHEXT", "TEMP", "TMP", "USERPROFILE",
	"USERNAME", "APPDATA", "LOCALAPPDATA", "ProgramData", "PROGRAMDATA", "ProgramFiles", "PROGRAMFILES", "SystemDrive", "SYSTEMDRIVE"}

// Allow keeps of env the Allowed variables, the LC_* ones, and those named in pass that are no credential.
func Allow(env, pass []string) []string {
	out := make([]string, 0, len(Allowed))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		keep := strings.HasPrefix(k, "LC_")
		for _, n := range Allowed {
			keep = keep || k == n
		}
		for _, n := range pass {
			keep = keep || k == n && !isCredential(k)
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

func isCredential(k string) bool {
	for _, n := range CredentialNames {
		if strings.EqualFold(k, n) {
			return true
		}
	}
	return false
}

// CredentialNames are the variables that hold credentials deadletter, the Azure SDK and azidentity (service
// principal, workload and managed identity), the Azure CLI, Terraform's azurerm provider and App Service read:
// never passed to a hook, even when the operator names one.
var CredentialNames = []string{
	"AZURE_STORAGE_ACCOUNT_CONNECTION_STRING", "AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_KEY",
	"AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_SAS_TOKEN", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PASSWORD",
	"AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_PASSWORD", "AZURE_USERNAME", "AZURE_FEDERATED_TOKEN", "AZURE_FEDERATED_TOKEN_FILE",
	"AZURE_ACCESS_TOKEN", "AZURE_DEVOPS_EXT_PAT", "AZURE_CONFIG_DIR", "IDENTITY_ENDPOINT", "IDENTITY_HEADER", "IDENTITY_SERVER_THUMBPRINT",
	"MSI_ENDPOINT", "MSI_SECRET", "IMDS_ENDPOINT", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL", "SYSTEM_ACCESSTOKEN",
	"ARM_CLIENT_SECRET", "ARM_CLIENT_CERTIFICATE_PASSWORD", "ARM_CLIENT_CERTIFICATE_PATH", "ARM_ACCESS_KEY", "ARM_SAS_TOKEN",
	"ARM_OIDC_TOKEN", "ARM_OIDC_TOKEN_FILE_PATH", "ARM_OIDC_REQUEST_TOKEN", "ARM_ACCESS_TOKEN",
	"DEADLETTER_CONNECTION_STRING", "DEADLETTER_AZURITE",
}

var secretNames = CredentialNames

// secretValue matches what a credential looks like inside any variable: an account key or SAS in a connection
// string, a SAS signature in a URL.
var secretValue = regexp.MustCompile(`(?i)(AccountKey=|SharedAccessSignature=|[?&]sig=|^sv=\d{4}-\d\d-\d\d&)`)

// Scrub returns env without the variables that hold a secret: the known names, any whose value holds one of
// secrets or a part of one that is a secret on its own (SecretParts), and any whose value looks like an account
// key, SAS or connection string.
func Scrub(env, secrets []string) []string {
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		for _, n := range secretNames {
			if strings.EqualFold(k, n) {
				continue next
			}
		}
		for _, s := range secrets {
			for _, part := range SecretParts(s) {
				if len(part) >= 8 && strings.Contains(v, part) {
					continue next
				}
			}
		}
		if secretValue.MatchString(v) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// SecretParts are a credential and each part of it that is a secret alone: a connection string's AccountKey and
// SharedAccessSignature, a SAS's signature (sig) — as it is written, and decoded — and a URL's signature. A variable
// that holds only the key, or only the signature, holds the secret all the same.
func SecretParts(secret string) []string {
	parts := []string{secret}
	add := func(v string) {
		if v == "" {
			return
		}
		parts = append(parts, v)
		if d, err := url.QueryUnescape(v); err == nil && d != v {
			parts = append(parts, d)
		}
		if e := url.QueryEscape(v); e != v {
			parts = append(parts, e)
		}
	}
	sas := func(q string) {
		if vals, err := url.ParseQuery(strings.TrimPrefix(q, "?")); err == nil {
			add(vals.Get("sig"))
		}
	}
	for _, kv := range strings.Split(secret, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			continue
		}
		switch strings.ToLower(k) {
		case "accountkey":
			add(v)
		case "sharedaccesssignature":
			add(v)
			sas(v)
		}
	}
	if u, err := url.Parse(secret); err == nil && u.RawQuery != "" {
		sas(u.RawQuery)
	}
	return parts
}
