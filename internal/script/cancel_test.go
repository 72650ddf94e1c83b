package script

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
)

// A call whose request is canceled (its client went away) is interrupted, however long its
// time limit, and the next call on the runtime is not.
func TestCancelInterruptsTheCall(t *testing.T) {
	e := newEngine(t, time.Minute)
	s := e.NewScope(nil)
	for _, src := range []string{
		`function () { while (true) {} }`,
		`function (config) { setTimeout(function () { config.callback({ body: 'late' }); }, 50000); }`,
	} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := s.Response(ctx, src, testRequest())
		if err == nil || !strings.Contains(jsonOf(err.(*config.Error).Source), "cancel") {
			t.Errorf("%s: error %v, want a cancellation", src, err)
		}
		cancel()
	}
	got, err := s.Response(context.Background(), `function () { return { body: ['next'].join('') }; }`, testRequest()) // a method call: on goja, not native
	if err != nil || jsonOf(got) != `{"body":"next"}` {
		t.Errorf("the call after a canceled one: %s %v", jsonOf(got), err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = s.Decorate(ctx, `function (config, response) { for (;;) {} }`, testRequest(), nil)
	if err == nil {
		t.Error("a decorate function whose request was canceled did not fail")
	}
}

// A context that tells the runtime itself when it ends (a connection's: see doneNotifier)
// interrupts the call it was given to, and only that one: a late notice spares the next call.
func TestCancelThroughANotifier(t *testing.T) {
	e := newEngine(t, time.Minute)
	s := e.NewScope(nil)
	ctx := &notifierCtx{Context: context.Background()}
	time.AfterFunc(50*time.Millisecond, ctx.fire)
	_, err := s.Response(ctx, `function () { while (true) {} }`, testRequest())
	if err == nil || !strings.Contains(jsonOf(err.(*config.Error).Source), "cancel") {
		t.Fatalf("error %v, want a cancellation", err)
	}
	if ctx.registered() != 0 {
		t.Error("the call left its receiver registered")
	}
	// A notice that arrives after its call ended interrupts nothing.
	late := &notifierCtx{Context: context.Background()}
	if _, err := s.Response(late, `function () { return { body: ['one'].join('') }; }`, testRequest()); err != nil {
		t.Fatal(err)
	}
	for _, r := range late.all {
		r.ContextDone(late)
	}
	got, err := s.Response(context.Background(), `function () { return { body: ['next'].join('') }; }`, testRequest()) // a method call: on goja, not native
	if err != nil || jsonOf(got) != `{"body":"next"}` {
		t.Errorf("the call after a late notice: %s %v", jsonOf(got), err)
	}
	// A context that ended before the call cancels it at once.
	done := &notifierCtx{Context: context.Background()}
	done.fire()
	if _, err := s.Response(done, `function () { while (true) {} }`, testRequest()); err == nil {
		t.Error("a call given an ended context ran")
	}
}

// notifierCtx is a context with NotifyDone, as netconn's connection context has.
type notifierCtx struct {
	context.Context
	mu   sync.Mutex
	done bool
	recv []interface{ ContextDone(context.Context) }
	all  []interface{ ContextDone(context.Context) } // every receiver ever registered
}

func (c *notifierCtx) NotifyDone(r interface{ ContextDone(context.Context) }) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return false
	}
	c.recv = append(c.recv, r)
	c.all = append(c.all, r)
	return true
}

func (c *notifierCtx) StopNotifyDone(r interface{ ContextDone(context.Context) }) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, have := range c.recv {
		if have == r {
			c.recv = append(c.recv[:i], c.recv[i+1:]...)
			return true
		}
	}
	return false
}

func (c *notifierCtx) registered() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.recv)
}

func (c *notifierCtx) fire() {
	c.mu.Lock()
	c.done = true
	recv := c.recv
	c.recv = nil
	c.mu.Unlock()
	for _, r := range recv {
		go r.ContextDone(c)
	}
}
