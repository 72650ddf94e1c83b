//go:build !linux

package netconn

import "net"

// ListenFIFO returns ln: without epoll the runtime poller serves its connections.
func ListenFIFO(ln *net.TCPListener) (net.Listener, error) { return ln, nil }

// StartOnConn reports false: without the FIFO poller an accept loop starts at once.
func StartOnConn(net.Listener, Starter) bool { return false }

// AdoptFIFO returns c: without epoll the runtime poller serves it.
func AdoptFIFO(c net.Conn) net.Conn { return c }
