//go:build !linux

package netconn

import "net"

// rawIO is Linux's: elsewhere an IdleConn reads and writes through the net package.
type rawIO struct{}

func newRawIO(net.Conn, *idleTCPConn) *rawIO { return nil }

func (*rawIO) read([]byte) (int, error)  { panic("unreachable") }
func (*rawIO) write([]byte) (int, error) { panic("unreachable") }
