package azureblob

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/deadletter/deadletter/store"
)

// answer is what Azure itself sends back (Azurite only ever says AuthenticationFailed).
func answer(t *testing.T, status int, code string) error {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "https://acct.blob.core.windows.net/deadletter?restype=container&comp=list", nil)
	resp := &http.Response{StatusCode: status, Status: http.StatusText(status), Request: req,
		Header: http.Header{"X-Ms-Error-Code": {code}}, Body: io.NopCloser(strings.NewReader(""))}
	err := runtime.NewResponseError(resp)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.ErrorCode != code {
		t.Fatalf("not a response error with code %s: %v", code, err)
	}
	return err
}

// Azure's own refusals, for each way in: the sentence names the credential actually used (a token is never "the
// account key or SAS"), and a missing role is named by name — a role is never offered for a refused credential.
func TestRefusalsNameTheCredentialUsed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cred         credKind
		status       int
		code         string
		write        bool
		want, reject []string
	}{
		{credEntra, 401, "InvalidAuthenticationInfo", false, []string{"refused the token Microsoft Entra ID issued", "another audience", "az login", "a role does not help"}, []string{"account key", "SAS", "Storage Blob Data"}},
		{credEntra, 403, "AuthenticationFailed", false, []string{"refused the token", "az login"}, []string{"account key", "SAS"}},
		{credEntra, 403, "AuthorizationPermissionMismatch", false, []string{"signed-in identity has no data-plane role", "assign it Storage Blob Data Reader", "az role assignment create"}, []string{"account key", "SAS", "Contributor"}},
		{credEntra, 403, "AuthorizationPermissionMismatch", true, []string{"assign it Storage Blob Data Contributor", "to drain and restore"}, []string{"account key", "SAS"}},
		{credEntra, 403, "AuthorizationFailure", false, []string{"refused this network", "Networking"}, []string{"role"}},
		{credKey, 403, "AuthenticationFailed", false, []string{"refused the account key", "rotated", "a role does not help"}, []string{"token", "SAS"}},
		{credKey, 403, "AuthorizationFailure", true, []string{"refused the request signed with the account key", "Networking", "a role does not help"}, []string{"token", "SAS", "Storage Blob Data"}},
		{credKey, 401, "InvalidAuthenticationInfo", false, []string{"refused the account key"}, []string{"token", "SAS"}},
		{credSAS, 403, "AuthenticationFailed", false, []string{"refused the SAS", "expired"}, []string{"token", "account key"}},
		{credSAS, 403, "AuthorizationPermissionMismatch", true, []string{"the SAS does not allow this", "write and delete"}, []string{"token", "account key", "role"}},
	} {
		a := &Container{account: "acct", name: "deadletter", cred: c.cred}
		err := a.mapErr("list", "deadletter", answer(t, c.status, c.code), c.write)
		msg := err.Error()
		if !errors.Is(err, store.ErrForbidden) || !strings.Contains(msg, "("+c.code+")") || strings.Contains(msg, "\n") {
			t.Errorf("%d %s: %q", c.status, c.code, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("cred %d, %d %s: no %q in %q", c.cred, c.status, c.code, w, msg)
			}
		}
		for _, r := range c.reject {
			if strings.Contains(msg, r) {
				t.Errorf("cred %d, %d %s: %q in %q", c.cred, c.status, c.code, r, msg)
			}
		}
		// A refused credential is not a missing tags permission: the listing must not quietly drop its tags.
		if got := tagsDenied(answer(t, c.status, c.code)); got != (c.status == 403 && c.code != "AuthenticationFailed") {
			t.Errorf("%d %s: tagsDenied %v", c.status, c.code, got)
		}
	}
}

// The connection string's credential is the one azblob signs with: the key when it has the account and key.
func TestConnectionCred(t *testing.T) {
	t.Parallel()
	for cs, want := range map[string]credKind{
		"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=k;EndpointSuffix=core.windows.net": credKey,
		"BlobEndpoint=https://a.blob.core.windows.net;SharedAccessSignature=sv=1&sig=x":             credSAS,
		"AccountName=a;AccountKey=k;SharedAccessSignature=sv=1&sig=x":                               credKey,
	} {
		if got := connectionCred(cs); got != want {
			t.Errorf("%s: %d, want %d", cs, got, want)
		}
	}
}
