// Package azureblob is the dead-letter container in Azure Blob Storage (or Azurite), through azblob, with
// Microsoft Entra ID through azidentity. It is the only package that links the Azure SDK: the command that opens
// a container imports it, nothing else does.
package azureblob

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/deadletter/deadletter/store"
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
	local    bool   // the development storage emulator (Azurite)
	name     string
	secrets  []string // values that must never appear in an error
	// untagged is set once the service refused to list tags (a Storage Blob Data Reader has no …/blobs/tags/read):
	// listings then go without them, and an acknowledgement, which replaces the whole tag set, is refused.
	untagged atomic.Bool
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
	a := &Container{name: o.Container}
	var svc *azblob.Client
	var err error
	switch {
	case o.ConnectionString != "":
		cs, cerr := expandConnectionString(o.ConnectionString)
		a.secrets = connectionSecrets(cs)
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
	default:
		return nil, errors.New("no container: give --dir, --connection-string (or AZURE_STORAGE_ACCOUNT_CONNECTION_STRING), or --account-url")
	}
	a.client = svc.ServiceClient().NewContainerClient(o.Container)
	a.account = accountOf(svc.URL())
	if u, err := url.Parse(svc.URL()); err == nil {
		a.endpoint = u.Scheme + "://" + u.Host
		a.local = a.account == AzuriteAccount || isLoopback(u.Hostname())
	}
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

// netReason is the innermost network error's words (connection refused, i/o timeout) without the request URL
// the outer layers add.
func netReason(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
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

// SetTags implements Tagger with one Set Blob Tags call, If-Match the ETag the caller read (when given), so an
// acknowledgement never lands on a blob that changed under it. Tags change neither the ETag nor Last-Modified.
func (a *Container) SetTags(ctx context.Context, name string, tags map[string]string, ifMatch string) error {
	if a.untagged.Load() {
		// The listing could not read the blob's tags, and Set Blob Tags replaces them all: writing would lose them.
		return fmt.Errorf("set tags of %q: %w: %s; acknowledging replaces a blob's whole tag set, so it needs to read them first", name, store.ErrForbidden, tagRole(a.account))
	}
	var opts *blob.SetTagsOptions
	if ifMatch != "" {
		opts = &blob.SetTagsOptions{BlobModifiedAccessConditions: &blob.BlobModifiedAccessConditions{IfMatch: ptr(azcore.ETag(ifMatch))}}
	}
	if tags == nil {
		tags = map[string]string{}
	}
	_, err := a.client.NewBlobClient(name).SetTags(ctx, tags, opts)
	if err != nil {
		if tagsDenied(err) {
			return fmt.Errorf("set tags of %q: %w: %s", name, store.ErrForbidden, tagRole(a.account))
		}
		err = a.mapErr("set tags of", name, err, true)
		if ifMatch != "" && errors.Is(err, store.ErrNotFound) {
			return store.OpError("set tags of", name, store.ErrConditionFailed)
		}
		return err
	}
	return nil
}

// Tags implements TagReader with one Get Blob Tags call.
func (a *Container) Tags(ctx context.Context, name string) (map[string]string, error) {
	resp, err := a.client.NewBlobClient(name).GetTags(ctx, nil)
	if err != nil {
		return nil, a.mapErr("read the tags of", name, err, false)
	}
	var out map[string]string
	for _, t := range resp.BlobTagSet {
		if t != nil && t.Key != nil {
			if out == nil {
				out = map[string]string{}
			}
			out[*t.Key] = deref(t.Value)
		}
	}
	return out, nil
}

// tagsDenied reports whether the service refused an operation for want of a permission (not for a bad
// credential): what a Storage Blob Data Reader or Contributor meets when it asks for index tags.
func tagsDenied(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusForbidden && bloberror.Code(re.ErrorCode) != bloberror.AuthenticationFailed
}

// tagRole names what an identity needs for acknowledgements.
func tagRole(account string) string {
	return "the identity cannot read or write blob index tags on account " + account + ": acknowledgements need Storage Blob Data Owner, or a custom role with …/blobs/tags/read and …/blobs/tags/write (Reader and Contributor have neither)"
}

// DeleteContainer removes the whole container (tests: a container that vanishes mid-drain).
func (a *Container) DeleteContainer(ctx context.Context) error {
	_, err := a.client.Delete(ctx, nil)
	if err != nil {
		return a.mapErr("delete container", a.name, err, true)
	}
	return nil
}

// mapErr turns an azblob error into one of the typed errors, with a message an operator can act on and no
// secret in it. write says whether the operation needs the Contributor role.
func (a *Container) mapErr(op, name string, err error, write bool) error {
	if err == nil {
		return nil
	}
	// A cancel or a deadline wraps the request's URL (a SAS signature included): say what happened, never echo it.
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s %q: %w: %s did not answer in time", op, name, context.DeadlineExceeded, a.where())
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s %q: %w", op, name, context.Canceled)
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return a.responseErr(op, name, re, write)
	}
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &oe) || errors.As(err, &ne) {
		return a.netErr(op, name, err)
	}
	var ae *azidentity.AuthenticationFailedError
	if errors.As(err, &ae) || strings.Contains(err.Error(), "DefaultAzureCredential") {
		return fmt.Errorf("%s %q: Microsoft Entra ID sign-in failed (run `az login`, or set AZURE_CLIENT_ID/AZURE_TENANT_ID/AZURE_CLIENT_SECRET): %s", op, name, a.scrub(err.Error()))
	}
	return fmt.Errorf("%s %q: %s", op, name, a.scrub(err.Error()))
}

