//go:build windows

package main

// openNonBlocking: a named pipe is not a file path on Windows; the regular-file check refuses anything else.
const openNonBlocking = 0
