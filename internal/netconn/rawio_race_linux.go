//go:build linux && race

package netconn

import "syscall"

// With the race detector, read and write go through the syscall package, which tells the
// detector what they touch and that a write to an fd comes before a read of it.

func rawRead(fd int, b []byte) (int, error) { return syscall.Read(fd, b) }

func rawWrite(fd int, b []byte) (int, error) { return syscall.Write(fd, b) }
