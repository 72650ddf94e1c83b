//go:build linux

package main

import (
	"fmt"
	"net/netip"
	"sync"
	"syscall"
)

// pairSockets is -listen-on-post: the listening socket a POST opens and the next DELETE closes,
// as an imposter's is, with nothing else (no poller, no goroutine): what the kernel must do
// for a create-then-delete pair, which the bare server's canned answers alone leave out.
type pairSockets struct {
	sa syscall.SockaddrInet4
	mu sync.Mutex
	fd int // -1: none open
}

func newPairSockets(addr string) (*pairSockets, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return nil, fmt.Errorf("-listen-on-post %q: want an IPv4 address and port", addr)
	}
	return &pairSockets{sa: syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}, fd: -1}, nil
}

// open makes the listening socket, unless one is open; false if it cannot (the port is taken).
func (p *pairSockets) open() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fd >= 0 {
		return true
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		return false
	}
	if syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1) != nil ||
		syscall.Bind(fd, &p.sa) != nil || syscall.Listen(fd, syscall.SOMAXCONN) != nil {
		_ = syscall.Close(fd)
		return false
	}
	p.fd = fd
	return true
}

// close closes the socket, if one is open.
func (p *pairSockets) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fd >= 0 {
		_ = syscall.Close(p.fd)
		p.fd = -1
	}
}
