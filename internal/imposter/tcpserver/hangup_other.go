//go:build !linux

package tcpserver

import "net"

// watchHangUp is the Linux one's stand-in: elsewhere a proxy's origin exchange is bounded by
// --idle-timeout alone.
func watchHangUp(net.Conn, func()) (stop func()) { return func() {} }

// shutDown is the Linux one's stand-in: elsewhere a tcp client's end of sending is seen when
// the connection is read next.
func shutDown(net.Conn) bool { return false }
