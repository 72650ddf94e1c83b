package netconn

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// fdGate keeps the process's other accepts off a descriptor freed for the reserve (see
// RetryListener.KeepReserve). A process out of descriptors has one free only when something
// closes one, and the kernel gives the lowest free number to whichever call asks first: the
// reserve's accept, or a tcp imposter's accept retrying every 50 ms for its waiting clients,
// which then held it, and the admin API's client waited for a minute unanswered. The reserve is
// closed and its connection accepted, and that connection closed and the reserve opened again,
// holding the gate; the FIFO listeners' accepts (every imposter's, by default), the retried
// accepts of other listeners with a client waiting, and PrepareSpares's socket hold it shared.
// A listener of the runtime's poller accepting a new client at that moment, a proxy's
// connection or a file opened then can still take the descriptor: the reserve is opened again
// at its next use, when descriptors are free.
var fdGate sync.RWMutex

// gateWaits counts the shared holds of fdGate that waited for the reserve (tests watch it).
var gateWaits atomic.Int64

// gateShared holds fdGate shared; gateDone lets it go.
func gateShared() {
	if !fdGate.TryRLock() {
		gateWaits.Add(1)
		fdGate.RLock()
	}
}

func gateDone() { fdGate.RUnlock() }

// reserveAcceptWait bounds the wait of the reserve's accept, which a client waits for: the
// gate is held meanwhile.
const reserveAcceptWait = time.Second

// fdReserve is a file descriptor a listener keeps open for when the process runs out of them
// (see RetryListener.KeepReserve): closing it lets one connection be accepted.
type fdReserve struct {
	mu     sync.Mutex
	f      io.Closer
	closed bool // its listener is closed: the reserve is not taken back

	// open opens a descriptor for the reserve (nil: /dev/null; tests count theirs).
	open func() (io.Closer, error)
	// freed, when set (by a test), runs while the reserve's descriptor is free, holding
	// fdGate: after the reserve closed for an accept, and after its connection closed.
	freed func()
}

// hold opens the reserve if it is not open (it may fail while descriptors are short: it is
// tried again at the next use).
func (r *fdReserve) hold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.holdLocked()
}

func (r *fdReserve) holdLocked() {
	if r.f != nil || r.closed {
		return
	}
	var f io.Closer
	var err error
	if r.open != nil {
		f, err = r.open()
	} else {
		f, err = os.Open(os.DevNull)
	}
	if err == nil {
		r.f = f
	}
}

// accept closes the reserve and accepts a connection of ln (which has one waiting) in its
// place, holding fdGate throughout; nil if the reserve could not be opened, or the accept
// failed (the reserve is then opened again).
func (r *fdReserve) accept(ln net.Listener) net.Conn {
	fdGate.Lock()
	defer fdGate.Unlock()
	r.mu.Lock()
	r.holdLocked() // lost at its last use, it may be had again now
	f := r.f
	r.f = nil
	r.mu.Unlock()
	if f == nil {
		return nil
	}
	_ = f.Close()
	if r.freed != nil {
		r.freed()
	}
	c, err := acceptWaiting(ln, true)
	if err != nil {
		r.hold()
		return nil
	}
	return &reserveConn{Conn: c, r: r}
}

// stand returns c, accepted while descriptors were free, or as a reserveConn if the reserve
// is out and cannot be had again: c then took the descriptor freed for it (a client of the
// same listener came as the reserve's connection closed), and closing c takes the reserve
// back.
func (r *fdReserve) stand(c net.Conn) net.Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f != nil || r.closed {
		return c
	}
	if r.holdLocked(); r.f != nil {
		return c
	}
	return &reserveConn{Conn: c, r: r}
}

// acceptWaiting accepts the connection waiting on ln, waiting at most reserveAcceptWait (where
// ln can tell: the waiting connection is accepted at once, but a wait here holds fdGate). held
// says the caller holds fdGate: a FIFO listener then does not take it.
func acceptWaiting(ln net.Listener, held bool) (net.Conn, error) {
	if h, ok := ln.(gatedListener); ok {
		return h.acceptNow(held)
	}
	if d, ok := ln.(interface{ SetDeadline(time.Time) error }); ok && d.SetDeadline(time.Now().Add(reserveAcceptWait)) == nil {
		defer func() { _ = d.SetDeadline(time.Time{}) }()
	}
	return ln.Accept()
}

// gatedListener is a listener whose accepts hold fdGate themselves (the FIFO listener).
type gatedListener interface {
	// acceptNow accepts a waiting connection without waiting for one; it holds fdGate unless
	// the caller does (held).
	acceptNow(held bool) (net.Conn, error)
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
// reserve back, holding fdGate between the two.
type reserveConn struct {
	net.Conn
	r    *fdReserve
	once sync.Once
}

func (c *reserveConn) Close() error {
	first := false
	var err error
	c.once.Do(func() {
		first = true
		fdGate.Lock()
		defer fdGate.Unlock()
		err = c.Conn.Close()
		if c.r.freed != nil {
			c.r.freed()
		}
		c.r.hold()
	})
	if !first {
		return c.Conn.Close() // closed already: the wrapped connection's error
	}
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
