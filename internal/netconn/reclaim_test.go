package netconn

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// acceptAll accepts from il until it is closed and returns the connections, by the client's
// address, as they come.
func acceptAll(t *testing.T, il *IdleListener) func(client net.Conn) *idleConn {
	t.Helper()
	var mu sync.Mutex
	got := map[string]*idleConn{}
	go func() {
		for {
			c, err := il.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			got[c.RemoteAddr().String()] = c.(*idleConn)
			mu.Unlock()
		}
	}()
	return func(client net.Conn) *idleConn {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
			mu.Lock()
			c := got[client.LocalAddr().String()]
			mu.Unlock()
			if c != nil {
				return c
			}
			if time.Now().After(deadline) {
				t.Fatal("the connection was not accepted")
			}
		}
	}
}

// ReclaimIdle closes the connections idle longest first, and never one in a request or one
// idle for less than a whole tick (just accepted: its request may wait unread).
func TestReclaimIdleClosesTheOldest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	il := newIdleListener(ln, ListenOptions{IdleTimeout: time.Hour}, time.Hour)
	defer il.CloseAll()
	defer il.Close()
	server := acceptAll(t, il)
	clients := map[string]net.Conn{}
	for _, name := range []string{"a", "b", "c", "busy", "fresh", "new"} {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients[name] = c
	}
	// idle since ticks 1 (a), 3 (b) and 2 (c) of 10; busy is in a request; fresh and new were
	// accepted in the tick before and in this one
	il.tick.Store(10)
	for name, since := range map[string]int64{"a": 1, "b": 3, "c": 2, "busy": 0, "fresh": 9, "new": 10} {
		server(clients[name]).since.Store(since)
	}
	for _, step := range []struct {
		n, closed int
		gone      []string
	}{{2, 2, []string{"a", "c"}}, {5, 1, []string{"b"}}, {5, 0, nil}} {
		if got := ReclaimIdle(step.n); got != step.closed {
			t.Fatalf("ReclaimIdle(%d) closed %d, want %d", step.n, got, step.closed)
		}
		for _, name := range step.gone {
			if !closedWithin(clients[name], 10*time.Second) {
				t.Fatalf("%s was not closed", name)
			}
		}
	}
	for _, name := range []string{"busy", "fresh", "new"} {
		if closedWithin(clients[name], 50*time.Millisecond) {
			t.Fatalf("%s was closed", name)
		}
	}
}

// fdLimitListener fails its accepts as a process out of file descriptors does while limit of
// the connections it accepted are open.
type fdLimitListener struct {
	net.Listener
	limit int64
	open  atomic.Int64
	rl    *RetryListener // its reserve, if it keeps one, counts
}

func (l *fdLimitListener) reserved() int64 {
	if l.rl == nil || l.rl.reserve == nil {
		return 0
	}
	l.rl.reserve.mu.Lock()
	defer l.rl.reserve.mu.Unlock()
	if l.rl.reserve.f != nil {
		return 1
	}
	return 0
}

func (l *fdLimitListener) Accept() (net.Conn, error) {
	if l.open.Load()+l.reserved() >= l.limit {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.open.Add(1)
	return &countedConn{Conn: c, open: &l.open}, nil
}

// SyscallConn is the TCP listener's: whether a connection waits is asked of the socket.
func (l *fdLimitListener) SyscallConn() (syscall.RawConn, error) {
	return l.Listener.(*net.TCPListener).SyscallConn()
}

type countedConn struct {
	net.Conn
	open *atomic.Int64
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.open.Add(-1) })
	return c.Conn.Close()
}

// A server out of file descriptors, whose clients hold idle keep-alive connections, closes the
// idle ones to accept a new client (it paused, retrying, until their idle timeout); a
// connection in a request is left to finish it.
func TestOutOfDescriptorsClosesIdleConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limited := &fdLimitListener{Listener: ln, limit: 3}
	il := newIdleListener(NewRetryListener(limited, nil), ListenOptions{IdleTimeout: time.Hour}, 10*time.Millisecond)
	release, entered := serveHold(t, il)

	dial := func() net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	// Two keep-alive connections idle after a request, one in a request: the limit.
	var idle []net.Conn
	for range 2 {
		c := dial()
		if got := idleGet(t, c, bufio.NewReader(c), "/"); got != "ok" {
			t.Fatalf("body %q", got)
		}
		idle = append(idle, c)
	}
	busy := dial()
	if _, err := io.WriteString(busy, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	waitEntered(t, entered)
	// and the two others idle (a connection is marked idle after its answer is written)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		il.mu.Lock()
		n := 0
		for c := range il.conns {
			if c.since.Load() != 0 {
				n++
			}
		}
		il.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the keep-alive connections did not go idle")
		}
	}
	// A new client is served.
	c := dial()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // (a hang is not a slow answer)
	if got := idleGet(t, c, bufio.NewReader(c), "/"); got != "ok" {
		t.Fatalf("the new client: body %q", got)
	}
	for _, c := range idle {
		if !closedWithin(c, 10*time.Second) {
			t.Error("an idle connection was left open")
		}
	}
	// The one in a request is answered.
	release()
	answeredOK(t, busy)
}

