package netconn

import (
	"context"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
)

// Server runs a handler for each accepted connection in its own goroutine and tracks the
// connections so that Shutdown can close them all, as Mountebank destroys every socket of an
// imposter it stops. The tcp and smtp imposters embed it. Set Log and Handle before Serve.
type Server struct {
	Log    *slog.Logger
	Handle func(net.Conn) // serves one connection; the connection is closed when it returns

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Serve accepts connections from ln (a RetryListener: it fails only once closed) until it is
// closed, and serves each in its own goroutine.
func (s *Server) Serve(ln net.Listener) error {
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

// ServeConn serves c on the calling goroutine as Serve serves a connection it accepted: tracked
// until it closes, closed when the handler returns.
func (s *Server) ServeConn(c net.Conn) {
	s.mu.Lock()
	if s.conns == nil {
		s.conns = map[net.Conn]struct{}{}
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	s.run(c)
}

// run serves one connection; a panic ends that connection only.
func (s *Server) run(conn net.Conn) {
	defer func() {
		if p := recover(); p != nil {
			s.Log.Error("panic while serving a connection", "panic", p, "stack", string(debug.Stack()))
		}
		_ = conn.Close()
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
		s.wg.Done()
	}()
	s.Handle(conn)
}

// CloseIdle closes the listener and every connection: a tcp or smtp connection is never
// between requests in a way the server could tell, and Mountebank destroys them all. It
// returns how many connections' handlers may still be running.
func (s *Server) CloseIdle() (busy int) {
	s.mu.Lock()
	s.closed = true
	if s.ln != nil {
		_ = s.ln.Close()
	}
	for c := range s.conns {
		_ = c.Close()
	}
	busy = len(s.conns)
	s.mu.Unlock()
	return busy
}

// Shutdown closes the listener and every connection, then waits for the handlers until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.CloseIdle()
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
