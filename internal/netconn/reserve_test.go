package netconn

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fdPool is a process's file descriptors, shared by the listeners of a test: accepts fail as
// out of descriptors while limit are open (connections accepted, and reserves).
type fdPool struct {
	limit    int64
	open     atomic.Int64
	reserves atomic.Int64
}

func (p *fdPool) full() bool { return p.open.Load()+p.reserves.Load() >= p.limit }

// openReserve is fdReserve.open on the pool.
func (p *fdPool) openReserve() (io.Closer, error) {
	if p.full() {
		return nil, syscall.EMFILE
	}
	p.reserves.Add(1)
	return closerFunc(func() error { p.reserves.Add(-1); return nil }), nil
}

// firstWrite closes c at its first write (a log line).
type firstWrite struct {
	once sync.Once
	c    chan struct{}
}

func (w *firstWrite) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.c) })
	return len(b), nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// poolListener accepts from a TCP listener while its pool has a descriptor free.
type poolListener struct {
	net.Listener
	pool *fdPool
}

func (l *poolListener) Accept() (net.Conn, error) {
	// As accept4, which takes a descriptor when a client waits, not before.
	for !connPending(l) {
		time.Sleep(time.Millisecond)
	}
	if l.pool.full() {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.pool.open.Add(1)
	return &countedConn{Conn: c, open: &l.pool.open}, nil
}

// SyscallConn is the TCP listener's: whether a connection waits is asked of the socket.
func (l *poolListener) SyscallConn() (syscall.RawConn, error) {
	return l.Listener.(*net.TCPListener).SyscallConn()
}

// The descriptor freed for the reserve (closed for an accept, or by the reserve's connection
// closing) goes to the reserve, not to another listener retrying its accept with clients
// waiting (a tcp imposter, out of descriptors, retries every 50 ms): that listener took it,
// the admin API's client was not accepted, and the reserve was not had again, so that the
// admin API's next client waited unanswered too. The other listener's accept runs while the
// descriptor is free, and must wait.
func TestReserveIsNotTakenByAnotherListener(t *testing.T) {
	if !canTellPending {
		t.Skip("listeners cannot tell whether a client waits here")
	}
	pool := &fdPool{limit: 2}
	newLn := func() net.Listener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		return ln
	}
	dial := func(ln net.Listener) net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // (a hang is not a slow answer)
		return c
	}

	// The admin API's listener holds the reserve.
	lnA := newLn()
	rl := NewRetryListener(&poolListener{Listener: lnA, pool: pool}, nil)
	rl.reserve = &fdReserve{open: pool.openReserve}
	var freed atomic.Int32
	won := make(chan net.Conn, 1) // what the other listener accepted
	// While the descriptor is free, the other listener tries to accept: until it did (the
	// descriptor is gone) or it waits for the gate.
	rl.reserve.freed = func() {
		freed.Add(1)
		waits := gateWaits.Load()
		for deadline := time.Now().Add(30 * time.Second); gateWaits.Load() == waits; time.Sleep(time.Millisecond) {
			select {
			case c := <-won:
				won <- c
				return
			default:
			}
			if time.Now().After(deadline) {
				t.Error("the other listener did not try to accept")
				return
			}
		}
	}
	rl.reserve.hold()
	// The other listener holds one descriptor (the pool is full), and a client of it waits.
	lnB := newLn()
	failed := &firstWrite{c: make(chan struct{})}
	other := NewRetryListener(&poolListener{Listener: lnB, pool: pool}, slog.New(slog.NewTextHandler(failed, nil)))
	defer other.Close()
	dial(lnB)
	first, err := other.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	dial(lnB)
	// Its accept fails, and is retried with the client waiting (an accept that waits for a
	// client, in the runtime's poller, is not kept off a descriptor freed then).
	for !connPending(lnB) {
		time.Sleep(time.Millisecond)
	}
	go func() {
		c, err := other.Accept()
		if err == nil {
			won <- c
		}
	}()
	select {
	case <-failed.c:
	case <-time.After(30 * time.Second):
		t.Fatal("the other listener's accept did not fail")
	}

	if !pool.full() {
		t.Fatal("the pool is not full")
	}
	// (Ticks of an hour: the other listener's retries, which close the connections idle for
	// two ticks, do not close the admin API's, and stop in the hook while it holds the gate.)
	il := newIdleListener(rl, ListenOptions{IdleTimeout: time.Hour}, time.Hour)
	serveHold(t, il)

	for i := 1; i <= 2; i++ {
		c := dial(lnA)
		if got := idleGet(t, c, bufio.NewReader(c), "/"); got != "ok" {
			t.Fatalf("admin client %d: body %q", i, got)
		}
		_ = c.Close()
		for deadline := time.Now().Add(30 * time.Second); pool.reserves.Load() != 1 || freed.Load() != int32(2*i); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("admin client %d: the reserve was not taken back (freed %d times, %d reserves)", i, freed.Load(), pool.reserves.Load())
			}
		}
	}
	select {
	case <-won:
		t.Fatal("the other listener accepted on the reserve's descriptor")
	default:
	}
	if !pool.full() {
		t.Fatal("the pool is not full")
	}
}

// A FIFO listener's accept waits while the reserve's descriptor is free (fdGate is held).
func TestFIFOAcceptWaitsForTheReserve(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl, err := ListenFIFO(ln.(*net.TCPListener))
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	if _, ok := fl.(gatedListener); !ok {
		t.Skip("no FIFO poller here")
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fdGate.Lock()
	locked := true
	defer func() {
		if locked {
			fdGate.Unlock()
		}
	}()
	waits := gateWaits.Load()
	accepted := make(chan error, 1)
	go func() {
		sc, err := fl.Accept()
		if err == nil {
			_ = sc.Close()
		}
		accepted <- err
	}()
	for deadline := time.Now().Add(30 * time.Second); gateWaits.Load() == waits; time.Sleep(time.Millisecond) {
		select {
		case err := <-accepted:
			t.Fatalf("accepted while the gate is held (err %v)", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the accept did not wait for the gate")
		}
	}
	fdGate.Unlock()
	locked = false
	select {
	case err := <-accepted:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("not accepted once the gate is let go")
	}
}

// A connection of the reserve's listener accepted while the reserve is out (it took the
// descriptor freed as the reserve's connection closed: a client of the same listener came
// then) takes the reserve back when it closes.
func TestConnOnTheReserveDescriptorTakesItBack(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pool := &fdPool{limit: 1}
	rl := NewRetryListener(&poolListener{Listener: ln, pool: pool}, nil)
	defer rl.Close()
	rl.reserve = &fdReserve{open: pool.openReserve}
	pool.open.Add(1) // the descriptor is someone else's
	rl.reserve.hold()
	if pool.reserves.Load() != 0 {
		t.Fatal("the reserve was had")
	}
	pool.open.Add(-1) // and is free again: the client takes it
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sc, err := rl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if pool.reserves.Load() != 0 {
		t.Fatal("the reserve was had with no descriptor free")
	}
	_ = sc.Close()
	if pool.reserves.Load() != 1 {
		t.Fatal("the reserve was not taken back when the connection closed")
	}
	// Accepted with the reserve held, a connection is left as it is.
	c2, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	pool.limit = 2
	sc, err = rl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if _, ok := sc.(*reserveConn); ok {
		t.Fatal("a connection accepted with the reserve held stands for it")
	}
}
