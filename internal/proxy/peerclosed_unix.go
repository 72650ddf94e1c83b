//go:build unix

package proxy

import (
	"net"
	"syscall"
)

// peerClosed reports whether conn, a kept-alive connection about to carry a request again, has
// something waiting to be read: the origin's FIN (it closed the connection after its last answer
// without a Connection: close), a reset, or bytes no request asked for. Node's agent (so
// Mountebank's proxy) drops such a socket when its end comes and sends the next request on a new
// one. It peeks without waiting (one recvfrom) and reads nothing.
func peerClosed(conn net.Conn) bool {
	if tc, ok := conn.(interface{ NetConn() net.Conn }); ok { // *tls.Conn: its socket
		conn = tc.NetConn()
	}
	if fc, ok := conn.(interface{ PeerClosed() bool }); ok { // netconn's (AdoptFIFO)
		return fc.PeerClosed()
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// Nothing waits (EAGAIN): the connection is as the last answer left it. Else the
		// origin's EOF (0 bytes, no error), a reset, or bytes before any request.
		//nolint:errorlint // syscall errors are compared so
		closed = rerr != syscall.EAGAIN && rerr != syscall.EWOULDBLOCK && rerr != syscall.EINTR
		return true
	})
	return closed || err != nil
}
