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
}

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
	c.mu.Unlock()
	for f := range funcs {
		go (*f)()
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