// A listener that keeps a descriptor in reserve (the admin API's) accepts a client while the
// process is out of descriptors and no idle connection can be closed (connections in requests,
// or tcp ones, hold them all): the reserve is closed for it, and taken back when it closes.
func TestReserveDescriptorAcceptsWhenNothingIsIdle(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limited := &fdLimitListener{Listener: ln, limit: 2}
	rl := NewRetryListener(limited, nil).KeepReserve()
	limited.rl = rl
	il := newIdleListener(rl, ListenOptions{IdleTimeout: time.Hour}, 10*time.Millisecond)
	release, entered := serveHold(t, il)

	// One connection in a request and the reserve: the limit.
	busy, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if _, err := io.WriteString(busy, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	waitEntered(t, entered)
	// A new client is served on the reserve.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // (a hang is not a slow answer)
	if got := idleGet(t, c, bufio.NewReader(c), "/"); got != "ok" {
		t.Fatalf("the new client: body %q", got)
	}
	if limited.reserved() != 0 {
		t.Fatal("the reserve is held while its connection is open")
	}
	// Once it closes, the reserve is taken back.
	_ = c.Close()
	for deadline := time.Now().Add(30 * time.Second); limited.reserved() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the reserve was not taken back")
		}
	}
	// and the request in progress is answered.
	release()
	answeredOK(t, busy)
	// Closing the listener lets the reserve go for good.
	_ = rl.Close()
	if limited.reserved() != 0 {
		t.Fatal("the reserve outlived its listener")
	}
}

// serveHold serves il with a server whose /hold handler tells entered it began and waits for
// release (called at the latest when the test ends, before il shuts down); other paths answer ok.
func serveHold(t *testing.T, il *IdleListener) (release func(), entered chan struct{}) {
	t.Helper()
	hold := make(chan struct{})
	entered = make(chan struct{}, 1)
	srv := &fasthttp.Server{
		Handler: TrackRequests(func(ctx *fasthttp.RequestCtx) {
			if string(ctx.Path()) == "/hold" {
				entered <- struct{}{}
				<-hold
			}
			ctx.SetBodyString("ok")
		}),
		ConnState: IdleConnState,
		Logger:    quietLogger{},
	}
	go func() { _ = srv.Serve(il) }()
	var once sync.Once
	release = func() { once.Do(func() { close(hold) }) }
	t.Cleanup(func() { _ = il.Shutdown(context.Background()) })
	t.Cleanup(release) // (cleanups run last first: released before the shutdown waits for it)
	return release, entered
}

// answeredOK reads the answer on c, which must be "ok" (within 30 s: a hang is not slow).
func answeredOK(t *testing.T, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var resp fasthttp.Response
	if err := resp.Read(bufio.NewReader(c)); err != nil || string(resp.Body()) != "ok" {
		t.Fatalf("the request in progress: %v %q", err, resp.Body())
	}
}

// waitEntered waits for the handler of /hold to begin.
func waitEntered(t *testing.T, entered chan struct{}) {
	t.Helper()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the request to /hold did not begin")
	}
}

// ReclaimIdle closes a Server's (tcp, smtp) connections idle longest too, and never one its
// handler marked busy or one idle for less than two ticks.
func TestReclaimIdleClosesIdleServerConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	marks := make(chan *IdleMark, 8)
	s := &Server{Handle: func(c net.Conn, m *IdleMark) {
		marks <- m
		_, _ = io.Copy(io.Discard, c)
	}}
	go func() { _ = s.Serve(ln) }()
	defer func() { _ = s.Shutdown(context.Background()) }()
	startServerTick()
	serverTick.Add(10) // (the marks below are past ticks: not 0, which is busy)
	clients := map[string]net.Conn{}
	for _, name := range []string{"old", "older", "busy", "fresh"} {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients[name] = c
		select {
		case m := <-marks:
			now := serverTick.Load()
			switch name {
			case "old":
				m.since.Store(now - 3)
			case "older":
				m.since.Store(now - 5)
			case "busy":
				m.Busy()
			case "fresh":
				m.since.Store(now - 1)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("not accepted")
		}
	}
	if got := ReclaimIdle(1); got != 1 {
		t.Fatalf("ReclaimIdle(1) closed %d", got)
	}
	if !closedWithin(clients["older"], 10*time.Second) {
		t.Fatal("the connection idle longest was not closed")
	}
	if got := ReclaimIdle(5); got != 1 {
		t.Fatalf("ReclaimIdle(5) closed %d, want 1", got)
	}
	if !closedWithin(clients["old"], 10*time.Second) {
		t.Fatal("the idle connection was not closed")
	}
	if got := ReclaimIdle(5); got != 0 {
		t.Fatalf("ReclaimIdle(5) closed %d more", got)
	}
	for _, name := range []string{"busy", "fresh"} {
		if closedWithin(clients[name], 50*time.Millisecond) {
			t.Fatalf("%s was closed", name)
		}
	}
}
