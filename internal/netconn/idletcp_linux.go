//go:build linux

package netconn

import (
	"io"
	"net"
	"os"
	"syscall"
)

// rawIO reads and writes an IdleConn's socket with raw system calls (see raw_linux.go), waiting
// through the runtime's poller (and so the connection's deadlines) as the net package would.
// Its callbacks are method values made once: a closure given to RawConn would be allocated for
// each call.
type rawIO struct {
	ic              *idleTCPConn
	rc              syscall.RawConn
	readFn, writeFn func(fd uintptr) bool
	buf             []byte // the call's buffer
	n               int    // read: bytes read; write: bytes written
	err             error  // the system call's error
	writeArmed      bool   // the write in progress armed the write deadline
	armedAt         int    // n when the write deadline was armed
}

// newRawIO returns c's raw reader and writer, or nil when c is not a socket of this system.
func newRawIO(c net.Conn, ic *idleTCPConn) *rawIO {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	r := &rawIO{ic: ic, rc: rc}
	r.readFn, r.writeFn = r.readSome, r.writeSome
	return r
}

func (r *rawIO) readSome(fd uintptr) bool {
	for {
		r.n, r.err = rawRead(int(fd), r.buf)
		if r.err != syscall.EINTR { //nolint:errorlint // a raw system call returns a bare syscall.Errno, never wrapped
			return r.err != syscall.EAGAIN //nolint:errorlint // as above
		}
	}
}

func (r *rawIO) read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.buf, r.n, r.err = b, 0, nil
	werr := r.rc.Read(r.readFn)
	r.buf = nil
	switch {
	case werr != nil:
		return 0, werr // closed, or past the deadline
	case r.err != nil:
		return 0, r.opError("read", r.err)
	case r.n == 0:
		return 0, io.EOF
	}
	return r.n, nil
}

func (r *rawIO) writeSome(fd uintptr) bool {
	for r.n < len(r.buf) {
		n, e := rawWrite(int(fd), r.buf[r.n:])
		if n > 0 {
			r.n += n
		}
		switch e {
		case nil, syscall.EINTR: //nolint:errorlint // a raw system call returns a bare syscall.Errno, never wrapped
		case syscall.EAGAIN:
			// The idle timeout counts from the write's last progress: a client that takes
			// a large answer slowly is reading, not gone (node's socket timeout counts from
			// the last activity too). Armed again only when the buffer filled after some
			// progress: once per wait at most.
			if !r.writeArmed || r.n > r.armedAt {
				r.writeArmed, r.armedAt = true, r.n
				r.ic.armWrite()
			}
			return false
		default:
			r.err = e
			return true
		}
	}
	return true
}

func (r *rawIO) write(b []byte) (int, error) {
	r.buf, r.n, r.err = b, 0, nil
	werr := r.rc.Write(r.writeFn)
	if r.writeArmed {
		r.writeArmed = false
		r.ic.disarmWrite()
	}
	n := r.n
	r.buf = nil
	switch {
	case werr != nil:
		return n, werr
	case r.err != nil:
		return n, r.opError("write", r.err)
	}
	return n, nil
}

func (r *rawIO) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: r.ic.LocalAddr(), Addr: r.ic.RemoteAddr(), Err: os.NewSyscallError(op, err)}
}