// responseErr maps an answer from storage: the typed errors, and for 403 which role (or which credential) is at fault.
func (a *Container) responseErr(op, name string, re *azcore.ResponseError, write bool) error {
	code := bloberror.Code(re.ErrorCode)
	switch {
	case code == bloberror.ContainerNotFound:
		return fmt.Errorf("%s %q: %w: %s has no container %q", op, name, store.ErrContainerNotFound, a.account, a.name)
	case code == bloberror.BlobAlreadyExists:
		return store.OpError(op, name, store.ErrAlreadyExists)
	case code == bloberror.ConditionNotMet || re.StatusCode == http.StatusPreconditionFailed:
		return store.OpError(op, name, store.ErrConditionFailed)
	case code == bloberror.BlobNotFound || re.StatusCode == http.StatusNotFound:
		return store.OpError(op, name, store.ErrNotFound)
	case re.StatusCode == http.StatusForbidden:
		role := "Storage Blob Data Reader (to list and read)"
		if write {
			role = "Storage Blob Data Contributor (to drain and restore)"
		}
		if code == bloberror.AuthenticationFailed {
			return fmt.Errorf("%s %q: %w: account %s refused the credential itself — the account key or SAS signature is wrong or expired (or the clock is off); a role does not help here (%s)", op, name, store.ErrForbidden, a.account, re.ErrorCode)
		}
		why := "the identity lacks a data-plane role, or the SAS lacks the permission"
		return fmt.Errorf("%s %q: %w: %s on account %s: grant %s on the account or container (%s)", op, name, store.ErrForbidden, why, a.account, role, re.ErrorCode)
	}
	return fmt.Errorf("%s %q: storage answered HTTP %d %s", op, name, re.StatusCode, re.ErrorCode)
}

// netErr maps a request that never got an answer, naming Azurite's start command when a local endpoint refused.
func (a *Container) netErr(op, name string, err error) error {
	msg := fmt.Errorf("%s %q: cannot reach %s: %s", op, name, a.where(), a.scrub(netReason(err)))
	if a.local && errors.Is(err, syscall.ECONNREFUSED) {
		port := ""
		if u, err := url.Parse(a.endpoint); err == nil && u.Port() != "" && u.Port() != "10000" {
			port = " --blobPort " + u.Port()
		}
		msg = fmt.Errorf("%w (is Azurite running on %s? start it with `npx --yes --package azurite azurite-blob --skipApiVersionCheck%s`, see the README)", msg, a.endpoint, port)
	}
	return msg
}

