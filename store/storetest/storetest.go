// Package storetest gives tests real containers: a fresh local directory, or a fresh container on the Azurite
// that ./test.sh started (its connection string in DEADLETTER_AZURITE). With CI set, a missing Azurite fails the
// test instead of skipping it, so a green CI always means the Azure backend ran.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/deadletter/deadletter/store"
	"github.com/deadletter/deadletter/store/azureblob"
	"github.com/deadletter/deadletter/store/dirstore"
)

// EnvAzurite names the variable holding the Azurite connection string.
const EnvAzurite = "DEADLETTER_AZURITE"

// AzuriteConnectionString returns the running Azurite's connection string, skipping the test (failing it in
// CI) when there is none.
func AzuriteConnectionString(t testing.TB) string {
	t.Helper()
	cs := os.Getenv(EnvAzurite)
	if cs == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set: run the suite through ./test.sh, which starts Azurite", EnvAzurite)
		}
		t.Skipf("%s is not set: run ./test.sh to include the Azurite tests", EnvAzurite)
	}
	return cs
}

// NewName returns a fresh container name.
func NewName() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "t-" + hex.EncodeToString(b)
}

// Azure returns a fresh, created container on Azurite, deleted when the test ends.
func Azure(t testing.TB) *azureblob.Container {
	return AzureWith(t, nil)
}

// AzureWith is Azure with a custom transport (a fault-injecting proxy).
func AzureWith(t testing.TB, tr policy.Transporter) *azureblob.Container {
	t.Helper()
	name := NewName()
	a, err := azureblob.Open(azureblob.Options{ConnectionString: AzuriteConnectionString(t), Container: name, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	clean, err := azureblob.Open(azureblob.Options{ConnectionString: AzuriteConnectionString(t), Container: name})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := clean.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		clean.DeleteContainer(ctx)
	})
	return a
}

// Dir returns a fresh directory container.
func Dir(t testing.TB) *dirstore.Dir {
	t.Helper()
	d, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Backends runs f once per backend: the local directory and Azurite.
func Backends(t *testing.T, f func(t *testing.T, c store.Container)) {
	t.Run("dir", func(t *testing.T) { f(t, Dir(t)) })
	t.Run("azurite", func(t *testing.T) {
		if testing.Short() {
			t.Skip("against Azurite: runs without -short (./test.sh, CI)")
		}
		f(t, Azure(t))
	})
}
