package netconn

import (
	"context"
	"sync"
	"time"
)

// connContext is a connection's context: done once the peer has closed or reset the
// connection, or it was closed here. Its channel and callbacks are made only when asked for.
type connContext struct {
	mu    sync.Mutex
	done  bool
	ch    chan struct{}
	funcs map[*func()]struct{}
	recv  []DoneReceiver // see NotifyDone
}

// DoneReceiver is told when a connection's context ends (see NotifyDone).
type DoneReceiver = interface{ ContextDone(ctx context.Context) }

var _ context.Context = (*connContext)(nil)

// fire marks the context done, closing its channel and running its callbacks, once.
func (c *connContext) fire() {
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return
	}
	c.done = true
	if c.ch != nil {
		close(c.ch)
	}
	funcs := c.funcs
	c.funcs = nil
	recv := c.recv
	c.recv = nil
	c.mu.Unlock()
	for f := range funcs {
		go (*f)()
	}
	for _, r := range recv {
		go r.ContextDone(c)
	}
}

// Deadline reports no deadline.
func (c *connContext) Deadline() (time.Time, bool) { return time.Time{}, false }

// Done returns a channel closed when the connection ends.
func (c *connContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
		if c.done {
			close(c.ch)
		}
	}
	return c.ch
}

// Err returns context.Canceled once the connection ended, nil before.
func (c *connContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return context.Canceled
	}
	return nil
}

// Value returns nil: the context carries no values.
func (c *connContext) Value(any) any { return nil }

// AfterFunc arranges for f to run in its own goroutine when the connection ends; stop cancels
// that and reports whether it did. context.AfterFunc uses it, so no goroutine waits per call.
func (c *connContext) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		go f()
		return func() bool { return false }
	}
	if c.funcs == nil {
		c.funcs = map[*func()]struct{}{}
	}
	key := &f
	c.funcs[key] = struct{}{}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if _, ok := c.funcs[key]; !ok {
			return false
		}
		delete(c.funcs, key)
		return true
	}
}

// NotifyDone arranges for r.ContextDone(c) to be called in its own goroutine when the connection
// ends, until StopNotifyDone(r); it reports false, registering nothing, when it has already
// ended. Unlike context.AfterFunc (about seven allocations and two more locks a call, which a
// short script's call noticed) it allocates nothing once the connection has registered a receiver
// before: a connection serves one request at a time, so the list holds one receiver or none.
func (c *connContext) NotifyDone(r DoneReceiver) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return false
	}
	c.recv = append(c.recv, r)
	return true
}

// StopNotifyDone undoes NotifyDone(r) and reports whether r was still registered.
func (c *connContext) StopNotifyDone(r DoneReceiver) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, have := range c.recv {
		if have == r {
			last := len(c.recv) - 1
			c.recv[i] = c.recv[last]
			c.recv[last] = nil
			c.recv = c.recv[:last]
			return true
		}
	}
	return false
}
