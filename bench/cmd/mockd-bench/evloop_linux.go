//go:build linux

package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
	"unsafe"
)

// runLoad is the Go generator's load loop: one goroutine drives every connection through an
// epoll instance, as wrk does, and takes the sockets in the order the kernel reports them ready.
// A goroutine per connection put the Go scheduler between the socket and the clock: the runtime's
// poller hands the goroutines of one poll over in the reverse of the order their sockets became
// ready, which cancelled out a plain Go server's own reversal and spread the latencies of servers
// that answer in arrival order (p99 150–200 µs above wrk's for the same process).
func runLoad(cfg loadConfig) (loadResult, error) {
	sa, err := sockaddrOf(cfg.addr)
	if err != nil {
		return loadResult{}, err
	}
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return loadResult{}, fmt.Errorf("epoll_create1: %w", err)
	}
	defer syscall.Close(epfd)
	l := &loop{cfg: cfg, sa: sa, epfd: epfd, conns: make([]evConn, cfg.conns)}
	start := time.Now()
	l.end = start.Add(cfg.dur)
	for i := range l.conns {
		l.conns[i].fd = -1
		l.connect(i, start)
	}
	if cfg.proto == "https" {
		// Keep-alive connections shake hands before the clock starts; a server that closes
		// them makes the generator shake hands again within the run.
		l.connectAll()
		start = time.Now()
		l.end = start.Add(cfg.dur)
		for i := range l.conns {
			if l.conns[i].fd >= 0 {
				l.send(i, start)
			}
		}
	}
	events := make([]syscall.EpollEvent, 256)
	nextCheck := start
	for {
		now := time.Now()
		if !now.Before(l.end) {
			break
		}
		if !now.Before(nextCheck) {
			l.check(now)
			nextCheck = now.Add(10 * time.Millisecond)
		}
		// While requests are out, poll without ever blocking: the generator has its core to
		// itself, and going to sleep and being woken for the next answer (a few microseconds,
		// more on a virtual machine) would leave the server waiting for requests.
		wait := 0
		if l.inFlight() == 0 {
			wait = int(min(l.end.Sub(now), nextCheck.Sub(now))/time.Millisecond) + 1
		}
		n, err := epollWait(epfd, events, wait)
		if err != nil {
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			return loadResult{}, fmt.Errorf("epoll_wait: %w", err)
		}
		for _, ev := range events[:n] {
			i := int(ev.Fd)
			if c := &l.conns[i]; c.gen == ev.Pad && c.fd >= 0 {
				l.handle(i, ev.Events)
			}
		}
		// The answered connections send their next requests together, after the batch, as
		// wrk does (it reads every ready answer, then writes when the sockets report writable).
		for _, i := range l.due {
			if l.conns[i].fd >= 0 {
				l.send(i, time.Now())
			}
		}
		l.due = l.due[:0]
	}
	// Requests still waiting at the end are not counted, as wrk does, unless they waited past
	// their timeout.
	now := time.Now()
	for i := range l.conns {
		c := &l.conns[i]
		if c.waiting && now.Sub(c.t0) > cfg.timeout {
			l.res.TimeoutErr++
		}
		l.closeConn(i)
	}
	l.res.DurationUS = cfg.dur.Microseconds()
	l.res.P50US = l.hist.percentile(50)
	l.res.P99US = l.hist.percentile(99)
	l.res.MaxUS = float64(l.hist.max)
	return l.res, nil
}

// loop is the state of runLoad.
type loop struct {
	cfg     loadConfig
	sa      syscall.Sockaddr
	epfd    int
	conns   []evConn
	end     time.Time
	res     loadResult
	hist    histogram
	scratch []byte // de-chunked bodies
	due     []int  // connections answered in this batch, to send their next request
}

// evConn is one connection of the loop.
type evConn struct {
	fd         int
	gen        int32 // tells its epoll events from those of an earlier socket in the slot
	connecting bool
	waiting    bool      // a request is out
	t0         time.Time // when it was sent
	unsent     []byte    // the part of the request a full socket buffer refused
	outOn      bool      // EPOLLOUT is reported (while unsent is not empty, and while connecting)
	buf        []byte    // the response so far
	retryAt    time.Time // after a failed connect, when to try again
	tls        *tls.Conn // https: the session over fdc
	fdc        *fdConn
}

