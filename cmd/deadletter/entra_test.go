package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deadletter/deadletter/internal/testkit"
	"github.com/deadletter/deadletter/store/storetest"
)

// The Microsoft Entra ID path for real: Azurite in OAuth mode over HTTPS (a certificate made here, trusted through
// the standard SSL_CERT_FILE), and a loopback endpoint that hands out tokens the way App Service's managed identity
// does (IDENTITY_ENDPOINT and IDENTITY_HEADER): azidentity's DefaultAzureCredential picks its managed-identity
// credential from those two variables, with no code of ours choosing it. The real binary runs with no key, no
// SAS and no connection string anywhere: only the token.

// entraRig is one Azurite in OAuth mode and one token endpoint.
type entraRig struct {
	accountURL string // https://127.0.0.1:PORT/devstoreaccount1
	certFile   string
	header     string // the IDENTITY_HEADER secret the endpoint demands
	tokens     *tokenEndpoint
	home       string // an empty HOME and PATH: no az, no azd, no config file
}

// tokenEndpoint serves App Service's managed identity protocol (api-version 2019-08-01): GET
// ?api-version=…&resource=… with the X-IDENTITY-HEADER header. The path says which token it mints: /valid, /expired
// (exp an hour ago, though the answer says it is good for an hour, as a clock-skewed or replayed token would be),
// /audience (a token for Key Vault, not Storage).
type tokenEndpoint struct {
	url    string
	mu     sync.Mutex
	served map[string]int
	minted []string // every token handed out: none may ever be printed
}

func (e *tokenEndpoint) count(kind string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.served[kind]
}

func (e *tokenEndpoint) tokens() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.minted...)
}

// jwt is an unsigned-in-spirit JWT with Entra's claims: Azurite checks aud, iss, nbf and exp, not the signature.
func jwt(aud string, exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	head, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT"})
	const tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
	claims, _ := json.Marshal(map[string]any{
		"aud": aud, "iss": "https://sts.windows.net/" + tenant + "/", "tid": tenant,
		"oid": "00000000-0000-0000-0000-0000000000aa", "appid": "00000000-0000-0000-0000-0000000000bb",
		"iat": time.Now().Add(-2 * time.Hour).Unix(), "nbf": time.Now().Add(-2 * time.Hour).Unix(), "exp": exp.Unix(),
	})
	sig := make([]byte, 64)
	rand.Read(sig)
	return enc(head) + "." + enc(claims) + "." + enc(sig)
}

func startTokenEndpoint(t *testing.T, header string) *tokenEndpoint {
	t.Helper()
	e := &tokenEndpoint{served: map[string]int{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Header.Get("X-IDENTITY-HEADER") != header || q.Get("api-version") != "2019-08-01" {
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
			return
		}
		resource := q.Get("resource")
		aud, exp := resource, time.Now().Add(time.Hour)
		kind := strings.Trim(r.URL.Path, "/")
		switch kind {
		case "valid":
		case "expired":
			exp = time.Now().Add(-time.Hour)
		case "audience":
			aud = "https://vault.azure.net"
		default:
			http.NotFound(w, r)
			return
		}
		tok := jwt(aud, exp)
		e.mu.Lock()
		e.served[kind]++
		e.minted = append(e.minted, tok)
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"access_token": tok, "token_type": "Bearer", "resource": resource,
			"expires_on": strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)})
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	e.url = "http://" + l.Addr().String()
	return e
}

// selfSigned writes a certificate for 127.0.0.1 and its key (PEM) into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "deadletter test Azurite"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// freePort is a loopback port nothing listens on (Azurite takes its port as a number).
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// startEntraRig starts Azurite (DEADLETTER_AZURITE_BIN, which ./test.sh sets) in OAuth mode over HTTPS, and the
// token endpoint. Without Azurite it skips, or fails under CI.
func startEntraRig(t *testing.T) *entraRig {
	t.Helper()
	bin := os.Getenv("DEADLETTER_AZURITE_BIN")
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("DEADLETTER_AZURITE_BIN is not set: ./test.sh sets it")
		}
		t.Skip("no Azurite to run in OAuth mode: run ./test.sh (it sets DEADLETTER_AZURITE_BIN)")
	}
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	port := startOAuthAzurite(t, bin, dir, cert, key)
	b := make([]byte, 16)
	rand.Read(b)
	header := "identity-header-" + hex.EncodeToString(b)
	empty := t.TempDir()
	return &entraRig{accountURL: "https://127.0.0.1:" + port + "/devstoreaccount1", certFile: cert, header: header,
		tokens: startTokenEndpoint(t, header), home: empty}
}

