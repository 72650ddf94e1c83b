//go:build linux

package netconn

import (
	"io"
	"net"
	"os"
	"syscall"
)

// RawIOListener serves the connections ln accepts through the runtime's poller, as ln would,
// but reads and writes them with raw system calls (see raw_linux.go): a server that answers one
// client at a time (the admin API, to a client suite creating and deleting imposters) then
// does not wake the runtime's monitor thread on every request. The returned listener owns ln.
func RawIOListener(ln *net.TCPListener) net.Listener { return rawIOListener{ln} }

type rawIOListener struct{ *net.TCPListener }

// Accept returns the next connection.
func (l rawIOListener) Accept() (net.Conn, error) {
	c, err := l.AcceptTCP()
	if err != nil {
		return nil, err
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return c, nil //nolint:nilerr // the plain connection still works
	}
	return &rawIOConn{TCPConn: c, rc: rc}, nil
}

// rawIOConn is a TCP connection whose reads and writes wait through the runtime's poller (with
// the connection's deadlines) and are made with raw system calls.
type rawIOConn struct {
	*net.TCPConn
	rc syscall.RawConn
	// progress is told of the bytes each write sends (see reportWrites).
	progress writeProgress
}

// reportWrites makes the connection tell p of the bytes each of its writes sends, as it goes.
// It is called before the connection is used.
func (c *rawIOConn) reportWrites(p writeProgress) { c.progress = p }

func (c *rawIOConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var err error
	prepared := false
	werr := c.rc.Read(func(fd uintptr) bool {
		for {
			n, err = rawRead(int(fd), b)
			switch {
			case err == syscall.EINTR: //nolint:errorlint // a raw system call returns a bare syscall.Errno, never wrapped
			case err != syscall.EAGAIN: //nolint:errorlint // a raw system call returns a bare syscall.Errno, never wrapped
				return true
			case prepared || !PrepareSpares():
				return false
			default:
				// Nothing to read: the client has the answer and sends its next request
				// meanwhile. The spare socket is made now rather than on the next POST.
				prepared = true
			}
		}
	})
	switch {
	case werr != nil:
		return 0, werr // closed, or past the deadline
	case err != nil:
		return 0, c.opError("read", err)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (c *rawIOConn) Write(b []byte) (int, error) {
	done := 0
	var err error
	werr := c.rc.Write(func(fd uintptr) bool {
		for done < len(b) {
			n, e := rawWrite(int(fd), b[done:])
			if n > 0 {
				done += n
				if c.progress != nil {
					c.progress.wrote(n)
				}
			}
			switch e {
			case nil, syscall.EINTR: //nolint:errorlint // a raw system call returns a bare syscall.Errno, never wrapped
			case syscall.EAGAIN:
				return false
			default:
				err = e
				return true
			}
		}
		return true
	})
	switch {
	case werr != nil:
		return done, werr
	case err != nil:
		return done, c.opError("write", err)
	}
	return done, nil
}

func (c *rawIOConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError(op, err)}
}
