package compat

import (
	"net"

	"golang.org/x/sys/unix"
)

// cork sets TCP_CORK on conn: what is written stays queued until the socket is uncorked or shut
// down, and a shutdown sends the queued data with its FIN in one segment.
func cork(conn *net.TCPConn, on bool) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	v := 0
	if on {
		v = 1
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_CORK, v)
	}); err != nil {
		return err
	}
	return serr
}
