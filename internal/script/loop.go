package script

import (
	"context"
	"errors"
	"io"
	"runtime/debug"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// ioCall is the network I/O one script call started (sockets of require('net'), requests of
// require('http') and require('https')): Node's event loop, reduced to what a call needs.
//
// Goroutines do the blocking work (dial, read, the HTTP round trip) and post each event as a job;
// the jobs run one at a time on the goroutine that runs the call, inside runUntil, so JavaScript
// only ever runs there. A goroutine that reads waits for its job to run before it reads again,
// so a script that is slow to consume holds back at most one chunk per socket.
//
// Everything ends with the call: when it returns (its callback was called, it timed out, or its
// request was cancelled) stop closes every socket, cancels every request and waits for the
// goroutines, so nothing a script opened outlives the call that opened it.
type ioCall struct {
	ctx    context.Context // cancelled by stop
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	queue []func() error
	wake  chan struct{} // signalled (without blocking) when a job is queued

	// Touched only on the call's goroutine:
	pending int         // operations that may still post a job
	closers []io.Closer // what stop closes
	sockets map[int64]*jsSocket
	aborts  map[int64]context.CancelFunc // by request id (node_http.go)
	nextID  int64
}

// io returns the I/O of the running call, starting it on first use.
func (rt *runtime) io() *ioCall {
	if rt.ioc == nil {
		ctx, cancel := context.WithDeadline(context.Background(), rt.deadline)
		rt.ioc = &ioCall{ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1), sockets: map[int64]*jsSocket{}, aborts: map[int64]context.CancelFunc{}}
	}
	return rt.ioc
}

// stopIO ends the running call's I/O, if it started any, and waits for its goroutines.
func (rt *runtime) stopIO() {
	c := rt.ioc
	if c == nil {
		return
	}
	rt.ioc = nil
	c.cancel()
	for _, cl := range c.closers {
		_ = cl.Close()
	}
	c.wg.Wait()
	c.mu.Lock()
	c.queue = nil
	c.mu.Unlock()
}

// goroutine runs fn on a new goroutine that stop waits for. A panic is logged, not raised.
func (c *ioCall) goroutine(rt *runtime, fn func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() {
			if p := recover(); p != nil {
				rt.log.Error("panic in script I/O", "panic", p, "stack", string(debug.Stack()))
			}
		}()
		fn()
	}()
}

// post queues job to run on the call's goroutine; it reports false when the call has ended.
func (c *ioCall) post(job func() error) bool {
	c.mu.Lock()
	if c.ctx.Err() != nil {
		c.mu.Unlock()
		return false
	}
	c.queue = append(c.queue, job)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return true
}

// postWait posts job and waits until it ran; it reports false when the call ended first.
func (c *ioCall) postWait(job func() error) bool {
	ran := make(chan struct{})
	if !c.post(func() error { defer close(ran); return job() }) {
		return false
	}
	select {
	case <-ran:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// runQueued runs the jobs queued so far; it reports whether there were any.
func (c *ioCall) runQueued() (bool, error) {
	if c == nil {
		return false, nil
	}
	c.mu.Lock()
	jobs := c.queue
	c.queue = nil
	c.mu.Unlock()
	for i, job := range jobs {
		if err := job(); err != nil {
			c.mu.Lock()
			c.queue = append(jobs[i+1:len(jobs):len(jobs)], c.queue...)
			c.mu.Unlock()
			return true, err
		}
	}
	return len(jobs) > 0, nil
}

// busy reports whether an event may still come.
func (c *ioCall) busy() bool {
	if c == nil {
		return false
	}
	if c.pending > 0 {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue) > 0
}

// errStalled is returned by runUntil when nothing left could make the awaited thing happen.
var errStalled = errors.New("no pending timers")

// runUntil runs due timers and I/O events, in order, until done reports true, the deadline
// passes, ctx ends, or nothing is left that could run.
func (rt *runtime) runUntil(ctx context.Context, done func() bool) error {
	for !done() {
		if ran, err := rt.ioc.runQueued(); err != nil {
			return err
		} else if ran {
			continue
		}
		next := -1
		for i, t := range rt.timers {
			if !t.canceled && (next < 0 || t.when.Before(rt.timers[next].when)) {
				next = i
			}
		}
		if next < 0 && !rt.ioc.busy() {
			return errStalled
		}
		now := time.Now()
		if !now.Before(rt.deadline) {
			return errTimeout{rt.limit}
		}
		if next >= 0 && !rt.timers[next].when.After(now) {
			if err := rt.fire(next); err != nil {
				return err
			}
			continue
		}
		until := rt.deadline
		if next >= 0 && rt.timers[next].when.Before(until) {
			until = rt.timers[next].when
		}
		var wake chan struct{}
		if rt.ioc != nil {
			wake = rt.ioc.wake
		}
		t := time.NewTimer(until.Sub(now))
		select {
		case <-t.C:
		case <-wake:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return errCanceled{} // as cancelOn reports a call interrupted in JavaScript
		}
	}
	return nil
}

// fire runs the timer at index i of rt.timers, which is due.
func (rt *runtime) fire(i int) error {
	t := rt.timers[i]
	if t.every > 0 {
		t.when = time.Now().Add(t.every)
	} else {
		rt.timers = append(rt.timers[:i], rt.timers[i+1:]...)
	}
	_, err := t.fn(goja.Undefined(), t.args...)
	return err
}
