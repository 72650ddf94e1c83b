package netconn

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

func rawIOListen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := RawIOListener(ln.(*net.TCPListener))
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// A RawIOListener's connection reads, writes, ends, times out and closes as the runtime's own.
func TestRawIOConn(t *testing.T) {
	l := rawIOListen(t)
	s, c := pair(t, l, l.Addr().String())
	if _, ok := s.(*rawIOConn); !ok {
		t.Fatalf("Accept returned %T, want *rawIOConn", s)
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := s.Read(buf); err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("Read = %q, %v; want ping", buf[:n], err)
	}

	// A large write goes out whole while the peer reads slowly enough to fill the buffers.
	big := make([]byte, 8<<20)
	_, _ = rand.Read(big)
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(c, int64(len(big))))
		got <- b
	}()
	if n, err := s.Write(big); n != len(big) || err != nil {
		t.Fatalf("Write = %d, %v; want %d", n, err, len(big))
	}
	select {
	case b := <-got:
		if !bytes.Equal(b, big) {
			t.Fatal("the peer read other bytes than were written")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the peer still reads after 30 s")
	}

	// Deadlines: one past fails the read as a timeout; one set while a read waits ends it.
	_ = s.SetReadDeadline(time.Now().Add(-time.Second))
	var ne net.Error
	if _, err := s.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read past its deadline: %v, want a timeout", err)
	}
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
	_ = s.SetReadDeadline(time.Time{})

	// The peer closing ends the reads with EOF.
	_ = c.Close()
	if n, err := s.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("Read after the peer closed = %d, %v; want 0, EOF", n, err)
	}

	// Close wakes a waiting read; later calls fail with net.ErrClosed.
	s2, _ := pair(t, l, l.Addr().String())
	go func() {
		_, err := s2.Read(buf)
		read <- err
	}()
	time.Sleep(10 * time.Millisecond)
	_ = s2.Close()
	if err := result(t, read, "Read after Close"); !errors.Is(err, net.ErrClosed) {
		t.Errorf("waiting Read after Close: %v, want net.ErrClosed", err)
	}
	if _, err := s2.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write after Close: %v, want net.ErrClosed", err)
	}
}
