package netconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

func TestListenUsesThePoller(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	if _, ok := l.(*FIFOListener); !ok {
		t.Fatalf("ListenFIFO returned %T, want *FIFOListener", l)
	}
	s, _ := pair(t, l, l.Addr().String())
	if _, ok := s.(*FIFOConn); !ok {
		t.Fatalf("Accept returned %T, want *FIFOConn", s)
	}
}

// Accepted connections get the options the runtime gives its own: no delay and keep-alive.
func TestSocketOptions(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	s, _ := pair(t, l, l.Addr().String())
	fd := s.(*FIFOConn).fd
	for _, o := range []struct {
		name       string
		level, opt int
		want       int
	}{
		{"TCP_NODELAY", syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1},
		{"SO_KEEPALIVE", syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1},
		{"TCP_KEEPIDLE", syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, 15},
		{"TCP_KEEPINTVL", syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, 15},
	} {
		if v, err := syscall.GetsockoptInt(fd, o.level, o.opt); err != nil || v != o.want {
			t.Errorf("%s = %d, %v; want %d", o.name, v, err, o.want)
		}
	}
}

// A connection's context ends when the peer closes it, even with a request left unread, and
// runs what context.AfterFunc scheduled; one that was stopped does not run.
func TestContextEndsWhenThePeerCloses(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	s, c := pair(t, l, l.Addr().String())
	ctx := s.(*FIFOConn).Context()
	if ctx.Err() != nil {
		t.Fatalf("Err() = %v before the peer closed", ctx.Err())
	}
	ran := make(chan error, 2)
	context.AfterFunc(ctx, func() { ran <- nil })
	stop := context.AfterFunc(ctx, func() { ran <- errors.New("a stopped AfterFunc ran") })
	if !stop() {
		t.Fatal("stop() = false before the peer closed")
	}
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	if err := result(t, ran, "AfterFunc"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("Done() still open 30 s after the peer closed")
	}
	if ctx.Err() != context.Canceled {
		t.Fatalf("Err() = %v, want context.Canceled", ctx.Err())
	}
	// The data sent before the close can still be read.
	if n, err := s.Read(make([]byte, 64)); n == 0 {
		t.Fatalf("read after the peer closed: %d %v", n, err)
	}
}

// NotifyDone tells a registered receiver, with the context that ended, when the peer closes;
// one that StopNotifyDone removed is not told; after the end NotifyDone registers nothing.
func TestContextNotifiesWhenThePeerCloses(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	s, c := pair(t, l, l.Addr().String())
	ctx := s.(*FIFOConn).Context()
	n, ok := ctx.(interface {
		NotifyDone(r DoneReceiver) bool
		StopNotifyDone(r DoneReceiver) bool
	})
	if !ok {
		t.Fatal("a connection's context has no NotifyDone (the script package's doneNotifier relies on it)")
	}
	told := make(chan error, 2)
	kept, stopped := &receiver{ctx: ctx, told: told}, &receiver{ctx: ctx, told: told, stopped: true}
	if !n.NotifyDone(kept) || !n.NotifyDone(stopped) {
		t.Fatal("NotifyDone = false before the peer closed")
	}
	if !n.StopNotifyDone(stopped) || n.StopNotifyDone(stopped) {
		t.Fatal("StopNotifyDone: want true once, then false")
	}
	_ = c.Close()
	if err := result(t, told, "ContextDone"); err != nil {
		t.Fatal(err)
	}
	if n.NotifyDone(kept) {
		t.Error("NotifyDone = true after the peer closed")
	}
}

type receiver struct {
	ctx     context.Context
	told    chan error
	stopped bool
}

func (r *receiver) ContextDone(ctx context.Context) {
	switch {
	case r.stopped:
		r.told <- errors.New("a receiver StopNotifyDone removed was told")
	case ctx != r.ctx:
		r.told <- errors.New("ContextDone got another context")
	default:
		r.told <- nil
	}
}

// Closing the connection here ends its context too.
func TestContextEndsOnClose(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	s, _ := pair(t, l, l.Addr().String())
	ctx := s.(*FIFOConn).Context()
	done := ctx.Done()
	_ = s.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Done() still open 30 s after Close")
	}
}