// inFlight counts the connections waiting for an answer or a connect.
func (l *loop) inFlight() int {
	n := 0
	for i := range l.conns {
		if c := &l.conns[i]; c.waiting || c.connecting {
			n++
		}
	}
	return n
}

// connect opens slot i's socket and starts a non-blocking connect.
func (l *loop) connect(i int, now time.Time) {
	c := &l.conns[i]
	domain := syscall.AF_INET
	if _, v6 := l.sa.(*syscall.SockaddrInet6); v6 {
		domain = syscall.AF_INET6
	}
	fd, err := syscall.Socket(domain, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		l.connectFailed(i, now)
		return
	}
	_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	c.gen++
	c.fd, c.connecting, c.waiting, c.unsent, c.buf, c.outOn = fd, true, false, nil, c.buf[:0], true
	if err := syscall.Connect(fd, l.sa); err != nil && !errors.Is(err, syscall.EINPROGRESS) {
		l.closeConn(i)
		l.connectFailed(i, now)
		return
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLOUT | syscall.EPOLLRDHUP, Fd: int32(i), Pad: c.gen}
	if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		l.closeConn(i)
		l.connectFailed(i, now)
	}
}

// connectFailed counts a failed connect; check tries again 10 ms later.
func (l *loop) connectFailed(i int, now time.Time) {
	if now.Before(l.end) {
		l.res.ConnectErr++
	}
	l.conns[i].retryAt = now.Add(10 * time.Millisecond)
}

func (l *loop) closeConn(i int) {
	c := &l.conns[i]
	if c.fd >= 0 {
		_ = syscall.Close(c.fd) // also leaves the epoll set
		c.fd = -1
	}
	c.connecting, c.waiting, c.unsent, c.tls, c.fdc = false, false, nil, nil, nil
}

// reconnect replaces slot i's connection after the server closed it or it failed.
func (l *loop) reconnect(i int, now time.Time) {
	l.closeConn(i)
	l.connect(i, now)
}

// check reconnects slots whose connect failed and cuts requests past their timeout.
func (l *loop) check(now time.Time) {
	for i := range l.conns {
		c := &l.conns[i]
		switch {
		case c.fd < 0 && !now.Before(c.retryAt):
			l.connect(i, now)
		case c.waiting && now.Sub(c.t0) > l.cfg.timeout:
			l.res.TimeoutErr++
			l.reconnect(i, now)
		}
	}
}

// handle processes the events epoll reported for slot i.
func (l *loop) handle(i int, events uint32) {
	c := &l.conns[i]
	now := time.Now()
	if c.connecting {
		if events&(syscall.EPOLLOUT|syscall.EPOLLERR|syscall.EPOLLHUP) == 0 {
			return
		}
		if e, err := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR); err != nil || e != 0 {
			l.closeConn(i)
			l.connectFailed(i, now)
			return
		}
		c.connecting = false
		if l.cfg.proto == "https" && !l.handshake(i) {
			l.closeConn(i)
			l.connectFailed(i, now)
			return
		}
		l.send(i, now)
		return
	}
	if events&syscall.EPOLLOUT != 0 && c.unsent != nil {
		l.flush(i, now)
		if c.fd < 0 {
			return
		}
	}
	if events&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
		l.receive(i, now)
	}
}

// send sends slot i's next request.
func (l *loop) send(i int, now time.Time) {
	c := &l.conns[i]
	c.t0, c.waiting, c.unsent = now, true, l.cfg.request
	l.flush(i, now)
}

// flush writes what is left of the request; a full socket buffer leaves the rest to EPOLLOUT.
func (l *loop) flush(i int, now time.Time) {
	c := &l.conns[i]
	if c.tls != nil {
		// A TLS record goes out whole: fdConn waits for room in the socket buffer.
		if _, err := c.tls.Write(c.unsent); err != nil {
			if now.Before(l.end) {
				l.res.WriteErr++
			}
			l.reconnect(i, now)
			return
		}
		c.unsent = nil
		l.watchOut(i, false)
		return
	}
	for len(c.unsent) > 0 {
		n, err := rawIO(syscall.SYS_WRITE, c.fd, c.unsent)
		if err != nil {
			if errors.Is(err, syscall.EAGAIN) {
				l.watchOut(i, true)
				return
			}
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if now.Before(l.end) {
				l.res.WriteErr++
			}
			l.reconnect(i, now)
			return
		}
		c.unsent = c.unsent[n:]
	}
	c.unsent = nil
	l.watchOut(i, false)
}

