//go:build !unix

package dirstore_test

// syncAll does nothing where there is no sync(2).
func syncAll() {}