// The property the FIFO poller exists for: connections whose data arrives in a known order are
// woken (and so served) in that order. 32 connections each get one byte, in a shuffled order,
// while the poller is held on the first arrival, so that it then takes the others from the
// kernel in batches; it must dispatch them in the order they were written.
func TestFIFOServesInArrivalOrder(t *testing.T) {
	const n = 32
	type event struct {
		fd     int
		events uint32
	}
	var (
		seen    = make(chan event, 16*n)
		writing atomic.Bool
		gate    = make(chan struct{})
		held    sync.Once
	)
	p := newPoller(func(fd int, events uint32) {
		seen <- event{fd, events}
		if writing.Load() {
			held.Do(func() { <-gate })
		}
	})
	if p == nil {
		t.Skip("no epoll")
	}
	t.Cleanup(func() { _ = p.file.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := listenOn(ln.(*net.TCPListener), p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	next := func(what string) event {
		select {
		case e := <-seen:
			return e
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no event from the poller in 30 s (a hang, not a slow machine)", what)
			return event{}
		}
	}
	index := map[int]int{} // server fd -> connection number
	clients := make([]net.Conn, n)
	for i := range clients {
		s, c := pair(t, l, l.Addr().String())
		index[s.(*FIFOConn).fd] = i
		clients[i] = c
	}
	// A connection's first event (writable) must be taken before the test writes: an fd still
	// on the kernel's ready list would keep its earlier place when its data arrives.
	for pending := maps.Clone(index); len(pending) > 0; {
		delete(pending, next("registering the connections").fd)
	}
	writing.Store(true)
	order := rand.New(rand.NewPCG(21, 4)).Perm(n)
	for _, i := range order {
		if _, err := clients[i].Write([]byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	close(gate)
	got := make([]int, 0, n)
	for len(got) < n {
		if e := next("the arrivals"); e.events&syscall.EPOLLIN != 0 {
			if i, ok := index[e.fd]; ok {
				got = append(got, i)
			}
		}
	}
	if !slices.Equal(got, order) {
		t.Errorf("connections written to in the order\n%v\nwere dispatched in the order\n%v", order, got)
	}
}

// A fresh listener's first Accept waits for the poller before it calls accept4: connections
// made before it (before the listener was even registered with the poller's epoll instance, or
// after) are accepted all the same.
func TestFirstAcceptFindsEarlyConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	early, err := net.Dial("tcp", ln.Addr().String()) // queued before the poller knows the listener
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()
	l, err := ListenFIFO(ln.(*net.TCPListener))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	second, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	for i := range 2 {
		c, err := l.Accept()
		if err != nil {
			t.Fatalf("accept %d: %v", i, err)
		}
		_ = c.Close()
	}
}

// StartOnConn defers a listener's accept loop to its first connection: start runs once, when a
// connection waits (one queued before StartOnConn is called included), and never after Close.
func TestStartOnConn(t *testing.T) {
	t.Run("first connection", func(t *testing.T) {
		l, err := ListenTCP("127.0.0.1", 0, PollerFIFO)
		if err != nil {
			t.Skip(err)
		}
		defer l.Close()
		var runs atomic.Int32
		started := make(chan struct{})
		if !StartOnConn(l, StartFunc(func() {
			if runs.Add(1) == 1 {
				close(started)
			}
		})) {
			t.Fatalf("StartOnConn(%T) = false", l)
		}
		if n := runs.Load(); n != 0 {
			t.Fatalf("start ran %d times before any connection", n)
		}
		for i := range 2 {
			c, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			<-started
			s, err := l.Accept()
			if err != nil {
				t.Fatalf("accept %d: %v", i, err)
			}
			_ = s.Close()
		}
		if n := runs.Load(); n != 1 {
			t.Errorf("start ran %d times, want once", n)
		}
	})
	t.Run("connection before", func(t *testing.T) {
		l, err := ListenTCP("127.0.0.1", 0, PollerFIFO)
		if err != nil {
			t.Skip(err)
		}
		defer l.Close()
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		started := make(chan struct{})
		StartOnConn(l, StartFunc(func() { close(started) })) // a second run would panic
		<-started
		s, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
	})
	t.Run("closed first", func(t *testing.T) {
		l, err := ListenTCP("127.0.0.1", 0, PollerFIFO)
		if err != nil {
			t.Skip(err)
		}
		StartOnConn(l, StartFunc(func() { t.Error("start ran for a listener closed without a connection") }))
		fl := l.(*FIFOListener)
		_ = l.Close()
		if fl.startState.Load() != startTaken {
			t.Error("Close kept the start function")
		}
		if c, err := net.Dial("tcp", l.Addr().String()); err == nil {
			_ = c.Close()
			t.Fatal("a closed listener accepted a connection")
		}
	})
	t.Run("runtime poller", func(t *testing.T) {
		l, err := ListenTCP("127.0.0.1", 0, PollerGo)
		if err != nil {
			t.Skip(err)
		}
		defer l.Close()
		if StartOnConn(l, StartFunc(func() {})) {
			t.Error("StartOnConn deferred a listener of the runtime's poller")
		}
	})
}

// A read polling for a body's bytes returns those that were there or came during the poll
// and reports no miss; bytes that come only after the poll gave up are waited for on the
// poller as before, and the poll reports its miss.
func TestBodyPoll(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	s, c := pair(t, l, l.Addr().String())
	fc := s.(*FIFOConn)
	buf := make([]byte, 64)

	if _, err := c.Write([]byte("ab")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		var queued int32
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fc.fd), syscall.TIOCINQ, uintptr(unsafe.Pointer(&queued))); e != 0 {
			t.Fatal(e)
		}
		if queued == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the bytes written never arrived")
		}
	}
	fc.pollBody(true)
	if n, err := fc.Read(buf); n != 2 || err != nil {
		t.Fatalf("read of bytes there: %d, %v", n, err)
	}
	if fc.pollBody(false) {
		t.Fatal("a read of bytes that were there reported a missed poll")
	}

	fc.pollBody(true)
	sent := make(chan error, 1)
	go func() {
		// Once the read waits on the poller, its poll is over: then the bytes come.
		for fc.r.state.Load() != waiting {
			time.Sleep(100 * time.Microsecond)
		}
		_, err := c.Write([]byte("cd"))
		sent <- err
	}()
	if n, err := fc.Read(buf); n != 2 || err != nil || string(buf[:2]) != "cd" {
		t.Fatalf("read of bytes that came late: %d %q, %v", n, buf[:max(n, 0)], err)
	}
	if err := result(t, sent, "write"); err != nil {
		t.Fatal(err)
	}
	if !fc.pollBody(false) {
		t.Fatal("a read whose bytes came after its poll reported no miss")
	}
}

// TestReadAfterDrainWaitsForThePoller: a read after one that left the socket empty waits for
// the poller instead of finding the socket empty, and still gets every byte: request and answer
// exchanges make no read that finds nothing but, at most, the first.
func TestReadAfterDrainWaitsForThePoller(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	s, c := pair(t, l, l.Addr().String())
	fc := s.(*FIFOConn)
	done := make(chan error, 1)
	const rounds = 200
	go func() {
		buf := make([]byte, 64)
		for range rounds {
			n, err := s.Read(buf)
			if err != nil {
				done <- err
				return
			}
			if _, err := s.Write(buf[:n]); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	buf := make([]byte, 64)
	for i := range rounds {
		msg := fmt.Sprintf("request %d", i)
		if _, err := c.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:len(msg)]); err != nil || string(buf[:len(msg)]) != msg {
			t.Fatalf("round %d: %q, %v", i, buf[:len(msg)], err)
		}
	}
	if err := result(t, done, "server"); err != nil {
		t.Fatal(err)
	}
	if fc.emptyReads > 1 {
		t.Errorf("%d reads of %d found the socket empty, want at most the first", fc.emptyReads, rounds)
	}
}

// TestReadAfterDrainSeesTheEnd: a read that took the client's last bytes and its FIN together,
// woken by the event that announced both, leaves nothing for the poller to announce: the next
// read returns end of file rather than wait for an event that never comes.
func TestReadAfterDrainSeesTheEnd(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	s, c := pair(t, l, l.Addr().String())
	fc := s.(*FIFOConn)
	got := make(chan error, 1)
	go func() {
		buf := make([]byte, 64)
		n, err := s.Read(buf)
		if err == nil && string(buf[:n]) != "last" {
			err = fmt.Errorf("read %q, want %q", buf[:n], "last")
		}
		if err == nil {
			// No deadline here: setting one wakes a waiting read, which would hide a hang.
			if n, err = s.Read(buf); err == nil {
				err = fmt.Errorf("read %d bytes after the end", n)
			} else if errors.Is(err, io.EOF) {
				err = nil
			}
		}
		got <- err
	}()
	for fc.r.state.Load() != waiting { // the first read waits: the bytes and FIN wake it at once
		time.Sleep(100 * time.Microsecond)
	}
	// Corked, the bytes wait in the client's socket and the FIN joins their segment.
	tc := c.(*net.TCPConn)
	raw, err := tc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, 1) }); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("last")); err != nil {
		t.Fatal(err)
	}
	if err := tc.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if err := result(t, got, "server's reads"); err != nil {
		t.Fatal(err)
	}
}

