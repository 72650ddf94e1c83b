package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
)

// hostileOrigin reads one request per connection and then runs serve on it; it returns its
// address. The connections are closed when the test ends.
func hostileOrigin(t *testing.T, serve func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				go func() { <-done; c.Close() }()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// TestForwardCancelled: an origin that never answers holds a request only until its context
// ends (its client went away, or its imposter was deleted and drained), not for Timeout.
func TestForwardCancelled(t *testing.T) {
	addr := hostileOrigin(t, func(c net.Conn) { _, _ = c.Read(make([]byte, 1)) }) // silent until closed
	p, cerr := Compile(config.NewObject("to", "http://"+addr), 0)
	if cerr != nil {
		t.Fatal(cerr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := p.Forward(ctx, &Request{Method: "GET", URI: []byte("/")})
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond) // not a threshold: the cancel may come before or after the send
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Forward = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Forward still waits on the silent origin after its context ended")
	}
	// A context already done sends nothing.
	if _, err := p.Forward(ctx, &Request{Method: "GET", URI: []byte("/")}); !errors.Is(err, context.Canceled) {
		t.Errorf("Forward with a done context = %v, want context.Canceled", err)
	}
}

// TestForwardBoundsTheAnswer: an origin announcing 100 GB, or streaming a chunked body without
// end, fails the request at the limit instead of taking the memory (a 100 GB Content-Length
// made the process die of running out of memory).
func TestForwardBoundsTheAnswer(t *testing.T) {
	const limit = 1 << 20
	tests := []struct {
		name  string
		serve func(c net.Conn)
	}{
		{"100 GB Content-Length", func(c net.Conn) {
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100000000000\r\n\r\nabc"))
			_, _ = c.Read(make([]byte, 1))
		}},
		{"endless chunked body", func(c net.Conn) {
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"))
			chunk := []byte("10000\r\n" + strings.Repeat("x", 0x10000) + "\r\n")
			for i := 0; i < 1000; i++ { // 64 MiB at most
				if _, err := c.Write(chunk); err != nil {
					return
				}
			}
		}},
		{"Content-Length past the limit", func(c net.Conn) {
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2000000\r\n\r\n" + strings.Repeat("y", 2000000)))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, cerr := Compile(config.NewObject("to", "http://"+hostileOrigin(t, tt.serve)), limit)
			if cerr != nil {
				t.Fatal(cerr)
			}
			got, err := p.Forward(context.Background(), &Request{Method: "GET", URI: []byte("/")})
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Code != config.CodeInvalidProxy || !strings.Contains(ce.Message, "larger than 1048576 bytes") {
				t.Fatalf("Forward = %v, %v; want an invalid proxy error naming the limit", got, err)
			}
		})
	}
	// An answer of exactly the limit is read.
	body := strings.Repeat("z", limit)
	p, _ := Compile(config.NewObject("to", "http://"+hostileOrigin(t, func(c net.Conn) {
		_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n" + body))
	})), limit)
	got, err := p.Forward(context.Background(), &Request{Method: "GET", URI: []byte("/")})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := got.Get("body"); b != body {
		t.Errorf("body of %d bytes not read whole", limit)
	}
}

// An https origin that answers in plain http fails as node fails there: EPROTO, passed through
// with node's fields (test/compat scenario proxy-https-to-plain-origin).
func TestForwardHTTPSToPlainOrigin(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = c.Read(make([]byte, 4096)) // the ClientHello, answered as an http server answers it
		_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"))
	}()
	p, cerr := Compile(config.NewObject("to", "https://"+ln.Addr().String()), 0)
	if cerr != nil {
		t.Fatal(cerr)
	}
	_, err = p.Forward(context.Background(), &Request{Method: "GET", URI: []byte("/")})
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Code != "EPROTO" || ce.Raw == nil {
		t.Fatalf("Forward = %v; want node's EPROTO", err)
	}
	if got := string(config.MarshalJSON(ce.Raw, 0)); !strings.HasPrefix(got, `{"errno":-71,"code":"EPROTO","syscall":"write","message":"write EPROTO `) {
		t.Errorf("rendered %s", got)
	}
}

