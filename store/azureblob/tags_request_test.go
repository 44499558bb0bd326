package azureblob

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// transportFunc answers the SDK's requests in the test (no network, no emulator).
type transportFunc func(*http.Request) (*http.Response, error)

func (f transportFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// An acknowledgement's Set Blob Tags is conditional on the ETag the operator was shown: Azure refuses it (412) when
// the blob changed since. Azurite ignores that condition on Set Blob Tags, so no end-to-end test can see it
// dropped; this one looks at the request the SDK sends. (Set Blob Tags takes the blob's ETag as x-ms-blob-if-match:
// a plain If-Match there would be a condition on the tags sub-resource.)
func TestSetTagsSendsItsConditionOnTheWire(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sent []*http.Request
	c, err := Open(Options{
		ConnectionString: azuriteConnectionString("http://127.0.0.1:1"),
		Container:        "deadletter",
		Transport: transportFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			sent = append(sent, r)
			mu.Unlock()
			return &http.Response{StatusCode: http.StatusNoContent, Header: http.Header{"x-ms-request-id": {"1"}},
				Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	const etag = `"0x8DD1234567890AB"`
	if err := c.SetTags(context.Background(), "S/2026/12/7/1/a.json", map[string]string{"deadletter-ack-by": "oncall"}, etag); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var tags *http.Request
	for _, r := range sent {
		if r.Method == http.MethodPut && r.URL.Query().Get("comp") == "tags" {
			tags = r
		}
	}
	if tags == nil {
		t.Fatalf("no Set Blob Tags among %d request(s)", len(sent))
	}
	got := ""
	for k, v := range tags.Header { // (the SDK sets its x-ms- headers as written, not canonicalised)
		if strings.EqualFold(k, "x-ms-blob-if-match") && len(v) == 1 {
			got = v[0]
		}
	}
	if got != etag {
		t.Fatalf("Set Blob Tags sent x-ms-blob-if-match %q, want %q; headers %v", got, etag, tags.Header)
	}
}