// TestReadsGetEveryByteAndTheEnd, a differential test of the reads that wait for the poller
// after leaving the socket empty: whatever the client's writes (sizes, pauses, corked with the
// FIN or not) and the reader's buffers (smaller than what waits, or larger), the reader gets
// the bytes written, in order, and then end of file.
func TestReadsGetEveryByteAndTheEnd(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	rng := rand.New(rand.NewPCG(26, 34))
	for round := range 60 {
		s, c := pair(t, l, l.Addr().String())
		var want []byte
		writes := make([][]byte, 1+rng.IntN(8))
		for i := range writes {
			w := make([]byte, 1+rng.IntN(3000))
			for j := range w {
				w[j] = byte(rng.Uint32())
			}
			writes[i] = w
			want = append(want, w...)
		}
		sizes := make([]int, 64)
		for i := range sizes {
			sizes[i] = 1 + rng.IntN(4096)
		}
		cork, pause := rng.IntN(2) == 0, rng.IntN(3)
		got := make(chan []byte, 1)
		errs := make(chan error, 1)
		go func() {
			var have []byte
			for i := 0; ; i++ {
				buf := make([]byte, sizes[i%len(sizes)])
				n, err := s.Read(buf)
				have = append(have, buf[:n]...)
				if errors.Is(err, io.EOF) {
					got <- have
					errs <- nil
					return
				}
				if err != nil {
					got <- have
					errs <- err
					return
				}
			}
		}()
		tc := c.(*net.TCPConn)
		if cork {
			raw, err := tc.SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			_ = raw.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, 1) })
		}
		for i, w := range writes {
			if _, err := c.Write(w); err != nil {
				t.Fatal(err)
			}
			if pause > 0 && i%pause == 0 {
				time.Sleep(time.Duration(rng.IntN(200)) * time.Microsecond)
			}
		}
		if err := tc.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		if err := result(t, errs, fmt.Sprintf("round %d's reads", round)); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if have := <-got; !slices.Equal(have, want) {
			t.Fatalf("round %d (cork %v): read %d bytes, want the %d written", round, cork, len(have), len(want))
		}
	}
}

