package dirstore

import "strings"

// LegacyETag is the form an ETag of this store had before the change time was part of it ("ino-mtime-size"):
// what a twin's state or snapshot written by an earlier deadletter holds for the same version of a blob. An ETag
// already in that form (or not of this store) is returned as it is.
func LegacyETag(etag string) string {
	inner, ok := strings.CutPrefix(etag, `"`)
	inner, ok2 := strings.CutSuffix(inner, `"`)
	parts := strings.Split(inner, "-")
	if !ok || !ok2 || len(parts) != 4 {
		return etag
	}
	return `"` + parts[0] + "-" + parts[2] + "-" + parts[3] + `"`
}

// SameETag reports whether two ETags of this store name the same version of a blob, one of them perhaps kept by
// an earlier deadletter in the legacy form.
func SameETag(a, b string) bool {
	return a == b || LegacyETag(a) == b || a == LegacyETag(b)
}
