//go:build linux

package netconn

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ListenFIFO serves the connections ln accepts through the package's FIFO poller. The returned
// listener owns ln: closing it closes ln. Its connections are *FIFOConn. When the poller cannot be
// made (no epoll), ListenFIFO returns ln itself.
func ListenFIFO(ln *net.TCPListener) (net.Listener, error) {
	return listenOn(ln, thePoller())
}

// listenOn is ListenFIFO with poller p (nil: none could be made).
func listenOn(ln *net.TCPListener, p *poller) (net.Listener, error) {
	if p == nil {
		return ln, nil
	}
	raw, err := ln.SyscallConn()
	if err != nil {
		return nil, err
	}
	l := &FIFOListener{pollFD: pollFD{tl: ln, p: p}, fresh: true}
	l.r.init()
	l.w.init()
	if err := raw.Control(func(fd uintptr) { l.fd = int(fd) }); err != nil {
		return nil, err
	}
	if err := p.add(l.fd, &l.fdWaiters, syscall.EPOLLIN|epollET); err != nil {
		return ln, nil //nolint:nilerr // the runtime poller still serves ln
	}
	return l, nil
}

// epollET is EPOLLET as the uint32 an EpollEvent holds.
const epollET = 1 << 31

// poller is the process's epoll instance and the goroutine that reads it. Every fd in it is
// registered edge-triggered: an event is reported once per change, and a waiter waits only after
// its system call found nothing to do (EAGAIN), so no change is missed.
type poller struct {
	epfd int
	file *os.File // epfd through the runtime poller: readable when the instance has events
	raw  syscall.RawConn

	mu  sync.Mutex
	fds []*fdWaiters // by fd number

	// observe, when set (by a test, on a poller of its own), sees each event before it is
	// dispatched, in the order the poller dispatches them. It runs on the poller's goroutine.
	observe func(fd int, events uint32)
}

var (
	pollerOnce sync.Once
	pollerInst *poller
)

// thePoller returns the process's poller, starting it on first use; nil if epoll is unavailable.
func thePoller() *poller {
	pollerOnce.Do(func() { pollerInst = newPoller(nil) })
	return pollerInst
}

// newPoller makes an epoll instance and starts the goroutine that reads it, until its file is
// closed; nil if epoll is unavailable. observe (nil for none) is poller.observe.
func newPoller(observe func(fd int, events uint32)) *poller {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		_ = syscall.Close(fd)
		return nil
	}
	f := os.NewFile(uintptr(fd), "netconn-fifo-epoll")
	raw, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil
	}
	p := &poller{epfd: fd, file: f, raw: raw, observe: observe}
	go p.run()
	return p
}

// run wakes waiters, in the order the kernel reports their fds, for as long as the process runs.
func (p *poller) run() {
	events := make([]syscall.EpollEvent, 256)
	// One closure for every wake, made before the loop: made inside, it and n would be
	// allocated anew for each wake (two allocations of every request's wake-up).
	n := 0
	poll := func(fd uintptr) bool {
		for {
			m, err := rawEpollPoll(int(fd), events)
			if err == syscall.EINTR { //nolint:errorlint // a raw system call returns a bare syscall.Errno, never wrapped
				continue
			}
			n = max(m, 0)
			return n > 0 // none: wait until the epoll instance is readable again
		}
	}
	for {
		n = 0
		err := p.raw.Read(poll)
		if err != nil {
			return // the epoll file was closed: never, while the process runs
		}
		p.mu.Lock()
		for i := range events[:n] {
			ev := &events[i]
			if p.observe != nil {
				p.observe(int(ev.Fd), ev.Events)
			}
			if fd := int(ev.Fd); fd < len(p.fds) {
				if w := p.fds[fd]; w != nil {
					w.dispatch(ev.Events)
				}
			}
		}
		p.mu.Unlock()
	}
}

