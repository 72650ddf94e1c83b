package netconn

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// listen returns a Listener on addr, closed when the test ends.
func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	l, err := ListenFIFO(ln.(*net.TCPListener))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// pair returns both ends of a connection through l.
func pair(t *testing.T, l net.Listener, dial string) (server, client net.Conn) {
	t.Helper()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := l.Accept()
		ch <- res{c, err}
	}()
	client, err := net.Dial("tcp", dial)
	if err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { _ = r.c.Close(); _ = client.Close() })
	return r.c, client
}

// result returns what ch gives, failing the test if a call that should have returned still waits
// after 30 s (a hang, not a slow machine).
func result(t *testing.T, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("%s still waits after 30 s", what)
		return nil
	}
}

func TestEchoAndAddresses(t *testing.T) {
	for _, tc := range []struct{ listen, dial string }{
		{"127.0.0.1:0", "127.0.0.1"},
		{"[::1]:0", "::1"},
		{":0", "127.0.0.1"}, // dual stack: the peer is an IPv4-mapped address
	} {
		t.Run(tc.listen, func(t *testing.T) {
			l := listen(t, tc.listen)
			port := l.Addr().(*net.TCPAddr).Port
			s, c := pair(t, l, net.JoinHostPort(tc.dial, fmt.Sprint(port)))
			if got, want := s.RemoteAddr().String(), c.LocalAddr().String(); got != want {
				t.Errorf("RemoteAddr() = %s, want %s", got, want)
			}
			if got, want := s.LocalAddr().String(), c.RemoteAddr().String(); got != want {
				t.Errorf("LocalAddr() = %s, want %s", got, want)
			}
			if _, err := c.Write([]byte("ping")); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 16)
			n, err := s.Read(buf)
			if err != nil || string(buf[:n]) != "ping" {
				t.Fatalf("server Read = %q, %v; want \"ping\"", buf[:n], err)
			}
			if _, err := s.Write([]byte("pong")); err != nil {
				t.Fatal(err)
			}
			n, err = io.ReadFull(c, buf[:4])
			if err != nil || string(buf[:n]) != "pong" {
				t.Fatalf("client Read = %q, %v; want \"pong\"", buf[:n], err)
			}
			_ = c.Close()
			if n, err := s.Read(buf); n != 0 || err != io.EOF {
				t.Fatalf("Read after the peer closed = %d, %v; want 0, EOF", n, err)
			}
		})
	}
}

func TestCloseWakesWaitingCalls(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	s, _ := pair(t, l, l.Addr().String())
	read := make(chan error, 1)
	go func() {
		_, err := s.Read(make([]byte, 8))
		read <- err
	}()
	accept := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		accept <- err
	}()
	time.Sleep(10 * time.Millisecond) // let both wait (the test passes without it too)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := result(t, read, "Read after Close"); !errors.Is(err, net.ErrClosed) {
		t.Errorf("waiting Read after Close: %v, want net.ErrClosed", err)
	}
	if err := s.Close(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("second Close: %v, want net.ErrClosed", err)
	}
	if _, err := s.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write after Close: %v, want net.ErrClosed", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := result(t, accept, "Accept after Close"); !errors.Is(err, net.ErrClosed) {
		t.Errorf("waiting Accept after Close: %v, want net.ErrClosed", err)
	}
	// The port is free again.
	ln, err := net.Listen("tcp", l.Addr().String())
	if err != nil {
		t.Fatalf("port still bound after Close: %v", err)
	}
	_ = ln.Close()
}

func TestDeadlines(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	s, c := pair(t, l, l.Addr().String())
	buf := make([]byte, 8)

	// A deadline already past fails the read at once, as a timeout.
	_ = s.SetReadDeadline(time.Now().Add(-time.Second))
	_, err := s.Read(buf)
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read past its deadline: %v, want a timeout", err)
	}

	// A deadline set while a read waits ends the wait.
	_ = s.SetReadDeadline(time.Time{})
	read := make(chan error, 1)
	go func() {
		_, err := s.Read(buf)
		read <- err
	}()
	time.Sleep(10 * time.Millisecond)
	_ = s.SetReadDeadline(time.Now())
	if err := result(t, read, "Read after SetReadDeadline(now)"); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("waiting Read after SetReadDeadline(now): %v, want a timeout", err)
	}

	// A future deadline lets data through, and clearing it makes the connection usable again.
	_ = s.SetDeadline(time.Now().Add(time.Hour))
	if _, err := c.Write([]byte("late")); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Read(buf); err != nil || string(buf[:n]) != "late" {
		t.Fatalf("Read = %q, %v; want \"late\"", buf[:n], err)
	}
	_ = s.SetDeadline(time.Time{})
	if _, err := s.Write([]byte("ok")); err != nil {
		t.Fatalf("Write after clearing the deadline: %v", err)
	}

	// A waiting read times out by itself.
	_ = s.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := s.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read with a near deadline: %v, want a timeout", err)
	}
}

// A write larger than the socket buffers waits for the peer to read, and arrives intact.
func TestLargeWrite(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	s, c := pair(t, l, l.Addr().String())
	data := make([]byte, 16<<20)
	_, _ = rand.Read(data)
	wrote := make(chan error, 1)
	go func() {
		n, err := s.Write(data)
		if err == nil && n != len(data) {
			err = fmt.Errorf("wrote %d of %d bytes", n, len(data))
		}
		wrote <- err
	}()
	got := make([]byte, 0, len(data))
	buf := make([]byte, 4096)
	for len(got) < len(data) {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("client read after %d bytes: %v", len(got), err)
		}
		got = append(got, buf[:n]...)
	}
	if err := result(t, wrote, "Write"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("the data read differs from the data written")
	}
}

// Many connections opened, used and closed at once: each gets its own bytes back, also when the
// kernel reuses the numbers of closed sockets.
func TestConcurrentConnections(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					if _, err := c.Write(buf[:n]); err != nil {
						return
					}
				}
			}()
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				if err := echoOnce(l.Addr().String(), fmt.Sprintf("g%d-i%d", g, i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func echoOnce(addr, msg string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	for range 3 {
		if _, err := c.Write([]byte(msg)); err != nil {
			return err
		}
		buf := make([]byte, len(msg))
		if _, err := io.ReadFull(c, buf); err != nil {
			return fmt.Errorf("%s: %w", msg, err)
		}
		if string(buf) != msg {
			return fmt.Errorf("sent %q, got %q back", msg, buf)
		}
	}
	return nil
}
