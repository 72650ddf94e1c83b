package tcpserver

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// watchHangUp calls cancel once the peer of conn has closed or reset it, or conn was closed
// here (a DELETE of the imposter), while the caller does not read conn (a proxy waits for its
// origin). It takes nothing the client sends: it peeks, and with data waiting asks poll(2)
// whether the peer has shut down (POLLRDHUP) at each change the runtime's poller reports. stop
// ends the watch and waits for it; conn's read deadline is then in the past (the caller sets its
// own before reading).
func watchHangUp(conn net.Conn, cancel func()) (stop func()) {
	if ctx := hangUpContext(conn); ctx != nil {
		// The FIFO poller's connection: its context ends on the peer's hang-up or a Close.
		stop := context.AfterFunc(ctx, cancel)
		return func() { stop() }
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return func() {}
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var b [1]byte
		gone := false
		err := raw.Read(func(fd uintptr) bool {
			n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
			switch {
			case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
				return false // nothing yet: wait for the next change
			case err != nil || n == 0:
				gone = true // reset, or closed (end of file)
				return true
			}
			// data waiting (the client's next request): it is the caller's; the peer may still
			// have shut down after it
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
			if k, err := unix.Poll(pfd, 0); err == nil && k > 0 && pfd[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0 {
				gone = true
				return true
			}
			return false
		})
		if gone || errors.Is(err, net.ErrClosed) {
			cancel()
		}
	}()
	return func() {
		_ = conn.SetReadDeadline(time.Unix(1, 0))
		<-done
	}
}

// shutDown reports whether the peer of conn has shut down its side (or reset it) by now, without
// waiting or taking anything it sent: watchHangUp's check, once.
func shutDown(conn net.Conn) bool {
	if ctx := hangUpContext(conn); ctx != nil {
		return ctx.Err() != nil
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	_ = raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		switch {
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
		case err != nil || n == 0:
			gone = true
		default:
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
			if k, err := unix.Poll(pfd, 0); err == nil && k > 0 && pfd[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0 {
				gone = true
			}
		}
	})
	return gone
}

// hangUpContext returns the context of the connection under conn (and its wrappers: IdleConn's)
// when it tells the peer's hang-up itself, as the FIFO poller's connections do (ended by the
// poller's hang-up event or a Close); nil otherwise.
func hangUpContext(conn net.Conn) context.Context {
	for {
		if c, ok := conn.(interface{ Context() context.Context }); ok {
			return c.Context()
		}
		u, ok := conn.(interface{ Unwrap() net.Conn })
		if !ok {
			return nil
		}
		conn = u.Unwrap()
	}
}
