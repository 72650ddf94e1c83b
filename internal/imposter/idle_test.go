package imposter

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// idleServer serves fasthttp behind an IdleListener with a short timeout; a request to /hold
// blocks until release is closed.
func idleServer(t *testing.T, useTLS bool) (addr string, release chan struct{}, dial func() net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release = make(chan struct{})
	srv := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			if string(ctx.Path()) == "/hold" {
				<-release
			}
			ctx.SetBodyString("ok")
		},
		ConnState: IdleConnState,
		Logger:    fasthttpLogger{},
	}
	il := newIdleListener(ln, 50*time.Millisecond, 10*time.Millisecond)
	var served net.Listener = il
	conf := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // a test against its own server
	if useTLS {
		cert, err := tls.X509KeyPair([]byte(defaultCert), []byte(defaultKey))
		if err != nil {
			t.Fatal(err)
		}
		served = tls.NewListener(il, &tls.Config{Certificates: []tls.Certificate{cert}})
	}
	go func() { _ = srv.Serve(served) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	addr = ln.Addr().String()
	dial = func() net.Conn {
		var c net.Conn
		var err error
		if useTLS {
			c, err = tls.Dial("tcp", addr, conf)
		} else {
			c, err = net.Dial("tcp", addr)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	return addr, release, dial
}

func idleGet(t *testing.T, c net.Conn, r *bufio.Reader, path string) string {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	var resp fasthttp.Response
	if err := resp.Read(r); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return string(resp.Body())
}

// closedWithin reports whether the server closes c within d (a read returns EOF or an error).
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := c.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

func TestIdleListener(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		name := "http"
		if useTLS {
			name = "https"
		}
		t.Run(name, func(t *testing.T) {
			_, release, dial := idleServer(t, useTLS)

			// Idle after a request: closed.
			c := dial()
			if got := idleGet(t, c, bufio.NewReader(c), "/"); got != "ok" {
				t.Fatalf("body %q", got)
			}
			if !closedWithin(c, 10*time.Second) {
				t.Fatal("an idle keep-alive connection was not closed")
			}

			// A request in progress for many timeouts: kept, and answered.
			c = dial()
			r := bufio.NewReader(c)
			done := make(chan string, 1)
			go func() {
				if _, err := io.WriteString(c, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
					done <- err.Error()
					return
				}
				var resp fasthttp.Response
				if err := resp.Read(r); err != nil {
					done <- err.Error()
					return
				}
				done <- string(resp.Body())
			}()
			time.Sleep(20 * 50 * time.Millisecond)
			close(release)
			if got := <-done; got != "ok" {
				t.Fatalf("a connection in a request was closed: %s", got)
			}
			// and it serves the next request before going idle again
			if got := idleGet(t, c, r, "/"); got != "ok" {
				t.Fatalf("body %q", got)
			}
		})
	}
}

func TestIdleListenerSilentConnection(t *testing.T) {
	addr, _, _ := idleServer(t, false)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !closedWithin(c, 10*time.Second) {
		t.Fatal("a connection that never sent a request was not closed")
	}
}

func TestIdleListenerClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	il := newIdleListener(ln, time.Minute, time.Millisecond)
	if err := il.Close(); err != nil {
		t.Fatal(err)
	}
	_ = il.Close() // twice is harmless
	if _, err := il.Accept(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Accept after Close: %v", err)
	}
}
