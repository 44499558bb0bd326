package store_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/storetest"
)

func TestAzureMissingContainer(t *testing.T) {
	a, err := store.OpenAzure(store.AzureOptions{ConnectionString: storetest.AzuriteConnectionString(t), Container: storetest.NewName()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.ListAll(ctx, a); !errors.Is(err, store.ErrContainerNotFound) {
		t.Fatalf("list of a missing container: %v", err)
	}
}

// A wrong key gets 403: the message says what to grant and never repeats the key.
func TestAzureForbiddenNamesTheRoleAndHidesTheKey(t *testing.T) {
	cs := storetest.AzuriteConnectionString(t)
	const badKey = "QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QQ=="
	var parts []string
	for _, p := range strings.Split(cs, ";") {
		if strings.HasPrefix(p, "AccountKey=") {
			p = "AccountKey=" + badKey
		}
		parts = append(parts, p)
	}
	a, err := store.OpenAzure(store.AzureOptions{ConnectionString: strings.Join(parts, ";"), Container: "deadletter"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.ListAll(ctx, a)
	if !errors.Is(err, store.ErrForbidden) || !strings.Contains(err.Error(), "Storage Blob Data Reader") || !strings.Contains(err.Error(), "devstoreaccount1") {
		t.Fatalf("403: %v", err)
	}
	if strings.Contains(err.Error(), badKey) || strings.Contains(err.Error(), badKey[:20]) {
		t.Fatalf("error leaks the key: %v", err)
	}
	_, err = a.Write(ctx, "x", []byte("x"), store.WriteOptions{})
	if !errors.Is(err, store.ErrForbidden) || !strings.Contains(err.Error(), "Storage Blob Data Contributor") {
		t.Fatalf("403 on write: %v", err)
	}
}

func TestAzureUnreachable(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	const key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	a, err := store.OpenAzure(store.AzureOptions{ConnectionString: "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + key + ";BlobEndpoint=http://" + addr + "/devstoreaccount1;", Container: "deadletter"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.ListAll(ctx, a)
	if err == nil || !strings.Contains(err.Error(), "cannot reach devstoreaccount1") || strings.Contains(err.Error(), key[:16]) {
		t.Fatalf("unreachable: %v", err)
	}
}

func TestAzureConnectionStrings(t *testing.T) {
	for _, cs := range []string{"garbage", "AccountKey=abc"} {
		if _, err := store.OpenAzure(store.AzureOptions{ConnectionString: cs, Container: "c"}); err == nil {
			t.Errorf("%q accepted", cs)
		}
	}
	sas := "BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=sv=2024-01-01&sig=SuperSecretSignatureValue123%3D"
	a, err := store.OpenAzure(store.AzureOptions{ConnectionString: sas, Container: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(a.URL(), "SuperSecret") {
		t.Fatalf("URL leaks the SAS signature: %s", a.URL())
	}
	if a.Describe() != "acct/c" {
		t.Fatalf("Describe = %q", a.Describe())
	}
	if _, err := store.OpenAzure(store.AzureOptions{ConnectionString: "UseDevelopmentStorage=true", Container: "c"}); err != nil {
		t.Fatal(err)
	}
}
