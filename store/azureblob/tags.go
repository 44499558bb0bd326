package azureblob

import (
	"context"
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/deadletter/deadletter/store"
)

// SetTags implements Tagger with one Set Blob Tags call, If-Match the ETag the caller read (when given), so an
// acknowledgement never lands on a blob that changed under it. Tags change neither the ETag nor Last-Modified.
func (a *Container) SetTags(ctx context.Context, name string, tags map[string]string, ifMatch string) error {
	if a.untagged.Load() {
		// The listing could not read the blob's tags, and Set Blob Tags replaces them all: writing would lose them.
		return fmt.Errorf("set tags of %q: %w: %s; acknowledging replaces a blob's whole tag set, so it needs to read them first", name, store.ErrForbidden, tagRole(a.account))
	}
	var opts *blob.SetTagsOptions
	if ifMatch != "" {
		opts = &blob.SetTagsOptions{BlobModifiedAccessConditions: &blob.BlobModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETag(ifMatch))}}
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
