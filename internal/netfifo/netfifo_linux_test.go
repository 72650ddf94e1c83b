package netfifo

import (
	"syscall"
	"testing"
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