// add registers fd, whose events wake w.
func (p *poller) add(fd int, w *fdWaiters, events uint32) error {
	p.mu.Lock()
	for len(p.fds) <= fd {
		p.fds = append(p.fds, nil)
	}
	p.fds[fd] = w
	p.mu.Unlock()
	err := rawEpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: events, Fd: int32(fd)})
	if err != nil {
		p.forget(fd, w)
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

func (p *poller) forget(fd int, w *fdWaiters) {
	p.mu.Lock()
	if fd < len(p.fds) && p.fds[fd] == w {
		p.fds[fd] = nil
	}
	p.mu.Unlock()
}

// States of a signal.
const (
	idle    int32 = iota // nothing happened since the last wait
	ready                // the fd changed since the last wait: try again before waiting
	waiting              // a goroutine waits for the next change
)

// signal wakes the goroutine waiting for one direction (read or write) of an fd.
type signal struct {
	state atomic.Int32
	wake  chan struct{} // one token per wait that notify ended

	// The deadline's timer, armed when the deadline is set (arm), as the runtime's poller
	// does: a wait for that deadline then needs no timer of its own. A tcp imposter's
	// connection keeps its idle deadline for many requests; a timer made for each wait cost
	// an allocation and two changes of the runtime's timers a request.
	armMu   sync.Mutex
	timer   *time.Timer
	stopped bool         // the fd is closed: no deadline arms the timer again
	armed   atomic.Int64 // the deadline the timer notifies at (unix nanoseconds); 0: none, or it fired
	timerAt int64        // when the timer goes off (armMu held): armed, or earlier (see arm); 0: not set
}

func (s *signal) init() { s.wake = make(chan struct{}, 1) }

// notify records a change and wakes the waiter, if any. It never blocks.
func (s *signal) notify() {
	if s.state.Swap(ready) == waiting {
		s.wake <- struct{}{}
	}
}

// arm makes the signal's timer notify at deadline (unix nanoseconds), or stops it (0). A timer
// already set to go off no later than deadline is left as it is: when it goes off it sets
// itself again for the deadline (fire). A client that moves its deadline later before each
// request (a proxy's origin connection: fasthttp sets one a round trip) then changes no timer of
// the runtime's (two changes a proxied request cost ~1.2k instructions).
func (s *signal) arm(deadline int64) {
	s.armMu.Lock()
	defer s.armMu.Unlock()
	if deadline == 0 || s.stopped {
		if s.timer != nil {
			s.timer.Stop()
		}
		s.timerAt = 0
		s.armed.Store(0)
		return
	}
	s.armed.Store(deadline)
	if s.timerAt != 0 && s.timerAt <= deadline {
		return
	}
	s.timerAt = deadline
	d := time.Until(time.Unix(0, deadline))
	if s.timer == nil {
		s.timer = time.AfterFunc(d, s.fire)
	} else {
		s.timer.Reset(d)
	}
}

// stop stops the timer for good, once the fd is closed: a timer armed later (a deadline set
// after Close) would keep the connection until it fired.
func (s *signal) stop() {
	s.armMu.Lock()
	s.stopped = true
	s.armMu.Unlock()
	s.arm(0)
}

// fire is the armed timer's: the waiter wakes and finds its deadline passed. A deadline moved
// later since the timer was set sets the timer again for it instead (see arm). armed is cleared
// before the notify: a wait that still finds the deadline ahead makes a timer of its own.
func (s *signal) fire() {
	s.armMu.Lock()
	if d := s.armed.Load(); d != 0 && !s.stopped && s.timerAt != 0 {
		if left := time.Until(time.Unix(0, d)); left > 0 {
			s.timerAt = d
			s.timer.Reset(left)
			s.armMu.Unlock()
			return
		}
	}
	s.timerAt = 0
	s.armed.Store(0)
	s.armMu.Unlock()
	s.notify()
}

// wait blocks until the next notify, or returns at once if there was one since the last wait,
// or returns os.ErrDeadlineExceeded when the deadline (unix nanoseconds, 0 for none) passes.
// For the deadline the timer is armed for, the timer's notify ends the wait, which returns nil:
// the caller looks at the deadline before it tries again.
func (s *signal) wait(deadline int64) error {
	if !s.state.CompareAndSwap(idle, waiting) {
		s.state.Store(idle) // changed since: the caller tries again
		return nil
	}
	if deadline == 0 || s.armed.Load() == deadline {
		<-s.wake
		s.state.Store(idle)
		return nil
	}
	d := time.Until(time.Unix(0, deadline))
	if d <= 0 {
		return s.cancel()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.wake:
		s.state.Store(idle)
		return nil
	case <-t.C:
		return s.cancel()
	}
}

// cancel ends a wait that timed out; a notify that came first wins.
func (s *signal) cancel() error {
	if s.state.CompareAndSwap(waiting, idle) {
		return os.ErrDeadlineExceeded
	}
	<-s.wake // notify saw the waiter: its token is on the way
	s.state.Store(idle)
	return nil
}

// fdWaiters are the signals of one fd, which the poller dispatches its events to.
type fdWaiters struct {
	r, w signal
	// gone, for a connection, is done when the peer closes or resets it.
	gone *connContext
	// starter, for a listener, is started once on its first read event (see StartOnConn):
	// set before startState is startPending, which runStart turns to startTaken (as Close
	// does: a start that has not run never will).
	starter    Starter
	startState atomic.Int32
	// hup is set, before the read waiter is notified, once an event said the peer closed or
	// reset the fd: a read that would wait without asking (FIFOConn.drained) asks instead.
	hup atomic.Bool
}

// States of fdWaiters.startState.
const (
	startNone int32 = iota
	startPending
	startTaken
)

// runStart starts the starter, if it has not started (or been dropped) yet.
func (w *fdWaiters) runStart() {
	if w.startState.CompareAndSwap(startPending, startTaken) {
		w.starter.StartServing()
	}
}

func (w *fdWaiters) dispatch(events uint32) {
	if events&(syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
		w.hup.Store(true) // before the notify: the reader it wakes sees it
	}
	if events&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
		w.r.notify()
		if w.startState.Load() == startPending {
			w.runStart()
		}
	}
	if events&(syscall.EPOLLOUT|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
		w.w.notify()
	}
	if events&(syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 && w.gone != nil {
		w.gone.fire()
	}
}

// fdRef counts the system calls in progress on an fd, so that Close never closes an fd a call
// still uses (whose number the kernel could give to the next connection).
type fdRef struct {
	v atomic.Uint64 // closedBit | calls in progress
}

const closedBit = 1 << 63

// acquire registers a call; false once the fd is closed.
func (r *fdRef) acquire() bool {
	for {
		v := r.v.Load()
		if v&closedBit != 0 {
			return false
		}
		if r.v.CompareAndSwap(v, v+1) {
			return true
		}
	}
}

// release ends a call; true when the fd is closed and this was its last call: the caller then
// destroys it.
func (r *fdRef) release() bool { return r.v.Add(^uint64(0)) == closedBit }

// close marks the fd closed; first reports whether this was the first close, last whether no
// call is in progress (the caller then destroys it; otherwise the last release does).
func (r *fdRef) close() (first, last bool) {
	for {
		v := r.v.Load()
		if v&closedBit != 0 {
			return false, false
		}
		if r.v.CompareAndSwap(v, v|closedBit) {
			return true, v == 0
		}
	}
}

func (r *fdRef) closed() bool { return r.v.Load()&closedBit != 0 }

// pollFD is an fd registered with the poller: its waiters and its count of calls in progress.
// A call begins with ref.acquire and ends with end.
type pollFD struct {
	fdWaiters
	ref fdRef
	fd  int
	p   *poller
	tl  *net.TCPListener // the listener whose fd this is (closing it closes fd); nil for a connection
}

// end ends a call, destroying the fd if it was closed meanwhile and this was its last call.
func (f *pollFD) end() {
	if f.ref.release() {
		f.destroy()
	}
}

// close marks the fd closed and wakes its waiters; false if it was closed already. The fd
// itself is closed now or, if calls are in progress, when the last one ends.
func (f *pollFD) close() bool {
	first, last := f.ref.close()
	if !first {
		return false
	}
	f.r.notify()
	f.w.notify()
	if last {
		f.destroy()
	}
	return true
}

// destroy forgets the fd's waiters and closes it. Closing removes it from the epoll instance
// (no EPOLL_CTL_DEL: nothing dups the fds the poller holds, all made close-on-exec); an event
// the poller read before finds no waiter, or, once the number is reused, wakes the new one's,
// which only makes it try its system call again.
func (f *pollFD) destroy() {
	f.p.forget(f.fd, &f.fdWaiters)
	if f.tl != nil {
		_ = f.tl.Close()
	} else {
		_ = rawClose(f.fd)
	}
}

// FIFOListener accepts connections served by the FIFO poller. Accept is called from one
// goroutine at a time (as a server's accept loop does); Close and Addr from any.
type FIFOListener struct {
	pollFD
	// fresh is set until the first accept: it waits for the poller before calling accept4,
	// which on a listener just made finds nothing (EAGAIN) but costs a system call; a
	// connection that came before the listener was registered is reported by the registration
	// (EPOLL_CTL_ADD polls the socket), so none is missed. An imposter created and deleted
	// without a connection (a client suite's unused one, bench's admin-pairs) makes none.
	fresh bool
	addr  *net.TCPAddr // the address listened on, for a socket of listenRaw (tl == nil)
}

// Accept waits for and returns the next connection, a *FIFOConn.
func (l *FIFOListener) Accept() (net.Conn, error) {
	if !l.ref.acquire() {
		return nil, l.opError("accept", net.ErrClosed)
	}
	c, err := l.accept()
	l.end()
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (l *FIFOListener) accept() (*FIFOConn, error) {
	if l.fresh {
		l.fresh = false
		_ = l.r.wait(0)
	}
	for {
		if l.ref.closed() {
			return nil, l.opError("accept", net.ErrClosed)
		}
		c, err := l.acceptOnce(false)
		switch err {
		case nil:
			return c, nil
		case syscall.EAGAIN: //nolint:errorlint // acceptOnce returns accept4's bare syscall.Errno
			_ = l.r.wait(0)
		case syscall.EINTR, syscall.ECONNABORTED:
		default:
			return nil, err
		}
	}
}

// acceptOnce calls accept4 once, holding fdGate (unless held: the caller does), and makes the
// connection; accept4's error is returned bare, another wrapped in a *net.OpError.
func (l *FIFOListener) acceptOnce(held bool) (*FIFOConn, error) {
	if !held {
		gateShared()
	}
	nfd, sa, err := rawAccept4(l.fd, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
	if !held {
		gateDone()
	}
	switch err {
	case nil:
		c, err := l.newConn(nfd, sa)
		if err != nil {
			_ = rawClose(nfd)
			return nil, l.opError("accept", err)
		}
		return c, nil
	case syscall.EAGAIN, syscall.EINTR, syscall.ECONNABORTED: //nolint:errorlint // a raw system call returns a bare syscall.Errno, never wrapped
		return nil, err
	}
	return nil, l.opError("accept", os.NewSyscallError("accept4", err))
}

// acceptNow accepts a connection waiting, without waiting for one (see gatedListener).
func (l *FIFOListener) acceptNow(held bool) (net.Conn, error) {
	if !l.ref.acquire() {
		return nil, l.opError("accept", net.ErrClosed)
	}
	defer l.end()
	for {
		c, err := l.acceptOnce(held)
		switch err {
		case nil:
			return c, nil
		case syscall.EINTR, syscall.ECONNABORTED: //nolint:errorlint // acceptOnce returns accept4's bare syscall.Errno
			continue
		case syscall.EAGAIN: //nolint:errorlint // acceptOnce returns accept4's bare syscall.Errno
			return nil, l.opError("accept", os.NewSyscallError("accept4", err))
		}
		return nil, err
	}
}

// newConn sets nfd up as the runtime does an accepted TCP connection (no delay, keep-alive
// probes after 15 s idle; like the runtime, it goes on if the socket refuses an option) and
// registers it.
func (l *FIFOListener) newConn(nfd int, sa syscall.Sockaddr) (*FIFOConn, error) {
	opts := [...][3]int{
		{syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1},
		{syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1},
		{syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, 15},
		{syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, 15},
		{syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT, 9},
	}
	for _, o := range opts {
		_ = rawSetsockoptInt(nfd, o[0], o[1], o[2])
	}
	return l.p.conn(nfd, tcpAddr(sa))
}

// conn registers fd, a connected TCP socket, and returns its FIFOConn.
func (p *poller) conn(fd int, remote net.Addr) (*FIFOConn, error) {
	c := &FIFOConn{pollFD: pollFD{fd: fd, p: p}, remote: remote}
	c.r.init()
	c.w.init()
	c.gone = &c.ctx
	if err := p.add(fd, &c.fdWaiters, syscall.EPOLLIN|syscall.EPOLLOUT|syscall.EPOLLRDHUP|epollET); err != nil {
		return nil, err
	}
	return c, nil
}

// Close stops accepting and closes the listening socket; accepted connections stay open. A
// waiting Accept returns an error that wraps net.ErrClosed.
func (l *FIFOListener) Close() error {
	if !l.close() {
		return l.opError("close", net.ErrClosed)
	}
	l.startState.Store(startTaken) // a start that has not run never will: nothing is accepted now
	return nil
}

// StartOnConn calls start.StartServing once a connection first waits to be accepted on ln, on the FIFO
// poller's goroutine (start must not block: it starts the goroutine that accepts) or on the
// caller's, if one waits already; never once ln is closed (but a start that began may still be
// running). It reports false when ln cannot defer its accept loop (it is not a FIFOListener
// that has not accepted yet): the caller then starts it at once.
//
// An imposter's accept loop starts this way: one a client suite creates and deletes without
// connecting to it (bench's admin-pairs) costs no goroutine, and (start an interface, kept as
// it is) no allocation.
func StartOnConn(ln net.Listener, start Starter) bool {
	l, ok := ln.(*FIFOListener)
	if !ok || !l.fresh {
		return false
	}
	l.starter = start
	l.startState.Store(startPending)
	// The poller stores ready before it looks at start: one of the two sees the other.
	if l.r.state.Load() == ready && !l.ref.closed() {
		l.runStart()
	}
	return true
}

// Addr returns the listener's network address.
func (l *FIFOListener) Addr() net.Addr {
	if l.tl != nil {
		return l.tl.Addr()
	}
	return l.addr
}

func (l *FIFOListener) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Addr: l.Addr(), Err: err}
}

// FIFOConn is a TCP connection served by the FIFO poller. Read, Write, Close and the deadline
// setters are safe for concurrent use, one Read and one Write at a time.
type FIFOConn struct {
	pollFD
	// Deadlines in unix nanoseconds, 0 for none.
	rdl, wdl atomic.Int64

	remote    net.Addr
	localOnce sync.Once
	local     net.Addr
	ctx       connContext
	// progress is told of the bytes each write sends (see reportWrites).
	progress writeProgress
	// body is set by the goroutine reading while it reads the rest of a request's body (see
	// pollBody); a read that finds nothing then clears it if polling found nothing in time.
	body bool
	// drained is set by a read that left the socket empty (it took less than it could); the
	// next read then waits for the poller before it asks the socket (see read).
	drained bool
	// emptyReads counts the reads that found the socket empty (EAGAIN), for the tests.
	emptyReads int
}

var _ net.Conn = (*FIFOConn)(nil)

// Read reads data the peer sent, waiting until there is some.
func (c *FIFOConn) Read(b []byte) (int, error) {
	if !c.ref.acquire() {
		return 0, c.opError("read", net.ErrClosed)
	}
	n, err := c.read(b)
	c.end()
	return n, err
}

// bodyPoll is how long a read of the rest of a request's body polls for its next bytes before
// it waits on the poller.
const bodyPoll = 30 * time.Microsecond

// pollBody says whether the next reads are of the rest of a request's body, whose bytes the
// client is sending: such a read that finds none polls for them for up to bodyPoll, letting
// the goroutines ready to run go first, before it waits on the poller. A client writing a
// large body on loopback or a fast link fills the socket about as fast as it is read: waiting
// on the poller as soon as the socket is empty, the reader slept and was woken many times a
// megabyte, and the client's core paid for every wake-up (an interrupt to the reader's core,
// dear on a virtual machine): a client uploading 1 MiB bodies on 10 connections got about
// 1.2-1.5x the answers a second with the poll, each costing it ~150 us of CPU rather than
// ~225 us, and the server slept 0.4 times a request rather than 2.3. pollBody(false) ends it
// and reports whether a poll missed meanwhile (the bytes came later than bodyPoll, as from a
// slow or distant client): the caller then polls less (idleConn.bpCredit).
func (c *FIFOConn) pollBody(on bool) (missed bool) {
	missed = !on && !c.body
	c.body = on
	return missed
}

func (c *FIFOConn) read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var until int64 // the end of the body's poll, once begun
	// A read after one that left the socket empty waits for the poller first, rather than
	// asking the socket: a server reads again as soon as it has written its answer, long
	// before the client can have sent its next request, and that read(2) found nothing (EAGAIN)
	// on about every request, a third of a keep-alive request's system calls. No data is
	// missed: the socket was empty when the last read returned, so whatever came since raised
	// an edge the poller reports (and a notify since the last wait makes wait return at once).
	// What may lie unannounced behind an empty socket is the peer's FIN, taken by the last
	// read with its data (the next read returns end of file and no edge comes): hup says the
	// poller saw it, set before the notify that woke that read, and the read asks the socket.
	wait := c.drained && !c.body && !c.hup.Load()
	c.drained = false
	for {
		if c.ref.closed() {
			return 0, c.opError("read", net.ErrClosed)
		}
		dl := c.rdl.Load()
		if wait {
			// The wait ends at the deadline, or at once when it has passed (the timer's notify
			// came, or wait sees it): the clock is read after it, not before too (a proxy's
			// origin connection read it twice an answer).
			wait = false
			_ = c.r.wait(dl) // a deadline passed is seen below, in the next turn
			continue
		}
		if dl != 0 && time.Now().UnixNano() >= dl {
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		}
		n, err := rawRead(c.fd, b)
		switch err {
		case nil:
			if n == 0 {
				return 0, io.EOF
			}
			// TCP's read takes all the socket holds, up to len(b): less means it is empty.
			c.drained = n < len(b)
			return n, nil
		case syscall.EAGAIN: //nolint:errorlint // a raw system call returns a bare syscall.Errno, never wrapped
			c.emptyReads++
			if c.body {
				now := time.Now().UnixNano()
				if until == 0 {
					until = now + int64(bodyPoll)
				}
				if now < until {
					runtime.Gosched()
					continue
				}
				c.body = false
			}
			_ = c.r.wait(dl) // a deadline passed is seen above (one set later since: waits on)
		case syscall.EINTR:
		default:
			return 0, c.opError("read", os.NewSyscallError("read", err))
		}
	}
}

