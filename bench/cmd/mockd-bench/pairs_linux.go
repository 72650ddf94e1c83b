package main

import (
	"syscall"
	"time"
)

// pairConn is the pairs client's one keep-alive connection: a blocking socket written and read
// with plain system calls (rawIO, outside the runtime's bookkeeping, as the load generator's),
// so that a request costs the client one write and, mostly, one read. net/http's client, whose
// reader and writer goroutines wake each other on every request, cost the client more per pair
// than the bare server it measured (~74 us against ~53 us of CPU on a loaded machine) and was
// most of the ceiling's round trip. The socket's send and receive timeouts are the request
// timeout.
type pairConn struct {
	sa      syscall.Sockaddr
	timeout time.Duration
	fd      int
	buf     []byte
	scratch []byte
}

func newPairConn(addr string, timeout time.Duration) (*pairConn, error) {
	sa, err := sockaddrOf(addr)
	if err != nil {
		return nil, err
	}
	return &pairConn{sa: sa, timeout: timeout, fd: -1, buf: make([]byte, 0, 16<<10)}, nil
}

func (c *pairConn) dial() error {
	domain := syscall.AF_INET
	if _, ok := c.sa.(*syscall.SockaddrInet6); ok {
		domain = syscall.AF_INET6
	}
	fd, err := syscall.Socket(domain, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	tv := syscall.NsecToTimeval(c.timeout.Nanoseconds())
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
	_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	if err := syscall.Connect(fd, c.sa); err != nil {
		_ = syscall.Close(fd)
		return ioError(err)
	}
	c.fd = fd
	return nil
}

func (c *pairConn) close() {
	if c.fd >= 0 {
		_ = syscall.Close(c.fd)
		c.fd = -1
	}
}

// roundTrip sends req and reads the whole answer, returning its status. The connection is
// closed after an error, an answer that closes it, or bytes after the answer (none was asked
// for); the next request connects again.
func (c *pairConn) roundTrip(req []byte) (int, error) {
	if c.fd < 0 {
		if err := c.dial(); err != nil {
			return 0, err
		}
	}
	for w := req; len(w) > 0; {
		n, err := rawIO(syscall.SYS_WRITE, c.fd, w)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			c.close()
			return 0, ioError(err)
		}
		w = w[n:]
	}
	c.buf = c.buf[:0]
	for {
		if len(c.buf) == cap(c.buf) {
			c.buf = append(c.buf, 0)[:len(c.buf)]
		}
		n, err := rawIO(syscall.SYS_READ, c.fd, c.buf[len(c.buf):cap(c.buf)])
		if err == syscall.EINTR {
			continue // a signal (preemption, the collector): the timeout starts again, which is fine
		}
		if err != nil {
			c.close()
			return 0, ioError(err)
		}
		if status, done, err := c.answered(n, n == 0); done {
			return status, err
		}
	}
}

// ioError is a failed system call's error, errPairTimeout when a socket timeout ran out.
func ioError(err error) error {
	if err == syscall.EAGAIN || err == syscall.EWOULDBLOCK || err == syscall.EINPROGRESS {
		return errPairTimeout
	}
	return err
}