// A context that tells its receivers itself when it ends (a connection's: see doneNotifier)
// ends the exchange as context.AfterFunc did, leaves nothing registered, and a notice that
// comes after its exchange ended spares the exchanges after it.
func TestForwardCancelledThroughANotifier(t *testing.T) {
	silent := hostileOrigin(t, func(c net.Conn) { _, _ = c.Read(make([]byte, 1)) })
	p, cerr := Compile(config.NewObject("to", "http://"+silent), 0)
	if cerr != nil {
		t.Fatal(cerr)
	}
	ctx := &notifierCtx{Context: context.Background()}
	time.AfterFunc(50*time.Millisecond, ctx.fire) // not a threshold: before or after the send
	errc := make(chan error, 1)
	go func() {
		_, err := p.Forward(ctx, &Request{Method: "GET", URI: []byte("/")})
		errc <- err
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Forward = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Forward still waits on the silent origin after its context ended")
	}
	if _, err := p.Forward(ctx, &Request{Method: "GET", URI: []byte("/")}); !errors.Is(err, context.Canceled) {
		t.Errorf("Forward with an ended context = %v, want context.Canceled", err)
	}
	// A context that ends between the exchange's first look at it and its registering sends nothing.
	between := &notifierCtx{Context: context.Background(), refuse: true}
	if _, err := p.Forward(between, &Request{Method: "GET", URI: []byte("/")}); !errors.Is(err, context.Canceled) {
		t.Errorf("Forward with a context ending as it registers = %v, want context.Canceled", err)
	}

	// An exchange whose context ended as it was answered may be told so after it returned (the
	// notice goes in its own goroutine): the exchanges after it are not ended by that notice
	// (an exchange so told once went back to the pool, and the next one's connection was ended).
	const answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	arrived, release, stop := make(chan struct{}, 8), make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(stop) })
	held := hostileOrigin(t, func(c net.Conn) {
		arrived <- struct{}{}
		select {
		case <-release:
			_, _ = c.Write([]byte(answer))
		case <-stop:
		}
	})
	p, cerr = Compile(config.NewObject("to", "http://"+held), 0)
	if cerr != nil {
		t.Fatal(cerr)
	}
	forward := func(ctx context.Context) <-chan error {
		errc := make(chan error, 1)
		go func() {
			got, err := p.Forward(ctx, &Request{Method: "GET", URI: []byte("/")})
			if b, _ := got.Get("body"); err == nil && b != "ok" {
				err = fmt.Errorf("body %v", b)
			}
			errc <- err
		}()
		<-arrived
		return errc
	}
	for i := range 20 {
		late := &notifierCtx{Context: context.Background()}
		errc := forward(late)
		notices := late.end() // taken, not yet told
		release <- struct{}{}
		<-errc // answered or canceled: either is right
		next := &notifierCtx{Context: context.Background()}
		errc = forward(next)
		for _, r := range notices {
			r.ContextDone(late)
		}
		release <- struct{}{}
		select {
		case err := <-errc:
			if err != nil {
				t.Fatalf("round %d: the exchange after a late notice: %v", i, err)
			}
		case <-arrived:
			t.Fatalf("round %d: the exchange after a late notice sent its request again", i)
		}
		if n := next.registered(); n != 0 {
			t.Fatalf("round %d: the exchange left %d receivers registered", i, n)
		}
	}
}

// notifierCtx is a context with NotifyDone, as netconn's connection context has. refuse
// makes it end as NotifyDone is called (Err reports none before).
type notifierCtx struct {
	context.Context
	refuse bool
	mu     sync.Mutex
	done   bool
	recv   []interface{ ContextDone(context.Context) }
}

func (c *notifierCtx) NotifyDone(r interface{ ContextDone(context.Context) }) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refuse {
		c.done = true // it ends as the receiver comes
	}
	if c.done {
		return false
	}
	c.recv = append(c.recv, r)
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

func (c *notifierCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return context.Canceled
	}
	return nil
}

// fire ends the context, telling its registered receivers each in its own goroutine.
func (c *notifierCtx) fire() {
	for _, r := range c.end() {
		go r.ContextDone(c)
	}
}

// end ends the context and returns the receivers registered, to be told.
func (c *notifierCtx) end() []interface{ ContextDone(context.Context) } {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = true
	recv := c.recv
	c.recv = nil
	return recv
}

func (c *notifierCtx) registered() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.recv)
}
