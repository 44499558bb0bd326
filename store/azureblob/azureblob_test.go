package azureblob_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/azureblob"
	"github.com/deadletter/deadletter/store/storetest"
)

func TestAzureMissingContainer(t *testing.T) {
	t.Parallel()
	a, err := azureblob.Open(azureblob.Options{ConnectionString: storetest.AzuriteConnectionString(t), Container: storetest.NewName()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.ListAll(ctx, a); !errors.Is(err, store.ErrContainerNotFound) {
		t.Fatalf("list of a missing container: %v", err)
	}
}

// A wrong key gets 403 (Azurite: AuthorizationFailure): the message names the key, offers no role (a role cannot
// fix a key), and never repeats the key.
func TestAzureForbiddenNamesTheKeyAndHidesIt(t *testing.T) {
	t.Parallel()
	cs := storetest.AzuriteConnectionString(t)
	const badKey = "QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QQ=="
	var parts []string
	for _, p := range strings.Split(cs, ";") {
		if strings.HasPrefix(p, "AccountKey=") {
			p = "AccountKey=" + badKey
		}
		parts = append(parts, p)
	}
	a, err := azureblob.Open(azureblob.Options{ConnectionString: strings.Join(parts, ";"), Container: "deadletter"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.ListAll(ctx, a)
	if !errors.Is(err, store.ErrForbidden) || !strings.Contains(err.Error(), "account key") || strings.Contains(err.Error(), "Storage Blob Data") || !strings.Contains(err.Error(), "devstoreaccount1") {
		t.Fatalf("403: %v", err)
	}
	if strings.Contains(err.Error(), badKey) || strings.Contains(err.Error(), badKey[:20]) {
		t.Fatalf("error leaks the key: %v", err)
	}
	_, err = a.Write(ctx, "x", []byte("x"), store.WriteOptions{})
	if !errors.Is(err, store.ErrForbidden) || !strings.Contains(err.Error(), "account key") || strings.Contains(err.Error(), "Storage Blob Data") {
		t.Fatalf("403 on write: %v", err)
	}
}

func TestAzureUnreachable(t *testing.T) {
	t.Parallel()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	const key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	a, err := azureblob.Open(azureblob.Options{ConnectionString: "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + key + ";BlobEndpoint=http://" + addr + "/devstoreaccount1;", Container: "deadletter"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.ListAll(ctx, a)
	if err == nil || !strings.Contains(err.Error(), "cannot reach devstoreaccount1") || strings.Contains(err.Error(), key[:16]) {
		t.Fatalf("unreachable: %v", err)
	}
}

func TestAzureConnectionStrings(t *testing.T) {
	t.Parallel()
	for _, cs := range []string{"garbage", "AccountKey=abc"} {
		if _, err := azureblob.Open(azureblob.Options{ConnectionString: cs, Container: "c"}); err == nil {
			t.Errorf("%q accepted", cs)
		}
	}
	sas := "BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=sv=2024-01-01&sig=SuperSecretSignatureValue123%3D"
	a, err := azureblob.Open(azureblob.Options{ConnectionString: sas, Container: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(a.URL(), "SuperSecret") {
		t.Fatalf("URL leaks the SAS signature: %s", a.URL())
	}
	if a.Describe() != "acct/c" {
		t.Fatalf("Describe = %q", a.Describe())
	}
	if _, err := azureblob.Open(azureblob.Options{ConnectionString: "UseDevelopmentStorage=true", Container: "c"}); err != nil {
		t.Fatal(err)
	}
}

// A Storage Blob Data Reader (or Contributor) has no …/blobs/tags/read: Azure answers a listing that asks for
// tags, and Get/Set Blob Tags, with 403 AuthorizationPermissionMismatch. The listing must still work (without
// tags), show must still read the blob, and an acknowledgement — which replaces the whole tag set — must be
// refused with what to grant, never written blind over tags it could not read.
func TestAzureWithoutTagPermission(t *testing.T) {
	t.Parallel()
	cs := storetest.AzuriteConnectionString(t)
	direct := storetest.Azure(t)
	if _, err := direct.Write(ctx, "S/a.json", []byte(`[]`), store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := direct.SetTags(ctx, "S/a.json", map[string]string{"team": "payments"}, ""); err != nil {
		t.Fatal(err)
	}
	p := storetest.NewFaultProxy(t, cs)
	var denied atomic.Int32
	p.SetFaults(func(r *http.Request) storetest.Fault {
		q := r.URL.Query()
		if q.Get("comp") == "tags" || strings.Contains(q.Get("include"), "tags") {
			denied.Add(1)
			return storetest.Fault{Status: http.StatusForbidden, Code: "AuthorizationPermissionMismatch"}
		}
		return storetest.Fault{}
	})
	via, err := azureblob.Open(azureblob.Options{ConnectionString: p.ConnectionString(cs), Container: strings.TrimPrefix(direct.Describe(), "devstoreaccount1/")})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second listing no longer asks
		l, err := store.ListAll(ctx, via)
		if err != nil || len(l.Blobs) != 1 || l.Blobs[0].Tags != nil {
			t.Fatalf("listing without tags/read: %v %+v", err, l.Blobs)
		}
	}
	if n := denied.Load(); n != 1 {
		t.Fatalf("asked for tags %d times; want once, then never again", n)
	}
	if _, err := via.Tags(ctx, "S/a.json"); !errors.Is(err, store.ErrForbidden) {
		t.Fatalf("get tags: %v", err)
	}
	err = via.SetTags(ctx, "S/a.json", map[string]string{"dlAckBy": "x"}, "")
	if !errors.Is(err, store.ErrForbidden) || !strings.Contains(err.Error(), "Storage Blob Data Owner") {
		t.Fatalf("set tags without reading them: %v", err)
	}
	if got, err := direct.Tags(ctx, "S/a.json"); err != nil || got["team"] != "payments" || len(got) != 1 {
		t.Fatalf("the blob's own tags were touched: %v %v", got, err)
	}
	// An identity that can list tags but not write them hears the same.
	fresh, err := azureblob.Open(azureblob.Options{ConnectionString: p.ConnectionString(cs), Container: strings.TrimPrefix(direct.Describe(), "devstoreaccount1/")})
	if err != nil {
		t.Fatal(err)
	}
	err = fresh.SetTags(ctx, "S/a.json", map[string]string{"team": "payments", "dlAckBy": "x"}, "")
	if !errors.Is(err, store.ErrForbidden) || !strings.Contains(err.Error(), "tags/write") {
		t.Fatalf("set tags denied: %v", err)
	}
}

// A blob stored with Content-Encoding: gzip is read as stored: the replay function gets those bytes (and judges
// them malformed), so show must too, and a drain must re-upload them, not their inflated form.
func TestAzureReadsBytesAsStored(t *testing.T) {
	t.Parallel()
	a := storetest.Azure(t)
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(`[{"id":"a","subject":"s","eventType":"E","dataVersion":"1","data":null}]`))
	w.Close()
	raw, err := azblob.NewClientFromConnectionString(storetest.AzuriteConnectionString(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	enc := "gzip"
	container := strings.TrimPrefix(a.Describe(), "devstoreaccount1/")
	if _, err := raw.UploadBuffer(ctx, container, "S/gz.json", gz.Bytes(), &azblob.UploadBufferOptions{HTTPHeaders: &blob.HTTPHeaders{BlobContentEncoding: &enc}}); err != nil {
		t.Fatal(err)
	}
	b, err := a.Read(ctx, "S/gz.json", 1<<20)
	if err != nil || !bytes.Equal(b.Body, gz.Bytes()) {
		t.Fatalf("read %d bytes (%v), stored %d gzip bytes", len(b.Body), err, gz.Len())
	}
}

var ctx = context.Background()

// The contract every container keeps, on a fresh Azurite container.
func TestContract(t *testing.T) { storetest.Contract(t, storetest.Azure(t)) }

// The emulator is its well-known account and key, not a loopback host: a tunnel to a real account on 127.0.0.1
// is not the emulator (seed's guard asks).
func TestEmulatorIsTheAccountNotTheHost(t *testing.T) {
	t.Parallel()
	az, err := azureblob.Open(azureblob.Options{ConnectionString: storetest.AzuriteConnectionString(t), Container: "x"})
	if err != nil || !az.Emulator() {
		t.Fatalf("Azurite's own account: emulator %v, %v", az != nil && az.Emulator(), err)
	}
	for _, cs := range []string{"DefaultEndpointsProtocol=http;AccountName=prodacct;AccountKey=" + strings.Repeat("QUJD", 16) + ";BlobEndpoint=http://127.0.0.1:10000/prodacct;",
		"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + strings.Repeat("QUJD", 16) + ";BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"} {
		a, err := azureblob.Open(azureblob.Options{ConnectionString: cs, Container: "x"})
		if err != nil || a.Emulator() {
			t.Fatalf("%s: emulator %v, %v", cs[:60], a != nil && a.Emulator(), err)
		}
	}
}