func metaOut(m map[string]*string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

func metaIn(m map[string]string) map[string]*string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]*string, len(m))
	for k, v := range m {
		out[k] = &v
	}
	return out
}

func deref[T any](p *T) T {
	var z T
	if p == nil {
		return z
	}
	return *p
}

// listPageSize is the largest page the service gives: fewer round trips, and the first rows still arrive in
// well under a second.
const listPageSize = 5000

// List implements Container: pages of 5,000 with metadata and tags, each page's clock from its Date header.
func (a *Container) List(ctx context.Context, prefix string, visit func(store.Page) error) error {
	var pre *string
	if prefix != "" {
		pre = &prefix
	}
	opts := &container.ListBlobsFlatOptions{
		Prefix:     pre,
		MaxResults: ptr(int32(listPageSize)),
		Include:    container.ListBlobsInclude{Metadata: true, Tags: !a.untagged.Load()},
	}
	pager := a.client.NewListBlobsFlatPager(opts)
	for first := true; pager.More(); first = false {
		resp, err := pager.NextPage(ctx)
		if err != nil && first && opts.Include.Tags && tagsDenied(err) {
			// Reading tags is a permission of its own: list without them rather than not at all.
			a.untagged.Store(true)
			opts.Include.Tags = false
			pager = a.client.NewListBlobsFlatPager(opts)
			resp, err = pager.NextPage(ctx)
		}
		if err != nil {
			return a.mapErr("list", a.name, err, false)
		}
		p := store.Page{ServiceTime: time.Now().UTC()}
		if resp.Date != nil {
			p.ServiceTime = resp.Date.UTC()
		}
		if resp.Segment != nil {
			p.Blobs = make([]store.BlobInfo, 0, len(resp.Segment.BlobItems))
			for _, it := range resp.Segment.BlobItems {
				if it != nil && it.Name != nil {
					p.Blobs = append(p.Blobs, listed(it))
				}
			}
		}
		if err := visit(p); err != nil {
			return err
		}
	}
	return nil
}

func listed(it *container.BlobItem) store.BlobInfo {
	bi := store.BlobInfo{Name: *it.Name, Metadata: metaOut(it.Metadata)}
	if p := it.Properties; p != nil {
		bi.Size = deref(p.ContentLength)
		bi.ETag = etag(p.ETag)
		bi.LastModified = deref(p.LastModified).UTC()
		bi.ContentType = deref(p.ContentType)
	}
	if it.BlobTags != nil && len(it.BlobTags.BlobTagSet) > 0 {
		bi.Tags = make(map[string]string, len(it.BlobTags.BlobTagSet))
		for _, t := range it.BlobTags.BlobTagSet {
			if t != nil && t.Key != nil {
				bi.Tags[*t.Key] = deref(t.Value)
			}
		}
	}
	return bi
}

func ptr[T any](v T) *T { return &v }

// etag normalizes an ETag to its quoted form: listings give it bare, response headers quoted, and the two must
// compare equal.
func etag(e *azcore.ETag) string {
	s := string(deref(e))
	if s == "" || strings.HasPrefix(s, `"`) || strings.HasPrefix(s, "W/") {
		return s
	}
	return `"` + s + `"`
}

// Stat implements Container.
func (a *Container) Stat(ctx context.Context, name string) (store.BlobInfo, error) {
	p, err := a.client.NewBlobClient(name).GetProperties(ctx, nil)
	if err != nil {
		return store.BlobInfo{}, a.mapErr("stat", name, err, false)
	}
	return store.BlobInfo{Name: name, Size: deref(p.ContentLength), ETag: etag(p.ETag),
		LastModified: deref(p.LastModified).UTC(), ContentType: deref(p.ContentType), Metadata: metaOut(p.Metadata)}, nil
}

