// Package azureblob is the dead-letter container in Azure Blob Storage (or Azurite), through azblob, with
// Microsoft Entra ID through azidentity. It is the only package that links the Azure SDK: the command that opens
// a container imports it, nothing else does.
package azureblob

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// Azurite's well-known development account (its key is public, in Microsoft's documentation).
const (
	AzuriteAccount = "devstoreaccount1"
	azuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// azuriteConnectionString is what UseDevelopmentStorage=true stands for, on the blob endpoint given (Azurite's
// default http://127.0.0.1:10000). azblob does not expand the shorthand itself.
func azuriteConnectionString(endpoint string) string {
	return "DefaultEndpointsProtocol=http;AccountName=" + AzuriteAccount + ";AccountKey=" + azuriteKey + ";BlobEndpoint=" + endpoint + "/" + AzuriteAccount + ";"
}

// Options say how to reach the container: a connection string (account key or SAS, Azurite included), or an
// account URL with Microsoft Entra ID through DefaultAzureCredential.
type Options struct {
	ConnectionString string
	AccountURL       string
	Container        string
	// Deadline is how long one command may wait on the service in all (0: no bound beyond the SDK's retries).
	// Each request's tries are sized to fit inside it, so an endpoint that accepts connections but never
	// answers is reported within the deadline, not after five one-minute tries.
	Deadline time.Duration
	// Transport replaces the HTTP client (tests put a fault-injecting proxy here).
	Transport policy.Transporter
}

// Container is a container in Azure Blob Storage (or Azurite).
type Container struct {
	client   *container.Client
	account  string
	endpoint string // scheme://host[:port], for the messages that say where it tried
	local    bool   // a loopback endpoint or the emulator's account name: messages name the endpoint, suggest Azurite
	emulator bool   // the emulator's well-known account and key (see Emulator)
	name     string
	secrets  []string // values that must never appear in an error
	cred     credKind // how requests are signed: what a refusal names
	// untagged is set once the service refused to list tags (a Storage Blob Data Reader has no …/blobs/tags/read):
	// listings then go without them, and an acknowledgement, which replaces the whole tag set, is refused.
	untagged atomic.Bool
	// svc and opts open the audit container (audit.go) beside this one, with the same credential.
	svc  *azblob.Client
	opts *azblob.ClientOptions
	// token is the Microsoft Entra ID credential requests are signed with (nil for a key or a SAS): Principal
	// names who it is, for the record.
	token azcore.TokenCredential
}

// transport keeps enough idle connections for the concurrency deadletter reads and drains with. azcore's default
// keeps 10 per host, so at 16 parallel downloads six connections were closed and dialled again on every wave
// (measured: hydrate 1.24x the raw SDK at its best concurrency, where the SDK did not churn).
var transport = &http.Client{Transport: func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 256, 64
	t.ForceAttemptHTTP2 = true
	// The bytes as stored, always: Go's transport would otherwise ask for gzip and silently inflate a blob stored
	// with Content-Encoding: gzip — show would judge bytes the replay function never sees, and a drain would
	// re-upload different ones.
	t.DisableCompression = true
	t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	return t
}()}

// retryFor sizes the SDK's retries: by default five tries of up to a minute each; within a deadline, three tries
// of a third of it each.
func retryFor(deadline time.Duration) policy.RetryOptions {
	r := policy.RetryOptions{MaxRetries: 4, TryTimeout: 60 * time.Second, RetryDelay: 250 * time.Millisecond, MaxRetryDelay: 4 * time.Second}
	if deadline > 0 {
		r.MaxRetries = 2
		r.TryTimeout = min(max(deadline/3, 2*time.Second), 60*time.Second)
		r.MaxRetryDelay = min(r.MaxRetryDelay, max(deadline/10, 100*time.Millisecond))
	}
	return r
}

