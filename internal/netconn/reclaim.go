package netconn

import (
	"cmp"
	"net"
	"slices"
	"sync"
	"time"
)

// reclaimBatch is how many idle connections one accept that ran out of file descriptors closes
// at most (nginx closes up to 32 idle keep-alive connections when it runs short of them).
const reclaimBatch = 32

// minReclaimAge is how many ticks of its listener (a second each) a connection must have been
// idle to be closed for another: at least one whole tick. A connection just accepted is marked
// idle until its first read begins, and its request may already wait unread: closing it then
// reset a client that had sent its request (the admin API's GET, accepted on a descriptor freed
// for it and closed at once by a tcp imposter's accept retrying with clients waiting).
const minReclaimAge = 2

// withConns holds the IdleListeners that accepted a connection and are not closed, and
// withServers the Servers: where ReclaimIdle looks for idle connections.
var (
	withConns   listenerSet[*IdleListener]
	withServers listenerSet[*Server]
)

type listenerSet[T comparable] struct {
	mu sync.Mutex
	m  map[T]struct{}
}

func (s *listenerSet[T]) add(l T) {
	s.mu.Lock()
	if s.m == nil {
		s.m = map[T]struct{}{}
	}
	s.m[l] = struct{}{}
	s.mu.Unlock()
}

func (s *listenerSet[T]) remove(l T) {
	s.mu.Lock()
	delete(s.m, l)
	s.mu.Unlock()
}

func (s *listenerSet[T]) list() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]T, 0, len(s.m))
	for l := range s.m {
		out = append(out, l)
	}
	return out
}

// reclaimable is an idle connection ReclaimIdle may close: an IdleListener's (l, ic) or a
// Server's (s, c, m), idle for age.
type reclaimable struct {
	l   *IdleListener
	ic  *idleConn
	s   *Server
	c   net.Conn
	m   *IdleMark
	age time.Duration
}

// ReclaimIdle closes up to n of the connections (of every IdleListener and Server of the
// process) that wait for their next or first request, those idle longest first, and returns how
// many it closed: http connections between requests, tcp ones between an answer and the next
// request's first byte, smtp ones waiting for a command (not in a message). An accept that
// fails for want of file descriptors calls it (see RetryListener): idle connections held open
// by clients would otherwise keep every listener, the admin API's too, from accepting until the
// idle timeout closes them, as closing an idle connection is what a server may do at any time
// (a client sends its next request on a new one).
func ReclaimIdle(n int) int {
	var found []reclaimable
	for _, l := range withConns.list() {
		now := l.tick.Load()
		l.mu.Lock()
		for c := range l.conns {
			if s := c.since.Load(); s != 0 && now-s >= minReclaimAge {
				found = append(found, reclaimable{l: l, ic: c, age: time.Duration(now-s) * l.every})
			}
		}
		l.mu.Unlock()
	}
	for _, s := range withServers.list() {
		found = s.idleConns(found)
	}
	slices.SortFunc(found, func(a, b reclaimable) int { return cmp.Compare(b.age, a.age) })
	closed := 0
	for _, f := range found {
		if closed == n {
			break
		}
		if f.s != nil {
			if f.s.closeIdle(f.c, f.m) {
				closed++
			}
			continue
		}
		f.l.mu.Lock()
		_, ok := f.l.conns[f.ic]
		ok = ok && f.ic.since.Load() != 0 // not busy since
		if ok {
			delete(f.l.conns, f.ic)
		}
		f.l.mu.Unlock()
		if ok {
			_ = f.ic.raw.Close()
			closed++
		}
	}
	return closed
}
