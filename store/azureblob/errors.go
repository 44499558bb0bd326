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
	return errors.As(err, &re) && re.StatusCode == http.StatusForbidden && bloberror.Code(re.ErrorCode) != bloberror.AuthenticationFailed
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