// Write writes all of b, waiting while the socket's buffer is full.
func (c *FIFOConn) Write(b []byte) (int, error) {
	if !c.ref.acquire() {
		return 0, c.opError("write", net.ErrClosed)
	}
	n, err := c.write(b, 0)
	c.end()
	return n, err
}

// writeIdle is Write that also fails, as one past its deadline, once the socket's buffer stayed
// full for idle without a byte going out (IdleConn's writes): no deadline is set unless the
// buffer fills, and a client that reads a large answer slowly keeps the write going.
func (c *FIFOConn) writeIdle(b []byte, idle time.Duration) (int, error) {
	if !c.ref.acquire() {
		return 0, c.opError("write", net.ErrClosed)
	}
	n, err := c.write(b, idle)
	c.end()
	return n, err
}

// write writes b; with idle > 0 see writeIdle.
func (c *FIFOConn) write(b []byte, idle time.Duration) (int, error) {
	done := 0
	var stalled int64 // with idle: when the write's wait for room ends, armed at the last progress
	armedAt := -1     // done when it was armed
	for done < len(b) {
		if c.ref.closed() {
			return done, c.opError("write", net.ErrClosed)
		}
		dl := c.wdl.Load()
		if stalled != 0 && (dl == 0 || stalled < dl) {
			dl = stalled
		}
		if dl != 0 && time.Now().UnixNano() >= dl {
			return done, c.opError("write", os.ErrDeadlineExceeded)
		}
		n, err := rawWrite(c.fd, b[done:])
		if n > 0 {
			done += n
			if c.progress != nil {
				c.progress.wrote(n)
			}
		}
		switch err {
		case nil, syscall.EINTR: //nolint:errorlint // a raw system call returns a bare syscall.Errno, never wrapped
		case syscall.EAGAIN:
			if idle > 0 && done > armedAt {
				armedAt, stalled = done, time.Now().Add(idle).UnixNano()
				if c.wdl.Load() == 0 || stalled < dl {
					dl = stalled
				}
			}
			if err := c.w.wait(dl); err != nil {
				return done, c.opError("write", err)
			}
		default:
			return done, c.opError("write", os.NewSyscallError("write", err))
		}
	}
	return done, nil
}

