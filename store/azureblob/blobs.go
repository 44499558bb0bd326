package azureblob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/deadletter/deadletter/store"
)

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
		MaxResults: to.Ptr(int32(listPageSize)),
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
		mac.IfMatch = to.Ptr(azcore.ETag(o.IfMatch))
	}
	if o.IfNoneMatchAny {
		mac.IfNoneMatch = to.Ptr(azcore.ETagAny)
	}
	opts := &blockblob.UploadOptions{
		Metadata:         metaIn(o.Metadata),
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: mac},
	}
	if o.LeaseID != "" {
		opts.AccessConditions.LeaseAccessConditions = &blob.LeaseAccessConditions{LeaseID: &o.LeaseID}
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
	return a.DeleteLeased(ctx, name, ifMatch, "")
}

// DeleteLeased implements store.Leaser: Delete, under the lease id (none: "").
func (a *Container) DeleteLeased(ctx context.Context, name, ifMatch, leaseID string) error {
	opts := &blob.DeleteOptions{AccessConditions: &blob.AccessConditions{}}
	if ifMatch != "" {
		opts.AccessConditions.ModifiedAccessConditions = &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETag(ifMatch))}
	}
	if leaseID != "" {
		opts.AccessConditions.LeaseAccessConditions = &blob.LeaseAccessConditions{LeaseID: &leaseID}
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

// Lease implements store.Leaser with Azure's blob lease: acquired If-Match the ETag read, for d rounded to the
// service's bounds (15 to 60 seconds).
func (a *Container) Lease(ctx context.Context, name, ifMatch string, d time.Duration) (string, error) {
	lc, err := lease.NewBlobClient(a.client.NewBlobClient(name), nil)
	if err != nil {
		return "", store.OpError("lease", name, err)
	}
	secs := int32(min(max(d, 15*time.Second), 60*time.Second) / time.Second)
	var opts *lease.BlobAcquireOptions
	if ifMatch != "" {
		opts = &lease.BlobAcquireOptions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETag(ifMatch))}}
	}
	resp, err := lc.AcquireLease(ctx, secs, opts)
	if err != nil {
		err = a.mapErr("lease", name, err, true)
		if ifMatch != "" && errors.Is(err, store.ErrNotFound) {
			return "", store.OpError("lease", name, store.ErrConditionFailed)
		}
		return "", err
	}
	return deref(resp.LeaseID), nil
}

// Release implements store.Leaser.
func (a *Container) Release(ctx context.Context, name, id string) error {
	lc, err := lease.NewBlobClient(a.client.NewBlobClient(name), &lease.BlobClientOptions{LeaseID: &id})
	if err != nil {
		return store.OpError("release", name, err)
	}
	if _, err := lc.ReleaseLease(ctx, nil); err != nil {
		if err := a.mapErr("release", name, err, true); !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return nil
}
