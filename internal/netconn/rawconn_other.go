//go:build !linux

package netconn

import "net"

// RawIOListener returns ln: raw system calls are for Linux.
func RawIOListener(ln *net.TCPListener) net.Listener { return ln }