// reportWrites makes the connection tell p of the bytes each of its writes sends, as it goes.
// It is called before the connection is used.
func (c *FIFOConn) reportWrites(p writeProgress) { c.progress = p }

// CloseWrite shuts down the sending side of the connection (FIN); reads go on.
func (c *FIFOConn) CloseWrite() error {
	if !c.ref.acquire() {
		return c.opError("close", net.ErrClosed)
	}
	err := syscall.Shutdown(c.fd, syscall.SHUT_WR)
	c.end()
	if err != nil {
		return c.opError("close", os.NewSyscallError("shutdown", err))
	}
	return nil
}

// Close closes the connection. Waiting reads and writes return an error that wraps
// net.ErrClosed; the socket is closed when the last call in progress returns.
func (c *FIFOConn) Close() error {
	if !c.close() {
		return c.opError("close", net.ErrClosed)
	}
	c.r.stop()
	c.w.stop()
	c.ctx.fire()
	return nil
}

// Context returns a context that is done once the peer has closed the connection (sent FIN,
// even with data left to read, as net/http's server sees it) or reset it, or Close was called.
// A server cancels the work of a request whose client went away with it.
func (c *FIFOConn) Context() context.Context { return &c.ctx }

// LocalAddr returns the local network address.
func (c *FIFOConn) LocalAddr() net.Addr {
	c.localOnce.Do(func() {
		if c.ref.acquire() {
			if sa, err := syscall.Getsockname(c.fd); err == nil {
				c.local = tcpAddr(sa)
			}
			c.end()
		}
	})
	return c.local
}

