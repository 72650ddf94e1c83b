package netfifo

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

func TestListenUsesThePoller(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	if _, ok := l.(*Listener); !ok {
		t.Fatalf("Listen returned %T, want *Listener", l)
	}
	s, _ := pair(t, l, l.Addr().String())
	if _, ok := s.(*Conn); !ok {
		t.Fatalf("Accept returned %T, want *Conn", s)
	}
}

// Accepted connections get the options the runtime gives its own: no delay and keep-alive.
func TestSocketOptions(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	s, _ := pair(t, l, l.Addr().String())
	fd := s.(*Conn).fd
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
	ctx := s.(*Conn).Context()
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

// Closing the connection here ends its context too.
func TestContextEndsOnClose(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	s, _ := pair(t, l, l.Addr().String())
	ctx := s.(*Conn).Context()
	done := ctx.Done()
	_ = s.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Done() still open 30 s after Close")
	}
}
