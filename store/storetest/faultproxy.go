package storetest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fault is what the proxy does to one request.
type Fault struct {
	// Status answers the request with this status (500, 503) without forwarding it.
	Status int
	// Code is the x-ms-error-code of that answer (default ServerBusy).
	Code string
	// Bare answers Status as a gateway or proxy would: no x-ms-error-code, no storage error body.
	Bare bool
	// Latency is added before the request is forwarded.
	Latency time.Duration
	// SlowBody streams the response body in small pieces with this pause between them.
	SlowBody time.Duration
	// ResetMidBody forwards the request, sends half the response body, then drops the connection.
	ResetMidBody bool
	// LoseResponse forwards the request (so it takes effect) and then drops the connection without answering:
	// the client cannot know that its write landed.
	LoseResponse bool
	// Before runs before the request is forwarded: a second actor strikes here.
	Before func()
}

// Logged is one request as the proxy saw it.
type Logged struct {
	Method, Path, Query, IfMatch, IfNoneMatch string
}

// FaultProxy is an HTTP proxy between azblob and Azurite that injects faults chosen per request.
type FaultProxy struct {
	URL    string // the proxy's base URL, to put in a connection string's BlobEndpoint
	target *url.URL
	srv    *httptest.Server
	rt     http.RoundTripper

	mu     sync.Mutex
	choose func(r *http.Request) Fault
	log    []Logged
}

// NewFaultProxy starts a proxy in front of Azurite's blob endpoint (from its connection string).
func NewFaultProxy(t testing.TB, azuriteConnectionString string) *FaultProxy {
	t.Helper()
	var endpoint string
	for _, part := range strings.Split(azuriteConnectionString, ";") {
		if v, ok := strings.CutPrefix(part, "BlobEndpoint="); ok {
			endpoint = v
		}
	}
	u, err := url.Parse(endpoint)
	if err != nil || endpoint == "" {
		t.Fatalf("no BlobEndpoint in %q", azuriteConnectionString)
	}
	p := &FaultProxy{target: &url.URL{Scheme: u.Scheme, Host: u.Host}, rt: &http.Transport{MaxIdleConnsPerHost: 64}}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = p.srv.URL
	t.Cleanup(p.srv.Close)
	return p
}

// ConnectionString is Azurite's connection string pointed at the proxy.
func (p *FaultProxy) ConnectionString(azurite string) string {
	var parts []string
	for _, part := range strings.Split(azurite, ";") {
		if v, ok := strings.CutPrefix(part, "BlobEndpoint="); ok {
			u, _ := url.Parse(v)
			part = "BlobEndpoint=" + p.URL + u.Path
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ";")
}

// SetFaults installs the function that chooses each request's fault (nil: none).
func (p *FaultProxy) SetFaults(f func(r *http.Request) Fault) {
	p.mu.Lock()
	p.choose = f
	p.mu.Unlock()
}

// Log returns every request seen so far.
func (p *FaultProxy) Log() []Logged {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Logged(nil), p.log...)
}

func (p *FaultProxy) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.log = append(p.log, Logged{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, IfMatch: r.Header.Get("If-Match"), IfNoneMatch: r.Header.Get("If-None-Match")})
	choose := p.choose
	p.mu.Unlock()
	var f Fault
	if choose != nil {
		f = choose(r)
	}
	if f.Before != nil {
		f.Before()
	}
	if f.Latency > 0 {
		time.Sleep(f.Latency)
	}
	if f.Status != 0 && f.Bare {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(f.Status)
		return
	}
	if f.Status != 0 {
		io.Copy(io.Discard, r.Body)
		code := f.Code
		if code == "" {
			code = "ServerBusy"
		}
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("x-ms-error-code", code)
		w.WriteHeader(f.Status)
		io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>`+code+`</Code><Message>injected fault</Message></Error>`)
		return
	}
	out := r.Clone(r.Context())
	out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = p.target.Scheme, p.target.Host, p.target.Host, ""
	resp, err := p.rt.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if f.LoseResponse {
		hijackClose(w)
		return
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	switch {
	case f.ResetMidBody && len(body) > 1:
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		hijackClose(w)
	case f.SlowBody > 0:
		for rd := bytes.NewReader(body); rd.Len() > 0; {
			chunk := make([]byte, min(256, rd.Len()))
			rd.Read(chunk)
			w.Write(chunk)
			w.(http.Flusher).Flush()
			time.Sleep(f.SlowBody)
		}
	default:
		w.Write(body)
	}
}

func hijackClose(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
		}
	}
}

// IsBlobWrite reports whether a request is a Put Blob (not a container operation).
func IsBlobWrite(r *http.Request) bool {
	return r.Method == http.MethodPut && !strings.Contains(r.URL.RawQuery, "restype=container")
}

// BlobName is the blob a request addresses (path after /<account>/<container>/), unescaped.
func BlobName(path string) string {
	parts := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	if len(parts) < 3 {
		return ""
	}
	n, err := url.PathUnescape(parts[2])
	if err != nil {
		return parts[2]
	}
	return n
}