// startOAuthAzurite starts Azurite in OAuth mode over HTTPS on a free loopback port and returns the port once it
// listens. An Azurite that exits before it listens (the port taken between freePort and its bind: it says nothing
// with --silent; CI saw two at once) is started again on another port, three times at most.
func startOAuthAzurite(t *testing.T, bin, dir, cert, key string) string {
	t.Helper()
	var logs []string
attempts:
	for attempt := 0; attempt < 3; attempt++ {
		port := freePort(t)
		cmd := exec.Command(bin, "--blobHost", "127.0.0.1", "--blobPort", port, "--oauth", "basic", "--cert", cert, "--key", key,
			"--inMemoryPersistence", "--skipApiVersionCheck", "--disableTelemetry", "--silent")
		cmd.Dir = dir // anything it writes stays in the test's directory
		var log testkit.LockedBuffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(25 * time.Millisecond) {
			select {
			case <-exited:
				logs = append(logs, fmt.Sprintf("port %s: %q", port, log.String()))
				continue attempts
			default:
			}
			if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
				c.Close()
				t.Cleanup(func() { cmd.Process.Kill(); <-exited })
				return port
			}
		}
		cmd.Process.Kill()
		<-exited
		t.Fatalf("Azurite (OAuth, HTTPS) did not listen on %s within 20s: %s", port, log.String())
	}
	t.Fatalf("Azurite (OAuth, HTTPS) exited before it listened, three times: %s", strings.Join(logs, "; "))
	return ""
}

// env is the whole environment of one run: the certificate trusted through SSL_CERT_FILE, and the managed identity
// endpoint's path (valid, expired, audience), or none at all ("").
func (r *entraRig) env(kind string) []string {
	env := []string{"HOME=" + r.home, "PATH=" + r.home, "SSL_CERT_FILE=" + r.certFile, "XDG_CONFIG_HOME=" + r.home}
	if kind != "" {
		env = append(env, "IDENTITY_ENDPOINT="+r.tokens.url+"/"+kind, "IDENTITY_HEADER="+r.header)
	}
	return env
}

