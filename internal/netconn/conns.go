package netconn

import (
	"context"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Server runs a handler for each accepted connection in its own goroutine and tracks the
// connections so that Shutdown can close them all, as Mountebank destroys every socket of an
// imposter it stops. The tcp and smtp imposters embed it. Set Log and Handle before Serve.
//
// A connection counts as idle from its accept until its handler marks it busy, and again when
// the handler marks it idle (see IdleMark): the process out of file descriptors closes the
// connections idle longest, of every Server and IdleListener (see ReclaimIdle).
type Server struct {
	Log    *slog.Logger
	Handle func(c net.Conn, idle *IdleMark) // serves one connection; c is closed when it returns

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]*IdleMark
	closed bool
	listed bool // in withServers
	wg     sync.WaitGroup
}

// IdleMark is where a Server's handler says whether its connection waits for the client (idle:
// between requests, nothing of the next read yet) or serves it (busy). Its methods are for the
// connection's goroutine.
type IdleMark struct {
	since atomic.Int64 // serverTick when it went idle; 0 while busy
}

// Idle marks the connection idle: the answer is written, and nothing of the next request read.
func (m *IdleMark) Idle() { m.since.Store(serverTick.Load()) }

// Busy marks the connection busy: a request began.
func (m *IdleMark) Busy() {
	if m.since.Load() != 0 {
		m.since.Store(0)
	}
}

// serverTick counts the seconds since the first Server connection (from 1), for the ages of
// idle connections.
var (
	serverTick      atomic.Int64
	serverTickStart sync.Once
)

func startServerTick() {
	serverTickStart.Do(func() {
		serverTick.Store(1)
		go func() {
			for range time.Tick(time.Second) {
				serverTick.Add(1)
			}
		}()
	})
}

// Serve accepts connections from ln (a RetryListener: it fails only once closed) until it is
// closed, and serves each in its own goroutine.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	s.ln = ln
	closed := s.closed
	if s.conns == nil {
		s.conns = map[net.Conn]*IdleMark{}
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
		m := s.track(conn)
		s.mu.Unlock()
		go s.run(conn, m)
	}
}

// track lists c, idle until its handler says otherwise; s.mu is held.
func (s *Server) track(c net.Conn) *IdleMark {
	startServerTick()
	m := &IdleMark{}
	m.Idle()
	s.conns[c] = m
	s.wg.Add(1)
	if !s.listed {
		s.listed = true
		withServers.add(s)
	}
	return m
}

// ServeConn serves c on the calling goroutine as Serve serves a connection it accepted: tracked
// until it closes, closed when the handler returns.
func (s *Server) ServeConn(c net.Conn) {
	s.mu.Lock()
	if s.conns == nil {
		s.conns = map[net.Conn]*IdleMark{}
	}
	m := s.track(c)
	s.mu.Unlock()
	s.run(c, m)
}

// run serves one connection; a panic ends that connection only.
func (s *Server) run(conn net.Conn, m *IdleMark) {
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
	s.Handle(conn, m)
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
	listed := s.listed
	s.listed = false
	s.mu.Unlock()
	if listed {
		withServers.remove(s)
	}
	return busy
}

// idleConns appends s's connections idle for minReclaimAge seconds at least, with their age.
func (s *Server) idleConns(found []reclaimable) []reclaimable {
	now := serverTick.Load()
	s.mu.Lock()
	for c, m := range s.conns {
		if since := m.since.Load(); since != 0 && now-since >= minReclaimAge {
			found = append(found, reclaimable{s: s, c: c, m: m, age: time.Duration(now-since) * time.Second})
		}
	}
	s.mu.Unlock()
	return found
}

// closeIdle closes c if it is still idle.
func (s *Server) closeIdle(c net.Conn, m *IdleMark) bool {
	s.mu.Lock()
	_, ok := s.conns[c]
	if ok = ok && m.since.Load() != 0; ok {
		m.since.Store(0) // listed until its handler returns: closed once
	}
	s.mu.Unlock()
	if ok {
		_ = c.Close()
	}
	return ok
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
