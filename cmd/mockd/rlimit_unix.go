//go:build unix

package main

import "syscall"

// raiseOpenFilesLimit raises the soft limit of open files to the hard one: every connection
// takes a file descriptor. (The Go runtime raises it only to one below the hard limit.)
func raiseOpenFilesLimit() {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
}
