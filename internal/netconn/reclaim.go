package netconn

import (
	"slices"
	"sync"
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

// withConns holds the IdleListeners that accepted a connection and are not closed: where
// ReclaimIdle looks for idle connections.
var withConns listenerSet

type listenerSet struct {
	mu sync.Mutex
	m  map[*IdleListener]struct{}
}

func (s *listenerSet) add(l *IdleListener) {
	s.mu.Lock()
	if s.m == nil {
		s.m = map[*IdleListener]struct{}{}
	}
	s.m[l] = struct{}{}
	s.mu.Unlock()
}

func (s *listenerSet) remove(l *IdleListener) {
	s.mu.Lock()
	delete(s.m, l)
	s.mu.Unlock()
}

func (s *listenerSet) list() []*IdleListener {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*IdleListener, 0, len(s.m))
	for l := range s.m {
		out = append(out, l)
	}
	return out
}

// ReclaimIdle closes up to n of the http connections (of every IdleListener of the process)
// that wait for their next or first request, those idle longest first, and returns how many it
// closed. An accept that fails for want of file descriptors calls it (see RetryListener): idle
// keep-alive connections held open by clients would otherwise keep every listener, the admin
// API's too, from accepting until the idle timeout closes them, as closing an idle connection
// is what a server may do at any time (a client sends its next request on a new one).
func ReclaimIdle(n int) int {
	type idle struct {
		l   *IdleListener
		c   *idleConn
		age int64 // in ticks of its listener: a second each but in tests
	}
	var found []idle
	for _, l := range withConns.list() {
		now := l.tick.Load()
		l.mu.Lock()
		for c := range l.conns {
			if s := c.since.Load(); s != 0 && now-s >= minReclaimAge {
				found = append(found, idle{l, c, now - s})
			}
		}
		l.mu.Unlock()
	}
	slices.SortFunc(found, func(a, b idle) int { return int(b.age - a.age) })
	closed := 0
	for _, f := range found {
		if closed == n {
			break
		}
		f.l.mu.Lock()
		_, ok := f.l.conns[f.c]
		ok = ok && f.c.since.Load() != 0 // not busy since
		if ok {
			delete(f.l.conns, f.c)
		}
		f.l.mu.Unlock()
		if ok {
			_ = f.c.raw.Close()
			closed++
		}
	}
	return closed
}