// TestArmedDeadlineMoves: the timer armed for a read deadline follows the deadline: moved
// later, it does not end a wait at the earlier one; cleared, none; moved nearer, the wait ends
// then. Close stops it, and a deadline set after Close arms nothing.
func TestArmedDeadlineMoves(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	s, c := pair(t, l, l.Addr().String())
	fc := s.(*FIFOConn)
	buf := make([]byte, 8)
	for _, clear := range []bool{false, true} {
		_ = s.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		if clear {
			_ = s.SetReadDeadline(time.Time{})
		} else {
			_ = s.SetReadDeadline(time.Now().Add(time.Hour))
		}
		read := make(chan error, 1)
		go func() {
			n, err := s.Read(buf)
			if err == nil && string(buf[:n]) != "late" {
				err = fmt.Errorf("read %q", buf[:n])
			}
			read <- err
		}()
		time.Sleep(50 * time.Millisecond) // past the first deadline
		if _, err := c.Write([]byte("late")); err != nil {
			t.Fatal(err)
		}
		if err := result(t, read, "read"); err != nil {
			t.Fatalf("clear %v: %v, want the bytes written after the first deadline", clear, err)
		}
	}
	_ = s.SetReadDeadline(time.Now().Add(time.Hour))
	_ = s.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := s.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with the deadline moved nearer: %v, want a timeout", err)
	}
	_ = s.SetReadDeadline(time.Now().Add(time.Hour))
	_ = s.Close()
	if fc.r.armed.Load() != 0 || fc.r.timer.Stop() {
		t.Fatal("the read deadline's timer is still armed after Close")
	}
	_ = s.SetDeadline(time.Now().Add(time.Hour)) // after Close: nothing to wake, nothing armed
	if fc.r.armed.Load() != 0 || fc.r.timer.Stop() || fc.w.armed.Load() != 0 || (fc.w.timer != nil && fc.w.timer.Stop()) {
		t.Fatal("a deadline set after Close armed a timer")
	}
}