// RemoteAddr returns the peer's network address.
func (c *FIFOConn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline sets the read and write deadlines.
func (c *FIFOConn) SetDeadline(t time.Time) error {
	c.setDeadline(&c.rdl, &c.r, t)
	c.setDeadline(&c.wdl, &c.w, t)
	return nil
}

// SetReadDeadline sets the time after which reads fail with os.ErrDeadlineExceeded; a zero t
// means none. It applies to a read already waiting.
func (c *FIFOConn) SetReadDeadline(t time.Time) error {
	c.setDeadline(&c.rdl, &c.r, t)
	return nil
}

// SetWriteDeadline is SetReadDeadline for writes.
func (c *FIFOConn) SetWriteDeadline(t time.Time) error {
	c.setDeadline(&c.wdl, &c.w, t)
	return nil
}

func (c *FIFOConn) setDeadline(dl *atomic.Int64, s *signal, t time.Time) {
	var v int64
	if !t.IsZero() {
		v = max(t.UnixNano(), 1)
	}
	if dl.Swap(v) != v {
		s.arm(v)
		// A waiting call looks at the new deadline. A read's signal is told only while a read
		// waits: a notify for no one would end the next read's wait at once, and a client
		// that sets its deadline before each request (fasthttp's, the proxy's) would find the
		// socket empty once an answer (see read). A read that began waiting meanwhile with
		// the old deadline goes on waiting for the timer armed for the new one, or wakes at
		// its old one and looks again (read's loop).
		if s != &c.r || s.state.Load() == waiting {
			s.notify()
		}
	}
}

func (c *FIFOConn) opError(op string, err error) error {
	if errors.Is(err, io.EOF) {
		return err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.remote, Err: err}
}

// tcpAddr converts a socket address as the net package does.
func tcpAddr(sa syscall.Sockaddr) net.Addr {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return &net.TCPAddr{IP: a.Addr[:], Port: a.Port}
	case *syscall.SockaddrInet6:
		zone := ""
		if a.ZoneId != 0 {
			zone = strconv.Itoa(int(a.ZoneId))
			if ifi, err := net.InterfaceByIndex(int(a.ZoneId)); err == nil {
				zone = ifi.Name
			}
		}
		return &net.TCPAddr{IP: a.Addr[:], Port: a.Port, Zone: zone}
	}
	return nil
}

