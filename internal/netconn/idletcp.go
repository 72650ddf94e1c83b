package netconn

import (
	"errors"
	"net"
	"os"
	"syscall"
	"time"
)

// IdleConn returns c with an idle timeout: a Read fails with os.ErrDeadlineExceeded once it
// has waited idle for data, and a Write once it has made no progress for idle (a client that
// does not read its answers; one that reads a large answer slowly keeps it going), as setting
// both deadlines idle ahead before each Read and each step of a Write would make them, which is
// what the tcp imposters did. It costs one monotonic clock read per Read
// instead of two deadline changes per request (each a runtime timer change and a clock read,
// about a sixth of a tcp imposter's own work per packet):
//
//   - the read deadline is armed for the wait that began at some point, and left alone while
//     the connection keeps busy; when it passes, Read arms it again for the wait in progress
//     unless that wait is the one it was armed for, so a wait still ends exactly idle after it
//     began;
//   - a write is first tried without a deadline and arms one only when the socket's buffer is
//     full, and again when it fills again after some progress (on Linux; elsewhere each step
//     of a Write arms it).
//
// Whoever sets a read deadline of its own (SetReadDeadline, SetDeadline) makes the next Read
// that meets it arm the idle one again. The connection is served by one goroutine: Read and
// Write may run at the same time, but not two Reads or two Writes.
func IdleConn(c net.Conn, idle time.Duration) net.Conn {
	ic := &idleTCPConn{Conn: c, idle: idle, base: time.Now()}
	if w, ok := c.(idleWriter); ok {
		ic.iw = w
	} else {
		ic.raw = newRawIO(c, ic)
	}
	_ = c.SetReadDeadline(ic.base.Add(idle))
	return ic
}

// idleWriter is a connection whose writes follow IdleConn's rule themselves (FIFOConn).
type idleWriter interface {
	writeIdle(b []byte, idle time.Duration) (int, error)
}

type idleTCPConn struct {
	net.Conn
	raw  *rawIO     // nil: reads and writes go through Conn (no raw socket here)
	iw   idleWriter // Conn's own idle writes, if it has them
	idle time.Duration
	base time.Time // the monotonic origin of armed and the waits' starts
	// armed is when the wait began that the read deadline is armed for (base+armed+idle);
	// -1 after a deadline of another's.
	armed time.Duration
}

func (c *idleTCPConn) Read(b []byte) (int, error) {
	began := time.Since(c.base)
	for {
		var n int
		var err error
		if c.raw != nil {
			n, err = c.raw.read(b)
		} else {
			n, err = c.Conn.Read(b)
		}
		if err == nil || c.armed == began || !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, err
		}
		// The deadline was armed for an earlier wait (the connection was busy since), or by
		// another: this wait ends idle after it began.
		c.armed = began
		_ = c.Conn.SetReadDeadline(c.base.Add(began + c.idle))
	}
}

func (c *idleTCPConn) Write(b []byte) (int, error) {
	if c.iw != nil {
		return c.iw.writeIdle(b, c.idle)
	}
	if c.raw != nil {
		return c.raw.write(b)
	}
	// In steps, the deadline armed again before each: the idle timeout counts from the
	// write's last progress, as on Linux (see rawIO.writeSome).
	written := 0
	for {
		step := min(len(b)-written, writeStep)
		_ = c.Conn.SetWriteDeadline(time.Now().Add(c.idle))
		n, err := c.Conn.Write(b[written : written+step])
		written += n
		if err != nil || written == len(b) {
			return written, err
		}
	}
}

// writeStep is how much a write sends before it arms the write deadline again, where writes go
// through the net package.
const writeStep = 256 << 10

// armWrite arms the write deadline for a write that found the socket's buffer full.
func (c *idleTCPConn) armWrite() { _ = c.Conn.SetWriteDeadline(time.Now().Add(c.idle)) }

// disarmWrite clears the deadline armWrite armed, once its write is over.
func (c *idleTCPConn) disarmWrite() { _ = c.Conn.SetWriteDeadline(time.Time{}) }

func (c *idleTCPConn) SetReadDeadline(t time.Time) error {
	c.armed = -1
	return c.Conn.SetReadDeadline(t)
}

func (c *idleTCPConn) SetDeadline(t time.Time) error {
	c.armed = -1
	return c.Conn.SetDeadline(t)
}

// Unwrap returns the connection IdleConn wrapped.
func (c *idleTCPConn) Unwrap() net.Conn { return c.Conn }

var errNoSyscallConn = errors.New("not a socket")

// SyscallConn returns the socket's raw connection (a tcp proxy watches it for the client's
// hang-up).
func (c *idleTCPConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errNoSyscallConn
}