// TestAdoptedClientReadsEachAnswerOnce: a dialed connection moved to the FIFO poller, whose
// client sets its read deadline before each request as fasthttp's does, reads each answer with
// one read: the deadline set while no read waits does not end the next read's wait for the
// poller at once (it did: every answer then began with a read that found nothing).
func TestAdoptedClientReadsEachAnswerOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	defer ln.Close()
	go func() { // an echo origin on the runtime's poller
		s, err := ln.Accept()
		if err != nil {
			return
		}
		defer s.Close()
		_, _ = io.Copy(s, s)
	}()
	dialed, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := AdoptFIFO(dialed)
	defer c.Close()
	fc, ok := c.(*FIFOConn)
	if !ok {
		t.Fatalf("AdoptFIFO returned a %T", c)
	}
	if _, err := dialed.Write([]byte("x")); err == nil {
		t.Error("the dialed connection still writes after AdoptFIFO")
	}
	if c.RemoteAddr().String() != ln.Addr().String() || c.LocalAddr() == nil {
		t.Errorf("addresses %v -> %v", c.LocalAddr(), c.RemoteAddr())
	}
	const rounds = 200
	buf := make([]byte, 4096)
	for i := range rounds {
		msg := fmt.Sprintf("request %d", i)
		if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		n, err := c.Read(buf)
		if err != nil || string(buf[:n]) != msg {
			t.Fatalf("round %d: %q, %v", i, buf[:n], err)
		}
	}
	if fc.emptyReads > 1 {
		t.Errorf("%d reads of %d answers found the socket empty, want at most the first", fc.emptyReads, rounds)
	}
}

// TestAdoptFIFOLeavesOthers: a connection that is not TCP is returned as it is.
func TestAdoptFIFOLeavesOthers(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if got := AdoptFIFO(a); got != a {
		t.Errorf("a pipe became a %T", got)
	}
}

// TestPeerClosed: a kept-alive connection with nothing waiting is open; one whose peer sent
// bytes no request asked for, or closed it, is not; the bytes stay to be read.
func TestPeerClosed(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	s, c := pair(t, l, l.Addr().String())
	fc := s.(*FIFOConn)
	if fc.PeerClosed() {
		t.Fatal("an idle connection looks closed")
	}
	if _, err := c.Write([]byte("!")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !fc.PeerClosed() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	buf := make([]byte, 8)
	if n, err := s.Read(buf); err != nil || string(buf[:n]) != "!" {
		t.Fatalf("after PeerClosed: %q, %v", buf[:n], err)
	}
	if fc.PeerClosed() {
		t.Fatal("a connection read empty looks closed")
	}
	_ = c.Close()
	for !fc.PeerClosed() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if !fc.PeerClosed() {
		t.Fatal("a connection its peer closed looks open")
	}
	_ = s.Close()
	if !fc.PeerClosed() {
		t.Error("a closed connection looks open")
	}
}

// TestReadDeadlineMovedLaterWhileAReadStarts: a deadline moved later while a read is about to
// wait (no read waits yet, so no notify) does not end that read at the old deadline.
func TestReadDeadlineMovedLaterWhileAReadStarts(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	for i := range 20 {
		s, c := pair(t, l, l.Addr().String())
		_ = s.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		got := make(chan error, 1)
		go func() {
			buf := make([]byte, 8)
			_, err := s.Read(buf)
			got <- err
		}()
		_ = s.SetReadDeadline(time.Now().Add(time.Minute)) // before, while or after the read begins
		time.Sleep(40 * time.Millisecond)                  // past the first deadline
		if _, err := c.Write([]byte("late")); err != nil {
			t.Fatal(err)
		}
		if err := result(t, got, "read"); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		_ = s.Close()
		_ = c.Close()
	}
}

// TestDeadlineMovedLaterKeepsTheTimer: a read deadline moved later before each request, as a
// proxy's origin connection has it, leaves the timer set for the first (it sets itself again
// when it goes off); a read waiting past the first deadline is not ended there, and ends at the
// last one.
func TestDeadlineMovedLaterKeepsTheTimer(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	s, _ := pair(t, l, l.Addr().String())
	fc := s.(*FIFOConn)
	first := time.Now().Add(30 * time.Millisecond)
	_ = s.SetReadDeadline(first)
	for i := 1; i <= 100; i++ {
		_ = s.SetReadDeadline(first.Add(time.Duration(i) * time.Millisecond))
	}
	fc.r.armMu.Lock()
	at := fc.r.timerAt
	fc.r.armMu.Unlock()
	if at != first.UnixNano() {
		t.Errorf("the timer is set for %v after the deadline moved later, want the first deadline %v", time.Unix(0, at), first)
	}
	last := first.Add(200 * time.Millisecond)
	_ = s.SetReadDeadline(last)
	buf := make([]byte, 8)
	if _, err := s.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read: %v, want a timeout", err)
	}
	if now := time.Now(); now.Before(last) {
		t.Errorf("the read timed out %v before its deadline", last.Sub(now))
	}
	_ = s.SetReadDeadline(time.Now().Add(10 * time.Millisecond)) // nearer than nothing: set anew
	if _, err := s.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read after the timer went off: %v, want a timeout", err)
	}
}