// run runs the real binary in the rig with the token kind given.
func (r *entraRig) run(t *testing.T, kind string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = r.env(kind)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func (r *entraRig) must(t *testing.T, code int, args ...string) string {
	t.Helper()
	out, errs, got := r.run(t, "valid", args...)
	if got != code {
		t.Fatalf("deadletter %v: exit %d, want %d\n%s\n%s", args, got, code, out, errs)
	}
	return out
}

// ls, check, drain and restore through --account-url with a managed identity's token, over HTTPS: the sign-in most
// estates use. It fails if the bearer path is broken (there is no other credential to fall back on).
func TestEntraIDEndToEnd(t *testing.T) {
	t.Parallel()
	r := startEntraRig(t)
	reg := filepath.Join(t.TempDir(), "handlers.json")
	args := []string{"--account-url", r.accountURL, "--container", storetest.NewName(), "--ttl", "2s", "--handlers", reg}
	r.must(t, 0, append([]string{"seed", "--count", "5", "--register-out", reg}, args...)...)
	if r.tokens.count("valid") == 0 {
		t.Fatal("seed wrote without asking the managed identity endpoint for a token")
	}
	lsOf := func(extra ...string) []map[string]any {
		var l lsOut
		out := r.must(t, 0, append(append([]string{"ls", "--json"}, args...), extra...)...)
		if err := json.Unmarshal([]byte(out), &l); err != nil {
			t.Fatalf("ls --json: %v\n%s", err, out)
		}
		return l.Blobs
	}
	// Azure cannot backdate: wait (bounded) until the service clock takes the seeded roots past the TTL.
	eventually(t, "the seeded blobs pass the 2s TTL", func() bool { return len(lsOf("--pane", "live")) == 0 })
	panes := map[string]int{}
	var quarantined []string
	modified := map[string]string{}
	for _, b := range lsOf() {
		panes[b["pane"].(string)]++
		modified[b["name"].(string)] = b["lastModified"].(string)
		if b["pane"] == "quarantine" {
			quarantined = append(quarantined, b["name"].(string))
		}
	}
	if panes["stranded"] == 0 || panes["quarantine"] == 0 || panes["archived"] == 0 {
		t.Fatalf("ls through Entra ID sees panes %v", panes)
	}
	// A plain ls, as an operator reads it: the account named, no credential in it.
	if out := r.must(t, 0, append([]string{"ls"}, args...)...); !strings.Contains(out, "stranded") {
		t.Fatalf("ls:\n%s", out)
	}
	if out := r.must(t, exitFindings, append([]string{"check"}, args...)...); !strings.Contains(out, "stranded") {
		t.Fatalf("check:\n%s", out)
	}

	var res struct {
		DryRun  bool
		Results []struct{ Name, Outcome, Target, Error string }
	}
	dry := r.must(t, 0, append([]string{"drain", "--dry-run", "--yes", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(dry), &res); err != nil || !res.DryRun {
		t.Fatalf("drain --dry-run: %v\n%s", err, dry)
	}
	out := r.must(t, 0, append([]string{"drain", "--yes", "--json"}, args...)...) // handled copies are passed by (exit 0)
	res.Results = nil
	json.Unmarshal([]byte(out), &res)
	drained := 0
	for _, x := range res.Results {
		if x.Outcome == "drained" {
			drained++
		}
	}
	if drained == 0 {
		t.Fatalf("drain through Entra ID drained nothing:\n%s", out)
	}
	res0 := res.Results
	out = r.must(t, exitNotDone, append(append([]string{"restore", "--yes", "--json"}, args...), quarantined...)...) // some are refused
	res.Results = nil
	json.Unmarshal([]byte(out), &res)
	restored := 0
	for _, x := range res.Results {
		if x.Outcome == "restored" {
			restored++
		}
	}
	if restored == 0 {
		t.Fatalf("restore through Entra ID restored nothing:\n%s", out)
	}
	// What the drain wrote is there: every drained root was uploaded again (its Last-Modified moved on).
	after := map[string]string{}
	for _, b := range lsOf() {
		after[b["name"].(string)] = b["lastModified"].(string)
	}
	for _, x := range res0 {
		if x.Outcome == "drained" && after[x.Name] <= modified[x.Name] {
			t.Errorf("%s drained but not written: Last-Modified %s, before %s", x.Name, after[x.Name], modified[x.Name])
		}
	}
}

// A token Azure refuses (expired, or issued for another audience) and no credential at all: each ends in one
// sentence that names the sign-in that failed and what to do, exit 2, and nothing secret in any output.
func TestEntraIDFailuresSayWhichSignIn(t *testing.T) {
	t.Parallel()
	r := startEntraRig(t)
	container := storetest.NewName()
	cases := []struct {
		kind string
		want []string
	}{
		{"expired", []string{"Microsoft Entra ID", "refused the token", "az login", "a role does not help"}},
		{"audience", []string{"Microsoft Entra ID", "refused the token", "another audience", "az login"}},
		{"", []string{"Microsoft Entra ID sign-in failed", "no credential", "az login", "managed identity"}},
	}
	for _, c := range cases {
		for _, cmd := range [][]string{{"ls"}, {"check", "--json"}, {"drain", "--yes"}} {
			out, errs, code := r.run(t, c.kind, append(cmd, "--account-url", r.accountURL, "--container", container)...)
			label := c.kind
			if label == "" {
				label = "no credential"
			}
			if code != exitError {
				t.Errorf("%s %v: exit %d, want 2\n%s\n%s", label, cmd, code, out, errs)
			}
			msg := strings.TrimSpace(errs)
			if cmd[0] == "check" {
				msg = strings.TrimSpace(out + errs)
			}
			if strings.Count(msg, "\n") > 0 && cmd[0] != "check" {
				t.Errorf("%s %v: not one line:\n%s", label, cmd, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s %v: no %q in:\n%s", label, cmd, w, msg)
				}
			}
			if strings.Contains(msg, "account key") || strings.Contains(msg, "SAS") {
				t.Errorf("%s %v names a credential it did not use:\n%s", label, cmd, msg)
			}
			for _, secret := range append(r.tokens.tokens(), r.header, "Bearer ", "eyJ") {
				if strings.Contains(out, secret) || strings.Contains(errs, secret) {
					t.Errorf("%s %v printed a secret (%.20q…):\n%s\n%s", label, cmd, secret, out, errs)
				}
			}
		}
	}
	if r.tokens.count("expired") == 0 || r.tokens.count("audience") == 0 {
		t.Fatalf("the refused tokens were never asked for: %v", r.tokens.served)
	}
}
