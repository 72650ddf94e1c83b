package imposter

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// IdleListener closes the connections it accepted once they stay idle, with no request in
// progress, longer than its timeout. It replaces fasthttp's IdleTimeout, which re-arms a read
// deadline twice per request (a runtime timer change each time: 5-8% of a small request's
// cost under load); here a request costs two atomic stores, and one goroutine checks the
// connections every tick. Install IdleConnState as the fasthttp.Server's ConnState hook.
type IdleListener struct {
	net.Listener
	limit int64 // ticks a connection may stay idle
	every time.Duration

	tick atomic.Int64 // starts at 1: an idle mark of 0 means "in a request"

	mu     sync.Mutex
	conns  map[*idleConn]struct{}
	closed bool
	done   chan struct{}
}

// NewIdleListener tracks the connections ln accepts, closing those idle longer than timeout
// (to the second; rounded up).
func NewIdleListener(ln net.Listener, timeout time.Duration) *IdleListener {
	return newIdleListener(ln, timeout, time.Second)
}

func newIdleListener(ln net.Listener, timeout, every time.Duration) *IdleListener {
	l := &IdleListener{
		Listener: ln,
		limit:    int64((timeout+every-1)/every) + 1,
		every:    every,
		conns:    map[*idleConn]struct{}{},
		done:     make(chan struct{}),
	}
	l.tick.Store(1)
	go l.sweep()
	return l
}

// Accept wraps the next connection; it counts as idle until its first request starts.
func (l *IdleListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	ic := &idleConn{Conn: c, l: l}
	ic.since.Store(l.tick.Load())
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		_ = c.Close()
		return nil, net.ErrClosed
	}
	l.conns[ic] = struct{}{}
	l.mu.Unlock()
	return ic, nil
}

// Close stops the sweeping and closes the listener; accepted connections stay open.
func (l *IdleListener) Close() error {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
	l.mu.Unlock()
	return l.Listener.Close()
}

func (l *IdleListener) sweep() {
	t := time.NewTicker(l.every)
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
		}
		now := l.tick.Add(1)
		var stale []*idleConn
		l.mu.Lock()
		for c := range l.conns {
			if s := c.since.Load(); s != 0 && now-s >= l.limit {
				delete(l.conns, c)
				stale = append(stale, c)
			}
		}
		l.mu.Unlock()
		for _, c := range stale {
			_ = c.Conn.Close()
		}
	}
}

func (l *IdleListener) forget(c *idleConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// idleConn is an accepted connection with its idle mark: the tick at which it last became
// idle, 0 while a request is in progress.
type idleConn struct {
	net.Conn
	l     *IdleListener
	since atomic.Int64
	once  sync.Once
	// started is set by the first read that returns data. fasthttp calls a new connection
	// active before reading anything, so until then the connection stays idle.
	started bool
}

func (c *idleConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if !c.started && n > 0 {
		c.started = true
		c.since.Store(0)
	}
	return n, err
}

func (c *idleConn) Close() error {
	c.once.Do(func() { c.l.forget(c) })
	return c.Conn.Close()
}

// IdleConnState is the fasthttp ConnState hook that marks the connections of an IdleListener
// (directly or under TLS) active or idle; other connections are left alone. It runs on the
// connection's goroutine, as its reads do.
func IdleConnState(c net.Conn, st fasthttp.ConnState) {
	ic, ok := c.(*idleConn)
	if !ok {
		nc, isTLS := c.(interface{ NetConn() net.Conn })
		if !isTLS {
			return
		}
		if ic, ok = nc.NetConn().(*idleConn); !ok {
			return
		}
	}
	switch st {
	case fasthttp.StateActive:
		if ic.started {
			ic.since.Store(0)
		}
	case fasthttp.StateIdle:
		ic.since.Store(ic.l.tick.Load())
	}
}
