package netconn

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
)

// fdReserve is a file descriptor a listener keeps open for when the process runs out of them
// (see RetryListener.KeepReserve): closing it lets one connection be accepted.
type fdReserve struct {
	mu     sync.Mutex
	f      *os.File
	closed bool // its listener is closed: the reserve is not taken back
}

// hold opens the reserve if it is not open (it may fail while descriptors are short: it is
// tried again at the next use).
func (r *fdReserve) hold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil && !r.closed {
		if f, err := os.Open(os.DevNull); err == nil {
			r.f = f
		}
	}
}

// release closes the reserve and reports whether it was open.
func (r *fdReserve) release() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return false
	}
	_ = r.f.Close()
	r.f = nil
	return true
}

// shut closes the reserve for good.
func (r *fdReserve) shut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.f != nil {
		_ = r.f.Close()
		r.f = nil
	}
}

// reserveConn is a connection accepted on the reserve's descriptor: closing it takes the
// reserve back.
type reserveConn struct {
	net.Conn
	r    *fdReserve
	once sync.Once
}

func (c *reserveConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.r.hold)
	return err
}

// CloseWrite and Context are the wrapped connection's (see drain and Context).
func (c *reserveConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

func (c *reserveConn) Context() context.Context {
	if cc, ok := c.Conn.(interface{ Context() context.Context }); ok {
		return cc.Context()
	}
	return context.Background()
}