// watchOut turns EPOLLOUT reports on or off for slot i (off once the request is written, so a
// writable socket does not wake the loop on every wait).
func (l *loop) watchOut(i int, on bool) {
	c := &l.conns[i]
	if c.outOn == on {
		return
	}
	c.outOn = on
	events := uint32(syscall.EPOLLIN | syscall.EPOLLRDHUP)
	if on {
		events |= syscall.EPOLLOUT
	}
	ev := syscall.EpollEvent{Events: events, Fd: int32(i), Pad: c.gen}
	_ = syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_MOD, c.fd, &ev)
}

// receive reads what slot i's socket holds and completes its response when it is whole.
func (l *loop) receive(i int, now time.Time) {
	c := &l.conns[i]
	eof := false
	for {
		if cap(c.buf)-len(c.buf) < 4096 {
			c.buf = append(c.buf, make([]byte, max(16<<10, cap(c.buf)))...)[:len(c.buf)]
		}
		var n int
		var err error
		if c.tls != nil {
			// A TLS read returns one record's data at a time: read until the socket is empty.
			n, err = c.tls.Read(c.buf[len(c.buf):cap(c.buf)])
			if errors.Is(err, errWouldBlock) {
				break
			}
			if err != nil {
				eof = true
				break
			}
			c.buf = c.buf[:len(c.buf)+n]
			continue
		}
		n, err = rawIO(syscall.SYS_READ, c.fd, c.buf[len(c.buf):cap(c.buf)])
		if err != nil {
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if errors.Is(err, syscall.EAGAIN) {
				break
			}
			eof = true // a reset: treated as the end of the stream
			break
		}
		if n == 0 {
			eof = true
			break
		}
		c.buf = c.buf[:len(c.buf)+n]
		if len(c.buf) < cap(c.buf) {
			break // the socket is drained; level-triggered epoll reports what comes later
		}
	}
	if !c.waiting {
		// Nothing was asked: the server closed an idle connection or sent something unasked.
		l.reconnect(i, now)
		return
	}
	var f frame
	var err error
	if l.cfg.proto == "tcp" {
		f = rawFrame(c.buf, l.cfg.want)
	} else {
		var scratch []byte
		f, scratch, err = parseFrame(c.buf, eof, l.scratch)
		l.scratch = scratch
	}
	switch {
	case err != nil || (f.n == 0 && eof):
		if now.Before(l.end) {
			if now.Sub(c.t0) > l.cfg.timeout {
				l.res.TimeoutErr++
			} else {
				l.res.ReadErr++
			}
		}
		l.reconnect(i, now)
		return
	case f.n == 0:
		return // more to come
	}
	if !now.Before(l.end) {
		c.waiting = false
		return // completed after the end: not counted, as wrk does
	}
	lat := now.Sub(c.t0)
	if lat > l.cfg.timeout {
		l.res.TimeoutErr++
	}
	l.res.Requests++
	l.res.Bytes += int64(f.n)
	l.hist.record(lat.Microseconds())
	if !answerOK(f.status, f.body, l.cfg.want) {
		l.res.WrongAnswers++
	}
	c.waiting = false
	if f.close || eof || f.n != len(c.buf) {
		// The server closes the connection (Mountebank), or sent more than was asked for.
		l.reconnect(i, now)
		return
	}
	c.buf = c.buf[:0]
	l.send(i, now)
}

// sockaddrOf resolves host:port to a socket address.
func sockaddrOf(addr string) (syscall.Sockaddr, error) {
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, err
	}
	if ip4 := ta.IP.To4(); ip4 != nil {
		sa := &syscall.SockaddrInet4{Port: ta.Port}
		copy(sa.Addr[:], ip4)
		return sa, nil
	}
	sa := &syscall.SockaddrInet6{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To16())
	return sa, nil
}

