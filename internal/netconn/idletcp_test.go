package netconn

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// idleKinds are the connections IdleConn wraps: the runtime poller's (read and written with
// raw system calls) and the FIFO poller's (which writes with the idle rule itself).
var idleKinds = []struct {
	name string
	fifo bool
}{{"go", false}, {"fifo", true}}

// idlePair returns an IdleConn (the server's side) with the given idle timeout and its
// client.
func idlePair(t *testing.T, idle time.Duration) (server, client net.Conn) {
	t.Helper()
	return idlePairOf(t, false, idle, nil)
}

// idlePairOf is idlePair on the FIFO poller's connection when fifo is set; setup, if not nil,
// sees the accepted connection before IdleConn wraps it.
func idlePairOf(t *testing.T, fifo bool, idle time.Duration, setup func(net.Conn)) (server, client net.Conn) {
	t.Helper()
	var ln net.Listener
	if fifo {
		ln = listen(t, "127.0.0.1:0")
		if _, ok := ln.(*FIFOListener); !ok {
			t.Skip("no FIFO poller here")
		}
	} else {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
	}
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(s)
	}
	server = IdleConn(s, idle)
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

func readString(t *testing.T, c net.Conn) string {
	t.Helper()
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(buf[:n])
}

// A connection left waiting for data longer than the idle timeout fails its Read, at once
// and after it was busy.
func TestIdleConnReadTimesOut(t *testing.T) {
	for _, k := range idleKinds {
		t.Run(k.name, func(t *testing.T) {
			s, _ := idlePairOf(t, k.fifo, 50*time.Millisecond, nil)
			if _, err := s.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("first wait: %v, want a deadline error", err)
			}
			// Busy, then idle again: the wait that follows the answer ends too.
			s, c := idlePairOf(t, k.fifo, 50*time.Millisecond, nil)
			if _, err := c.Write([]byte("a")); err != nil {
				t.Fatal(err)
			}
			if got := readString(t, s); got != "a" {
				t.Fatalf("read %q", got)
			}
			time.Sleep(80 * time.Millisecond) // past the deadline armed at the start
			if _, err := s.Write([]byte("answer")); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("wait after the answer: %v, want a deadline error", err)
			}
		})
	}
}

// A wait counts from when Read is called: a connection that was busy (a slow answer) past the
// deadline armed for an earlier wait still reads the data that came meanwhile, as it would
// with the deadline set idle ahead before each Read.
func TestIdleConnBusyPastTheDeadline(t *testing.T) {
	for _, k := range idleKinds {
		t.Run(k.name, func(t *testing.T) {
			s, c := idlePairOf(t, k.fifo, 200*time.Millisecond, nil)
			for i := range 2 {
				if _, err := c.Write([]byte("x")); err != nil {
					t.Fatal(err)
				}
				if got := readString(t, s); got != "x" {
					t.Fatalf("round %d: read %q", i, got)
				}
				if _, err := c.Write([]byte("y")); err != nil { // the next request, before the answer
					t.Fatal(err)
				}
				time.Sleep(250 * time.Millisecond) // answering takes longer than the idle timeout
				if got := readString(t, s); got != "y" {
					t.Fatalf("round %d: read %q after a busy spell, want the waiting data", i, got)
				}
			}
		})
	}
}

// A read deadline of another's (a tcp proxy's hang-up watch leaves one in the past) does not
// end the next wait: that one is armed again.
func TestIdleConnForeignDeadline(t *testing.T) {
	for _, k := range idleKinds {
		t.Run(k.name, func(t *testing.T) {
			s, c := idlePairOf(t, k.fifo, time.Minute, nil)
			_ = s.SetReadDeadline(time.Unix(1, 0))
			if _, err := c.Write([]byte("z")); err != nil {
				t.Fatal(err)
			}
			if got := readString(t, s); got != "z" {
				t.Fatalf("read %q", got)
			}
			_ = s.SetDeadline(time.Unix(1, 0))
			if _, err := c.Write([]byte("w")); err != nil {
				t.Fatal(err)
			}
			if got := readString(t, s); got != "w" {
				t.Fatalf("read %q", got)
			}
		})
	}
}

