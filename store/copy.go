package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrCaseCollision: a name differs from another's only by case (at some folder of its path), which a
// case-insensitive file system would make one file, or one folder for both.
var ErrCaseCollision = errors.New("differs only by case from another name")

// CopyOptions control a Copy.
type CopyOptions struct {
	// FoldCase refuses a name that differs only by case — in itself or in a folder of its path — from another one
	// copied, or one dst holds already.
	FoldCase bool
	// Check refuses names dst must not hold beyond its own limits (nil: none).
	Check func(name string) error
	// Progress is called once per blob as it is done.
	Progress func(Copied)
}

// Copied is one blob's copy: written (Err nil), or why not.
type Copied struct {
	Name string
	Size int64
	Err  error
}

// Copy copies blobs, as a listing of src gave them, into dst under the same names: the bytes, content type,
// metadata and index tags, and — where dst can date a blob (Provisioner) — Last-Modified, so dst shows the same
// panes and ages. Each write is If-None-Match "*": a name dst already holds is never overwritten (ErrAlreadyExists).
// Blobs are copied one after another, in the order given; a failure is that blob's and the rest go on, until ctx
// ends. It is the one copy engine: export, and a twin started from a container.
func Copy(ctx context.Context, dst, src Container, blobs []BlobInfo, o CopyOptions) ([]Copied, error) {
	folds := map[string]string{}
	if o.FoldCase {
		err := dst.List(ctx, "", func(p Page) error {
			for _, b := range p.Blobs {
				foldClaim(folds, b.Name)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]Copied, 0, len(blobs))
	for _, bi := range blobs {
		c := Copied{Name: bi.Name}
		switch {
		case ctx.Err() != nil:
			c.Err = ctx.Err()
		default:
			c.Err = copyCheck(dst, bi, o, folds)
			if c.Err == nil {
				c.Size, c.Err = copyOne(ctx, dst, src, bi)
			}
		}
		out = append(out, c)
		if o.Progress != nil {
			o.Progress(c)
		}
	}
	return out, nil
}

// copyCheck refuses a blob before anything is read: a refused entry, a name dst cannot or must not hold, a
// case collision.
func copyCheck(dst Container, bi BlobInfo, o CopyOptions, folds map[string]string) error {
	if bi.Refused != "" {
		return fmt.Errorf("%w: %s", ErrRefused, bi.Refused)
	}
	if v, ok := dst.(NameValidator); ok {
		if err := v.ValidateName(bi.Name); err != nil {
			return err
		}
	}
	if o.Check != nil {
		if err := o.Check(bi.Name); err != nil {
			return err
		}
	}
	if o.FoldCase {
		if other, clash := foldClash(folds, bi.Name); clash {
			return fmt.Errorf("%w: %q", ErrCaseCollision, other)
		}
		foldClaim(folds, bi.Name)
	}
	return nil
}

// foldClaim records name and each folder of its path under its case-folded spelling.
func foldClaim(folds map[string]string, name string) {
	for i := range name {
		if name[i] == '/' {
			folds[strings.ToLower(name[:i+1])] = name[:i+1]
		}
	}
	folds[strings.ToLower(name)] = name
}

// foldClash reports a name or folder already claimed that differs from name's (or its folder's) only by case.
func foldClash(folds map[string]string, name string) (string, bool) {
	for i := range name {
		if name[i] == '/' {
			if got, ok := folds[strings.ToLower(name[:i+1])]; ok && got != name[:i+1] {
				return got, true
			}
		}
	}
	if got, ok := folds[strings.ToLower(name)]; ok && got != name {
		return got, true
	}
	return "", false
}

func copyOne(ctx context.Context, dst, src Container, bi BlobInfo) (int64, error) {
	b, err := src.Read(ctx, bi.Name, MaxBlobBytes)
	if err != nil {
		return 0, err
	}
	tags := bi.Tags
	if tr, ok := src.(TagReader); ok && tags == nil {
		if tags, err = tr.Tags(ctx, bi.Name); err != nil && !errors.Is(err, ErrForbidden) {
			return 0, err
		}
	}
	meta := b.Metadata
	if meta == nil {
		meta = bi.Metadata
	}
	ct := b.ContentType
	if ct == "" {
		ct = bi.ContentType
	}
	w, err := dst.Write(ctx, bi.Name, b.Body, WriteOptions{IfNoneMatchAny: true, ContentType: ct, Metadata: meta})
	if err != nil {
		return 0, err
	}
	if len(tags) > 0 {
		t, ok := dst.(Tagger)
		if !ok {
			return int64(len(b.Body)), errors.New("copied without its index tags: the destination keeps none")
		}
		if err := t.SetTags(ctx, bi.Name, tags, w.ETag); err != nil {
			return int64(len(b.Body)), fmt.Errorf("copied, but its index tags were not: %w", err)
		}
	}
	if p, ok := dst.(Provisioner); ok && !b.LastModified.IsZero() {
		if err := p.Backdate(ctx, bi.Name, b.LastModified); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			return int64(len(b.Body)), fmt.Errorf("copied, but its Last-Modified was not: %w", err)
		}
	}
	return int64(len(b.Body)), nil
}