// epollWait is epoll_pwait, and rawIO read or write on a non-blocking socket, without the
// runtime's system call bookkeeping: with it, the scheduler's monitor thread takes the processor
// back from a call that spans two of its ticks and then keeps waking every 20 µs on the
// generator's core, and the thread itself sleeps and wakes to get the processor back (tens of
// thousands of context switches a second, and fewer requests). The loop is the only goroutine
// that works; a signal (preemption, garbage collection) ends a wait with EINTR.
func epollWait(epfd int, events []syscall.EpollEvent, msec int) (int, error) {
	n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])),
		uintptr(len(events)), uintptr(msec), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawIO(trap uintptr, fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// handshake runs slot i's TLS handshake on its connected socket, waiting for each answer: a
// keep-alive connection does it once, before its first request is timed.
func (l *loop) handshake(i int) bool {
	c := &l.conns[i]
	c.fdc = &fdConn{fd: c.fd, block: true}
	c.tls = tls.Client(c.fdc, clientTLS)
	err := c.tls.Handshake()
	c.fdc.block = false
	return err == nil
}

// errWouldBlock is fdConn's read on an empty socket: a temporary error, which crypto/tls
// returns without keeping, so the next read after epoll reports data goes on.
var errWouldBlock = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "would block" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

// fdConn is a net.Conn over the loop's non-blocking socket for crypto/tls. Reads return
// errWouldBlock on an empty socket unless block is set (the handshake); writes wait for room.
type fdConn struct {
	fd    int
	block bool
}

func (c *fdConn) Read(b []byte) (int, error) {
	for {
		n, err := rawIO(syscall.SYS_READ, c.fd, b)
		switch {
		case err == nil && n == 0:
			return 0, io.EOF
		case err == nil:
			return n, nil
		case errors.Is(err, syscall.EINTR):
		case errors.Is(err, syscall.EAGAIN) && c.block:
			if err := pollFD(c.fd, pollIn); err != nil {
				return 0, err
			}
		case errors.Is(err, syscall.EAGAIN):
			return 0, errWouldBlock
		default:
			return 0, err
		}
	}
}

func (c *fdConn) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, err := rawIO(syscall.SYS_WRITE, c.fd, b[done:])
		switch {
		case err == nil:
			done += n
		case errors.Is(err, syscall.EINTR):
		case errors.Is(err, syscall.EAGAIN):
			if err := pollFD(c.fd, pollOut); err != nil {
				return done, err
			}
		default:
			return done, err
		}
	}
	return done, nil
}

func (c *fdConn) Close() error                     { return nil } // the loop closes the socket
func (c *fdConn) LocalAddr() net.Addr              { return nil }
func (c *fdConn) RemoteAddr() net.Addr             { return nil }
func (c *fdConn) SetDeadline(time.Time) error      { return nil }
func (c *fdConn) SetReadDeadline(time.Time) error  { return nil }
func (c *fdConn) SetWriteDeadline(time.Time) error { return nil }

const (
	pollIn  = 0x1
	pollOut = 0x4
)

// pollFD waits up to 10 s until fd is readable or writable (events).
func pollFD(fd int, events int16) error {
	pfd := struct {
		fd              int32
		events, revents int16
	}{int32(fd), events, 0}
	ts := syscall.NsecToTimespec(int64(10 * time.Second))
	for {
		n, _, e := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		switch {
		case e == syscall.EINTR:
			continue
		case e != 0:
			return e
		case n == 0:
			return errors.New("socket not ready after 10 s")
		}
		return nil
	}
}

// connectAll completes every slot's connect and TLS handshake, waiting up to 10 s for each,
// and sends no request yet. A slot that fails is retried within the run.
func (l *loop) connectAll() {
	now := time.Now()
	for i := range l.conns {
		c := &l.conns[i]
		if c.fd < 0 || !c.connecting {
			continue
		}
		ok := pollFD(c.fd, pollOut) == nil
		if ok {
			e, err := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
			ok = err == nil && e == 0
		}
		if c.connecting = false; !ok || !l.handshake(i) {
			l.closeConn(i)
			l.connectFailed(i, now)
		}
	}
}