// Open builds the client. It does not touch the network; the first call does.
func Open(o Options) (*Container, error) {
	opts := &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: retryFor(o.Deadline)}}
	opts.Transport = transport
	if o.Transport != nil {
		opts.Transport = o.Transport
	}
	a := &Container{name: o.Container, cred: credEntra}
	var svc *azblob.Client
	var err error
	switch {
	case o.ConnectionString != "":
		cs, cerr := expandConnectionString(o.ConnectionString)
		a.secrets = connectionSecrets(cs)
		a.cred = connectionCred(cs)
		if cerr != nil {
			return nil, fmt.Errorf("connection string: %s", a.scrub(cerr.Error()))
		}
		svc, err = azblob.NewClientFromConnectionString(cs, opts)
		if err != nil {
			return nil, fmt.Errorf("connection string: %s (want AccountName=…;AccountKey=… or BlobEndpoint=…;SharedAccessSignature=…, or UseDevelopmentStorage=true)", a.scrub(err.Error()))
		}
	case o.AccountURL != "":
		u, perr := url.Parse(o.AccountURL)
		if perr == nil {
			if sig := u.Query().Get("sig"); sig != "" {
				a.secrets = append(a.secrets, sig, url.QueryEscape(sig))
				a.cred = credSAS // azblob signs nothing more: the SAS in the URL is the credential
			}
		}
		if perr != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			return nil, errors.New("--account-url is not an account URL: want https://<account>.blob.core.windows.net (the value is not repeated here: it may hold a secret)")
		}
		cred, cerr := azidentity.NewDefaultAzureCredential(nil)
		if cerr != nil {
			return nil, fmt.Errorf("no Microsoft Entra ID credential: %s (sign in with `az login`, or set AZURE_CLIENT_ID/AZURE_TENANT_ID/AZURE_CLIENT_SECRET)", a.scrub(cerr.Error()))
		}
		svc, err = azblob.NewClient(o.AccountURL, cred, opts)
		if err != nil {
			return nil, fmt.Errorf("--account-url: %s", a.scrub(err.Error()))
		}
		a.token = cred
	default:
		return nil, errors.New("no container: give --dir, --connection-string (or AZURE_STORAGE_ACCOUNT_CONNECTION_STRING), or --account-url")
	}
	a.client = svc.ServiceClient().NewContainerClient(o.Container)
	a.svc, a.opts = svc, opts
	a.account = accountOf(svc.URL())
	if u, err := url.Parse(svc.URL()); err == nil {
		a.endpoint = u.Scheme + "://" + u.Host
		a.local = a.account == AzuriteAccount || isLoopback(u.Hostname())
	}
	a.emulator = a.account == AzuriteAccount && o.ConnectionString != "" && slices.Contains(a.secrets, azuriteKey)
	return a, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// expandConnectionString turns Azurite's shorthand into a full connection string: UseDevelopmentStorage=true on
// http://127.0.0.1:10000, or on the scheme, host and port of DevelopmentStorageProxyUri (port 10000 when it
// names none). Every other connection string passes as it is.
func expandConnectionString(raw string) (string, error) {
	cs := strings.TrimSpace(raw)
	var dev bool
	proxy := ""
	for _, part := range strings.Split(cs, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case strings.EqualFold(k, "UseDevelopmentStorage"):
			dev = strings.EqualFold(strings.TrimSpace(v), "true")
		case strings.EqualFold(k, "DevelopmentStorageProxyUri"):
			proxy = strings.TrimSpace(v)
		}
	}
	if !dev {
		return cs, nil
	}
	endpoint := "http://127.0.0.1:10000"
	if proxy != "" {
		u, err := url.Parse(proxy)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return "", fmt.Errorf("DevelopmentStorageProxyUri %q: want http://host[:port]", proxy)
		}
		port := u.Port()
		if port == "" {
			port = "10000"
		}
		endpoint = u.Scheme + "://" + net.JoinHostPort(u.Hostname(), port)
	}
	return azuriteConnectionString(endpoint), nil
}

// accountOf names the account from a service URL: the first label of the host, or Azurite's path segment.
func accountOf(service string) string {
	u, err := url.Parse(service)
	if err != nil {
		return "?"
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		return p
	}
	host := u.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		return host[:i]
	}
	return host
}

// credKind is how requests are signed. A refusal names the credential actually used: an operator signed in with
// Microsoft Entra ID has no account key to check, and a token is not fixed by rotating one.
type credKind int

