//go:build !unix

package main

// raiseOpenFilesLimit does nothing where there is no RLIMIT_NOFILE.
func raiseOpenFilesLimit() {}
