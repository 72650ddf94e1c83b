package imposter

import (
	"context"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
)

// connServer runs a handler for each accepted connection in its own goroutine and tracks the
// connections so that shutdown can close them all, as Mountebank destroys every socket of an
// imposter it stops. The tcp and smtp servers embed it.
type connServer struct {
	log    *slog.Logger
	handle func(net.Conn) // serves one connection; the connection is closed when it returns

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

func (s *connServer) serve(ln net.Listener) error {
	s.mu.Lock()
	s.ln = ln
	closed := s.closed
	if s.conns == nil {
		s.conns = map[net.Conn]struct{}{}
	}
	s.mu.Unlock()
	if closed {
		_ = ln.Close()
		return nil
	}
	for {
		conn, err := ln.Accept() // a RetryListener: it fails only once closed
		if err != nil {
			return nil
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = conn.Close()
			return nil
		}
		s.conns[conn] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.run(conn)
	}
}

// run serves one connection; a panic ends that connection only.
func (s *connServer) run(conn net.Conn) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic while serving a connection", "panic", p, "stack", string(debug.Stack()))
		}
		_ = conn.Close()
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
		s.wg.Done()
	}()
	s.handle(conn)
}

// closeIdle closes the listener and every connection: a tcp or smtp connection is never
// between requests in a way the server could tell, and Mountebank destroys them all.
func (s *connServer) closeIdle() {
	s.mu.Lock()
	s.closed = true
	if s.ln != nil {
		_ = s.ln.Close()
	}
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
}

// shutdown closes the listener and every connection, then waits for the handlers until ctx ends.
func (s *connServer) shutdown(ctx context.Context) error {
	s.closeIdle()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