const (
	credEntra credKind = iota // a bearer token from DefaultAzureCredential
	credKey                   // the account key (Shared Key)
	credSAS                   // a shared access signature
)

// connectionCred is the credential a connection string signs with, as azblob chooses it: the account key when
// it names the account and its key, else its SAS.
func connectionCred(cs string) credKind {
	var name, key bool
	for _, part := range strings.Split(cs, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		name = name || k == "AccountName" && v != ""
		key = key || k == "AccountKey" && v != ""
	}
	if name && key {
		return credKey
	}
	return credSAS
}

func connectionSecrets(cs string) []string {
	var out []string
	for _, part := range strings.Split(cs, ";") {
		k, v, ok := strings.Cut(part, "=")
		if ok && (strings.EqualFold(k, "AccountKey") || strings.EqualFold(k, "SharedAccessSignature")) && v != "" {
			out = append(out, v)
			if q, err := url.ParseQuery(v); err == nil && q.Get("sig") != "" {
				out = append(out, q.Get("sig"), url.QueryEscape(q.Get("sig")))
			}
		}
	}
	return out
}

var secretPatterns = regexp.MustCompile(`(?i)(sig=|AccountKey=|SharedAccessSignature=|Bearer\s+)[^;&\s"']+`)

// Scrub removes what is secret from any text the tool prints — an account key, a SAS signature, a bearer token —
// wherever it came from (a config file's account-url, a connection string in an error).
func Scrub(s string) string { return secretPatterns.ReplaceAllString(s, "${1}REDACTED") }

// scrub removes anything secret from a message: account keys, SAS signatures and bearer tokens.
func (a *Container) scrub(s string) string {
	for _, sec := range a.secrets {
		if len(sec) >= 8 {
			s = strings.ReplaceAll(s, sec, "REDACTED")
		}
	}
	return secretPatterns.ReplaceAllString(s, "${1}REDACTED")
}

// where names the endpoint for messages: the account, and the host when it is not Azure's own.
func (a *Container) where() string {
	if a.local {
		return a.account + " at " + a.endpoint
	}
	return a.account
}

// Describe implements Container.
func (a *Container) Describe() string { return a.account + "/" + a.name }

// URL is the container's URL (no credentials in it for key and Entra ID auth).
func (a *Container) URL() string { return a.scrub(a.client.URL()) }

// Create makes the container if it does not exist (seeding a fresh account or Azurite).
func (a *Container) Create(ctx context.Context) error {
	_, err := a.client.Create(ctx, nil)
	if err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		return a.mapErr("create container", a.name, err, true)
	}
	return nil
}

// Backdate implements Provisioner: Azure owns Last-Modified, so a seeded blob cannot be dated in the past.
func (a *Container) Backdate(ctx context.Context, name string, t time.Time) error {
	return fmt.Errorf("backdate %q: %s: %w (the service sets Last-Modified)", name, a.Describe(), errors.ErrUnsupported)
}

// DeleteContainer removes the whole container (tests: a container that vanishes mid-drain).
func (a *Container) DeleteContainer(ctx context.Context) error {
	_, err := a.client.Delete(ctx, nil)
	if err != nil {
		return a.mapErr("delete container", a.name, err, true)
	}
	return nil
}

// Local reports whether the container is on the development storage emulator (Azurite: a loopback endpoint or
// the emulator's well-known account), where seeding is always safe.
func (a *Container) Local() bool { return a.local }

// Emulator reports whether the container is in the storage emulator's well-known account, signed with its
// well-known key: the account, not the host, decides — a tunnel to a real account on 127.0.0.1 is not it.
func (a *Container) Emulator() bool { return a.emulator }

// Exists reports whether the container exists.
func (a *Container) Exists(ctx context.Context) (bool, error) {
	_, err := a.client.GetProperties(ctx, nil)
	switch {
	case err == nil:
		return true, nil
	case bloberror.HasCode(err, bloberror.ContainerNotFound):
		return false, nil
	}
	return false, a.mapErr("look for the container", a.name, err, false)
}
