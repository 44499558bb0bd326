package azureblob

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/deadletter/deadletter/store"
)

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

// tagsDenied reports whether the service refused an operation for want of a permission (not for a bad
// credential): what a Storage Blob Data Reader or Contributor meets when it asks for index tags.
func tagsDenied(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusForbidden && !credentialRefused(re)
}

// credentialRefused reports whether the service refused the credential itself, not the identity's permissions:
// Azure answers 401 InvalidAuthenticationInfo for a token that is expired or for another audience or tenant, and
// 403 AuthenticationFailed for a wrong key or signature (Azurite answers AuthenticationFailed for all of them).
func credentialRefused(re *azcore.ResponseError) bool {
	switch bloberror.Code(re.ErrorCode) {
	case bloberror.AuthenticationFailed, bloberror.InvalidAuthenticationInfo, bloberror.NoAuthenticationInformation:
		return true
	}
	return re.StatusCode == http.StatusUnauthorized
}

// tagRole names what an identity needs for acknowledgements.
func tagRole(account string) string {
	return "the identity cannot read or write blob index tags on account " + account + ": acknowledgements need Storage Blob Data Owner, or a custom role with …/blobs/tags/read and …/blobs/tags/write (Reader and Contributor have neither)"
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
		// The chain's own report is many lines, one per credential it tried, with request dumps: one sentence here,
		// the details behind the SDK's log switch.
		return fmt.Errorf("%s %q: Microsoft Entra ID sign-in failed: no credential in DefaultAzureCredential's chain (environment, workload identity, managed identity, Azure CLI, Azure Developer CLI, Azure PowerShell) gave a token for Storage — run `az login`, or give this host a managed or workload identity (AZURE_SDK_GO_LOGGING=all shows each attempt)", op, name)
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
	case leaseHeld(code):
		return store.Leased(op, name)
	case code == bloberror.ConditionNotMet || re.StatusCode == http.StatusPreconditionFailed:
		return store.OpError(op, name, store.ErrConditionFailed)
	case code == bloberror.BlobNotFound || re.StatusCode == http.StatusNotFound:
		return store.OpError(op, name, store.ErrNotFound)
	case credentialRefused(re):
		return fmt.Errorf("%s %q: %w: %s (%s)", op, name, store.ErrForbidden, a.refusedCredential(), re.ErrorCode)
	case re.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%s %q: %w: %s (%s)", op, name, store.ErrForbidden, a.lacksPermission(code, write), re.ErrorCode)
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

// refusedCredential says which credential the account refused, and what fixes it: never a role, which does not.
func (a *Container) refusedCredential() string {
	switch a.cred {
	case credKey:
		return "account " + a.account + " refused the account key — it is wrong or was rotated (or the clock is off): take the current one from the portal or `az storage account keys list`; a role does not help here"
	case credSAS:
		return "account " + a.account + " refused the SAS — its signature is wrong, or it expired or is not yet valid (or the clock is off): make a new one; a role does not help here"
	}
	return "account " + a.account + " refused the token Microsoft Entra ID issued (DefaultAzureCredential) — expired, issued for another audience or tenant, or the clock is off: sign in again with `az login`, or check the managed or workload identity; a role does not help here"
}

// lacksPermission says what the identity, the SAS or the network lacks for a 403 that is not about the
// credential: the role to assign, by name.
func (a *Container) lacksPermission(code bloberror.Code, write bool) string {
	role, does := "Storage Blob Data Reader", "to list and read"
	if write {
		role, does = "Storage Blob Data Contributor", "to drain and restore"
	}
	switch {
	case code == bloberror.AuthorizationFailure && a.cred == credKey:
		// Azure's answer when the account's firewall keeps this network out; Azurite's for a wrong key.
		return "account " + a.account + " refused the request signed with the account key — the key is wrong or was rotated, or the account's firewall or private endpoint keeps this network out: check the key (`az storage account keys list`) and the account's Networking settings; a role does not help here"
	case code == bloberror.AuthorizationFailure:
		// Azure's answer when the account's firewall or private endpoint keeps this network out (or a SAS's IP range).
		return "account " + a.account + " refused this network (its firewall or private endpoint, or the SAS's allowed addresses): allow this host's address under the account's Networking settings"
	case a.cred == credSAS:
		return "the SAS does not allow this on account " + a.account + ": make one with read and list permissions (and write and delete, to drain and restore)"
	case a.cred == credKey:
		return "account " + a.account + " refused the request although the account key allows everything: check the account's policies"
	}
	return "the signed-in identity has no data-plane role on account " + a.account + " " + does + ": assign it " + role +
		" on the account or container (`az role assignment create --assignee <its object id> --role \"" + role + "\" --scope <the storage account's id>`; roles take a few minutes to apply)"
}

// leaseHeld reports whether storage refused an operation because another holds the blob's lease.
func leaseHeld(code bloberror.Code) bool {
	switch code {
	case bloberror.LeaseAlreadyPresent, bloberror.LeaseIDMissing, bloberror.LeaseIDMismatchWithBlobOperation,
		bloberror.LeaseIDMismatchWithLeaseOperation, bloberror.LeaseIsBreakingAndCannotBeAcquired, bloberror.LeaseIsBrokenAndCannotBeRenewed:
		return true
	}
	return false
}
