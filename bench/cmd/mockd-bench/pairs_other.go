//go:build !linux

package main

import (
	"errors"
	"io"
	"net"
	"os"
	"time"
)

// pairConn is the pairs client's one keep-alive connection (see pairs_linux.go); here through
// the runtime's network poller.
type pairConn struct {
	addr    string
	timeout time.Duration
	c       net.Conn
	buf     []byte
	scratch []byte
}

func newPairConn(addr string, timeout time.Duration) (*pairConn, error) {
	return &pairConn{addr: addr, timeout: timeout, buf: make([]byte, 0, 16<<10)}, nil
}

func (c *pairConn) close() {
	if c.c != nil {
		_ = c.c.Close()
		c.c = nil
	}
}

func (c *pairConn) roundTrip(req []byte) (int, error) {
	if c.c == nil {
		conn, err := net.DialTimeout("tcp", c.addr, c.timeout)
		if err != nil {
			return 0, ioError(err)
		}
		c.c = conn
	}
	_ = c.c.SetDeadline(time.Now().Add(c.timeout))
	if _, err := c.c.Write(req); err != nil {
		c.close()
		return 0, ioError(err)
	}
	c.buf = c.buf[:0]
	for {
		if len(c.buf) == cap(c.buf) {
			c.buf = append(c.buf, 0)[:len(c.buf)]
		}
		n, err := c.c.Read(c.buf[len(c.buf):cap(c.buf)])
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			c.close()
			return 0, ioError(err)
		}
		if status, done, err := c.answered(n, eof); done {
			return status, err
		}
	}
}

func ioError(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return errPairTimeout
	}
	return err
}
