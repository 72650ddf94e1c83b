//go:build linux

package netconn

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// canTellPending: connPending says whether a connection waits.
const canTellPending = true

// connPending reports whether a connection waits to be accepted on ln (a FIFOListener, or a
// listener with a SyscallConn, as *net.TCPListener); true when it cannot tell.
func connPending(ln net.Listener) bool {
	switch l := ln.(type) {
	case *FIFOListener:
		if !l.ref.acquire() {
			return false
		}
		defer l.end()
		return readable(l.fd)
	case syscall.Conn:
		rc, err := l.SyscallConn()
		if err != nil {
			return true
		}
		ready := true
		if rc.Control(func(fd uintptr) { ready = readable(int(fd)) }) != nil {
			return true
		}
		return ready
	}
	return true
}

// readable polls fd, without waiting: a listening socket is readable when a connection waits.
func readable(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if err == unix.EINTR { //nolint:errorlint // a raw system call returns a bare Errno
			continue
		}
		return err != nil || n > 0
	}
}
