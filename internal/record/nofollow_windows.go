//go:build !unix

package record

// noFollow: Windows has no O_NOFOLLOW; Append's Lstat refuses a link first.
const noFollow = 0