// Read implements Container. The body is read through azblob's retry reader, so a connection reset mid-body
// resumes from where it stopped (pinned to the ETag) instead of failing the read.
func (a *Container) Read(ctx context.Context, name string, max int64) (store.Blob, error) {
	resp, err := a.client.NewBlobClient(name).DownloadStream(ctx, nil)
	if err != nil {
		return store.Blob{}, a.mapErr("read", name, err, false)
	}
	b := store.Blob{BlobInfo: store.BlobInfo{Name: name, Size: deref(resp.ContentLength), ETag: etag(resp.ETag),
		LastModified: deref(resp.LastModified).UTC(), ContentType: deref(resp.ContentType), Metadata: metaOut(resp.Metadata)}}
	if resp.Date != nil {
		b.ServiceTime = resp.Date.UTC()
	}
	body := resp.NewRetryReader(ctx, &blob.RetryReaderOptions{MaxRetries: 5})
	defer body.Close()
	if b.Size > max {
		return store.Blob{BlobInfo: b.BlobInfo}, store.OpError("read", name, fmt.Errorf("%w: %d bytes, over the %d-byte limit", store.ErrTooLarge, b.Size, max))
	}
	buf := bytes.NewBuffer(make([]byte, 0, b.Size))
	if _, err := io.Copy(buf, io.LimitReader(body, max+1)); err != nil {
		return store.Blob{}, a.mapErr("read", name, err, false)
	}
	if int64(buf.Len()) > max {
		return store.Blob{BlobInfo: b.BlobInfo}, store.OpError("read", name, fmt.Errorf("%w: over the %d-byte limit", store.ErrTooLarge, max))
	}
	b.Body = buf.Bytes()
	return b, nil
}

// Write implements Container with one Put store.Blob.
func (a *Container) Write(ctx context.Context, name string, body []byte, o store.WriteOptions) (store.BlobInfo, error) {
	mac := &blob.ModifiedAccessConditions{}
	if o.IfMatch != "" {
		mac.IfMatch = ptr(azcore.ETag(o.IfMatch))
	}
	if o.IfNoneMatchAny {
		mac.IfNoneMatch = ptr(azcore.ETagAny)
	}
	opts := &blockblob.UploadOptions{
		Metadata:         metaIn(o.Metadata),
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: mac},
	}
	if o.ContentType != "" {
		opts.HTTPHeaders = &blob.HTTPHeaders{BlobContentType: &o.ContentType}
	}
	resp, err := a.client.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(body)), opts)
	if err != nil {
		err = a.mapErr("write", name, err, true)
		if o.IfMatch != "" && errors.Is(err, store.ErrNotFound) {
			// If-Match against a blob that is gone: someone else moved it.
			return store.BlobInfo{}, store.OpError("write", name, store.ErrConditionFailed)
		}
		return store.BlobInfo{}, err
	}
	return store.BlobInfo{Name: name, Size: int64(len(body)), ETag: etag(resp.ETag), LastModified: deref(resp.LastModified).UTC(),
		ContentType: o.ContentType, Metadata: o.Metadata}, nil
}

// Delete implements Container.
func (a *Container) Delete(ctx context.Context, name string, ifMatch string) error {
	var opts *blob.DeleteOptions
	if ifMatch != "" {
		opts = &blob.DeleteOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: ptr(azcore.ETag(ifMatch))}}}
	}
	_, err := a.client.NewBlobClient(name).Delete(ctx, opts)
	if err != nil {
		err = a.mapErr("delete", name, err, true)
		if ifMatch != "" && errors.Is(err, store.ErrNotFound) {
			return store.OpError("delete", name, store.ErrConditionFailed)
		}
		return err
	}
	return nil
}

// Now implements Container: the Date header of a container properties call.
func (a *Container) Now(ctx context.Context) (time.Time, error) {
	p, err := a.client.GetProperties(ctx, nil)
	if err != nil {
		return time.Time{}, a.mapErr("read the clock of", a.name, err, false)
	}
	if p.Date == nil {
		return time.Now().UTC(), nil
	}
	return p.Date.UTC(), nil
}

// Local reports whether the container is on the development storage emulator (Azurite: a loopback endpoint or
// the emulator's well-known account), where seeding is always safe.
func (a *Container) Local() bool { return a.local }