// A client that does not read its answers blocks a write, which fails once it has been
// blocked for the idle timeout; a later write is not failed by that old deadline.
func TestIdleConnWriteTimesOut(t *testing.T) {
	for _, k := range idleKinds {
		t.Run(k.name, func(t *testing.T) {
			s, c := idlePairOf(t, k.fifo, 100*time.Millisecond, nil)
			big := make([]byte, 1<<20)
			var err error
			for range 256 { // far more than the socket buffers hold
				if _, err = s.Write(big); err != nil {
					break
				}
			}
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("write to a client that does not read: %v, want a deadline error", err)
			}

			s, c = idlePairOf(t, k.fifo, 500*time.Millisecond, nil)
			done := make(chan error, 1)
			go func() {
				_, err := io.CopyN(io.Discard, c, 32<<20+1)
				done <- err
			}()
			if _, err := s.Write(make([]byte, 32<<20)); err != nil { // more than the buffers hold: it waits for the client
				t.Fatalf("write drained by the client: %v", err)
			}
			time.Sleep(600 * time.Millisecond) // past any deadline the blocked write armed
			if _, err := s.Write([]byte("!")); err != nil {
				t.Fatalf("later write: %v", err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A client that reads a large answer slowly, never pausing as long as the idle timeout, gets
// all of it: the write's idle timeout counts from its last progress. It failed once the whole
// write had taken the idle timeout since the buffer first filled (a tcp imposter's large answer
// to a slow client was cut after --idle-timeout, though the client kept reading). The socket
// buffers are small, so that the writer sees each read of the client as progress (with
// autotuned buffers of megabytes, it sees none until the client has drained a lot).
func TestIdleConnSlowReaderGetsAll(t *testing.T) {
	const idle = time.Second
	for _, k := range idleKinds {
		t.Run(k.name, func(t *testing.T) {
			s, c := idlePairOf(t, k.fifo, idle, func(raw net.Conn) {
				switch rc := raw.(type) {
				case *net.TCPConn:
					_ = rc.SetWriteBuffer(64 << 10)
				case *FIFOConn:
					_ = syscall.SetsockoptInt(rc.fd, syscall.SOL_SOCKET, syscall.SO_SNDBUF, 64<<10)
				}
			})
			_ = c.(*net.TCPConn).SetReadBuffer(64 << 10)
			const size = 4 << 20
			read := make(chan error, 1)
			go func() {
				buf := make([]byte, 128<<10)
				for got := 0; got < size; {
					n, err := io.ReadFull(c, buf[:min(len(buf), size-got)])
					got += n
					if err != nil {
						read <- err
						return
					}
					time.Sleep(idle / 10) // a tenth of the timeout between reads: 3 s in all
				}
				read <- nil
			}()
			if n, err := s.Write(make([]byte, size)); err != nil || n != size {
				t.Fatalf("write to a slow reader: %d bytes, %v", n, err)
			}
			if err := <-read; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Reads and writes end as the net package's: end of file, a closed connection, and the
// syscall connection is the socket's.
func TestIdleConnEnds(t *testing.T) {
	s, c := idlePair(t, time.Minute)
	if _, ok := s.(syscall.Conn); !ok {
		t.Fatalf("%T is not a syscall.Conn", s)
	}
	if _, err := s.(syscall.Conn).SyscallConn(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty read: %d, %v", n, err)
	}
	c.Close()
	if _, err := s.Read(make([]byte, 8)); err != io.EOF {
		t.Fatalf("read after the client closed: %v, want EOF", err)
	}
	s.Close()
	if _, err := s.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read after close: %v, want net.ErrClosed", err)
	}
	if _, err := s.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after close: %v, want net.ErrClosed", err)
	}
}