// AdoptFIFO moves c, a TCP connection this process dialed, to the FIFO poller and returns the
// connection to use instead: a client that writes a request and then reads its answer makes one
// read(2) an answer, not two (Go's runtime poller reads at once after the request is written,
// finds nothing and waits; a FIFOConn whose last read left the socket empty waits for the poller
// first, see FIFOConn.read). c's socket is carried over (its descriptor duplicated, then c
// closed); c must not be used afterwards. When that cannot be done (no epoll, c is not TCP),
// AdoptFIFO returns c as it was.
func AdoptFIFO(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	p := thePoller()
	if !ok || p == nil {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	nfd := -1
	if err := rc.Control(func(fd uintptr) {
		// The duplicate shares the socket's non-blocking mode (a file status flag).
		if r, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_DUPFD_CLOEXEC, 0); e == 0 {
			nfd = int(r)
		}
	}); err != nil || nfd < 0 {
		return c
	}
	fc, err := p.conn(nfd, tc.RemoteAddr())
	if err != nil {
		_ = syscall.Close(nfd)
		return c
	}
	fc.local = tc.LocalAddr()
	fc.localOnce.Do(func() {}) // local is known
	_ = tc.Close()             // the socket stays open: fc's descriptor holds it
	return fc
}

// PeerClosed reports whether something waits to be read on c without reading it: the peer's
// FIN, a reset, or bytes (one recvfrom with MSG_PEEK, which does not wait). A client checks so
// a kept-alive connection before it sends a request on it again.
func (c *FIFOConn) PeerClosed() bool {
	if !c.ref.acquire() {
		return true
	}
	defer c.end()
	var b [1]byte
	for {
		_, _, err := syscall.Recvfrom(c.fd, b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		//nolint:errorlint // a raw system call returns a bare syscall.Errno, never wrapped
		if err != syscall.EINTR {
			return err != syscall.EAGAIN //nolint:errorlint // as above
		}
	}
}
