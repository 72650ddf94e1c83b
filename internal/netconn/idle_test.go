package netconn

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// quietLogger drops fasthttp's messages.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// testCert makes a self-signed certificate for 127.0.0.1.
func testCert(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// holdServer serves fasthttp behind an IdleListener with opts, checking every 10 ms; a request
// to /hold blocks until release is closed. served is closed when Serve returns.
func holdServer(t *testing.T, opts ListenOptions) (il *IdleListener, release chan struct{}, served chan struct{}) {
	t.Helper()
	return holdServerOn(t, false, opts)
}

// holdServerOn is holdServer on the FIFO poller's listener when fifo is set (as imposters
// serve), on the runtime poller's otherwise.
func holdServerOn(t *testing.T, fifo bool, opts ListenOptions) (il *IdleListener, release chan struct{}, served chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if fifo {
		if ln, err = ListenFIFO(ln.(*net.TCPListener)); err != nil {
			t.Fatal(err)
		}
	}
	release, served = make(chan struct{}), make(chan struct{})
	srv := &fasthttp.Server{
		Handler: TrackRequests(func(ctx *fasthttp.RequestCtx) {
			switch string(ctx.Path()) {
			case "/hold":
				<-release
			case "/big": // more than the sockets' buffers hold
				ctx.SetBody(make([]byte, 32<<20))
				return
			}
			ctx.SetBodyString("ok")
		}),
		ConnState: IdleConnState,
		Logger:    quietLogger{},
	}
	il = newIdleListener(ln, opts, 10*time.Millisecond)
	go func() {
		defer close(served)
		_ = srv.Serve(il)
	}()
	t.Cleanup(func() { _ = il.Shutdown(context.Background()) })
	return il, release, served
}

// testIdleTimeout is idleServer's idle timeout: short, yet long enough for a client's TLS
// handshake on a loaded machine under -race. A TLS connection is idle until the server reads its
// ClientHello, and at 50 ms a starved server closed it before the handshake was over (tls.Dial:
// EOF, in one make test of a busy machine).
const testIdleTimeout = 500 * time.Millisecond

// idleServer is a holdServer with a short idle timeout, over TLS or not.
func idleServer(t *testing.T, useTLS bool) (addr string, release chan struct{}, dial func() net.Conn) {
	t.Helper()
	opts := ListenOptions{IdleTimeout: testIdleTimeout}
	conf := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // a test against its own server
	if useTLS {
		opts.TLS = &tls.Config{Certificates: []tls.Certificate{testCert(t)}}
	}
	il, release, _ := holdServer(t, opts)
	addr = il.Addr().String()
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
			time.Sleep(4 * testIdleTimeout)
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

// A client that asks for an answer larger than the sockets' buffers and never reads it: its
// connection closes once the write has made no progress for the idle timeout, over TLS too.
// Before, nothing timed it out (neither idle nor receiving a request): the connection, and the
// goroutine serving it, stayed for as long as the client kept it open.
func TestIdleTimeoutOnStalledWrite(t *testing.T) {
	for _, tc := range []struct {
		name         string
		useTLS, fifo bool
	}{{"http", false, false}, {"https", true, false}, {"http/fifo", false, true}, {"https/fifo", true, true}} {
		useTLS := tc.useTLS
		t.Run(tc.name, func(t *testing.T) {
			opts := ListenOptions{IdleTimeout: testIdleTimeout}
			if useTLS {
				opts.TLS = &tls.Config{Certificates: []tls.Certificate{testCert(t)}}
			}
			il, _, _ := holdServerOn(t, tc.fifo, opts)
			c := dialTest(t, il.Addr().String(), useTLS)
			defer c.Close()
			if _, err := io.WriteString(c, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			// Never read: the server's write stalls once the buffers are full.
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				il.mu.Lock()
				open := len(il.conns)
				il.mu.Unlock()
				if open == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the connection of a client that does not read its answer was left open")
				}
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
	il := newIdleListener(ln, ListenOptions{IdleTimeout: time.Minute}, time.Millisecond)
	if err := il.Close(); err != nil {
		t.Fatal(err)
	}
	_ = il.Close() // twice is harmless
	if _, err := il.Accept(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Accept after Close: %v", err)
	}
}

// Shutdown closes idle connections at once, lets a request in progress finish (closing its
// connection after the answer) and returns when no connection is left.
func TestIdleListenerShutdown(t *testing.T) {
	il, release, served := holdServer(t, ListenOptions{})
	ln := il.Listener
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c, bufio.NewReader(c)
	}
	idle, idleR := dial()
	if got := idleGet(t, idle, idleR, "/"); got != "ok" {
		t.Fatalf("body %q", got)
	}
	// counts returns how many connections are busy and idle.
	counts := func() (busy, idle int) {
		il.mu.Lock()
		defer il.mu.Unlock()
		for c := range il.conns {
			if c.since.Load() == 0 {
				busy++
			} else {
				idle++
			}
		}
		return busy, idle
	}
	waitCounts := func(wantBusy, wantIdle int) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
			if b, i := counts(); b == wantBusy && i == wantIdle {
				return
			}
			if time.Now().After(deadline) {
				b, i := counts()
				t.Fatalf("%d busy and %d idle connections, want %d and %d", b, i, wantBusy, wantIdle)
			}
		}
	}
	waitCounts(0, 1) // the first connection is idle once its answer is written
	busy, busyR := dial()
	if _, err := io.WriteString(busy, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	waitCounts(1, 1)
	shut := make(chan error, 1)
	go func() { shut <- il.Shutdown(context.Background()) }()
	<-served
	if !closedWithin(idle, 10*time.Second) {
		t.Fatal("Shutdown left an idle connection open")
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Fatal("the listener still accepts during Shutdown")
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) with a request in progress", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	var resp fasthttp.Response
	if err := resp.Read(busyR); err != nil || string(resp.Body()) != "ok" || !resp.ConnectionClose() {
		t.Fatalf("the request in progress: %v %q, Connection: close %v", err, resp.Body(), resp.ConnectionClose())
	}
	select {
	case err := <-shut:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown still waits after the last request")
	}
}

// A request that takes longer than the header timeout to arrive gets 408 and its connection
// is closed; one that arrives in time is answered.
func TestHeaderTimeout(t *testing.T) {
	il, _, _ := holdServer(t, ListenOptions{HeaderTimeout: 50 * time.Millisecond})
	ln := il.Listener
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if got := idleGet(t, c, r, "/"); got != "ok" {
		t.Fatalf("body %q", got)
	}
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var resp fasthttp.Response
	if err := resp.Read(r); err != nil || resp.StatusCode() != 408 {
		t.Fatalf("a request stalled in its headers: %v, status %d", err, resp.StatusCode())
	}
	if !closedWithin(c, 10*time.Second) {
		t.Fatal("the connection of a stalled request was left open")
	}
}

// A TLS client that stops in the middle of its handshake is a stalled request too: its
// connection closes at the header timeout. The 408 written through TLS waited for the
// handshake in progress, which waited for the client: the connection and its goroutines
// stayed for as long as the client kept it open.
func TestHeaderTimeoutInTLSHandshake(t *testing.T) {
	il, _, _ := holdServer(t, ListenOptions{
		HeaderTimeout: 50 * time.Millisecond,
		TLS:           &tls.Config{Certificates: []tls.Certificate{testCert(t)}},
	})
	c, err := net.Dial("tcp", il.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The first bytes of a ClientHello announcing 512 bytes, and nothing more.
	if _, err := c.Write([]byte("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(c, 30*time.Second) {
		t.Fatal("the connection of a handshake stalled midway was left open")
	}
}

// failingListener fails its first n accepts as a process out of file descriptors does.
type failingListener struct {
	net.Listener
	n int
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.n > 0 {
		l.n--
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// A RetryListener accepts again after failures, logging the burst once, and stops retrying
// when closed.
func TestRetryListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	rl := NewRetryListener(&failingListener{Listener: ln, n: 5}, slog.New(slog.NewTextHandler(&logs, nil)))
	go func() {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			defer c.Close()
			time.Sleep(time.Second)
		}
	}()
	c, err := rl.Accept()
	if err != nil {
		t.Fatalf("Accept after 5 failures: %v", err)
	}
	_ = c.Close()
	if n := strings.Count(logs.String(), "cannot accept"); n != 1 {
		t.Errorf("the burst was logged %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "accepting connections again") {
		t.Errorf("the end of the burst was not logged:\n%s", logs.String())
	}
	rl.Listener = &failingListener{Listener: ln, n: 1 << 30}
	go func() {
		time.Sleep(20 * time.Millisecond)
		_ = rl.Close()
	}()
	if _, err := rl.Accept(); err == nil {
		t.Fatal("Accept on a closed RetryListener returned a connection")
	}
}

// An answer given before the request was read in full (431 for a header block too large) reaches
// the client whole, followed by a FIN, however much of the request the client is still
// sending: LingerOnClose reads it before closing. Closing with unread bytes sends a reset, and
// the client lost the answer with it (node answers 431 and closes cleanly).
func TestLingerOnClose(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if fifo {
			if ln, err = ListenFIFO(ln.(*net.TCPListener)); err != nil {
				t.Fatal(err)
			}
		}
		srv := &fasthttp.Server{
			Handler:        TrackRequests(func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") }),
			ConnState:      IdleConnState,
			Logger:         quietLogger{},
			ReadBufferSize: 4096,
			ErrorHandler: func(ctx *fasthttp.RequestCtx, _ error) {
				ctx.SetStatusCode(fasthttp.StatusRequestHeaderFieldsTooLarge)
				ctx.SetConnectionClose()
				LingerOnClose(ctx.Conn())
			},
		}
		il := newIdleListener(ln, ListenOptions{}, 10*time.Millisecond)
		go func() { _ = srv.Serve(il) }()
		c, err := net.Dial("tcp", il.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			// 256 KiB of header in pieces: most of it arrives after the answer.
			_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: ")
			piece := strings.Repeat("a", 16<<10)
			for range 16 {
				if _, err := io.WriteString(c, piece); err != nil {
					return
				}
			}
		}()
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := io.ReadAll(c)
		if err != nil || !strings.HasPrefix(string(got), "HTTP/1.1 431 ") {
			t.Errorf("fifo %v: %q, %v; want the 431 and a clean close", fifo, got, err)
		}
		_ = c.Close()
		_ = il.Shutdown(context.Background())
	}
}

// TestPipelinedRequests: requests pipelined behind another in the same read are each read as
// node reads them, as the first one of a read is: odd Host lines and request lines rewritten
// for fasthttp and put back, Transfer-Encoding: gzip, chunked read as chunked, a bare LF
// answered 400 after the answers before it.
func TestPipelinedRequests(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{
		Handler: TrackRequests(func(ctx *fasthttp.RequestCtx) {
			ctx.SetBodyString(string(ctx.Method()) + " " + string(ctx.RequestURI()) + " [" + string(ctx.Request.Header.Host()) + "] " +
				strings.ReplaceAll(string(ctx.Request.Header.RawHeaders()), "\r\n", "|") + " " + string(ctx.Request.Body()))
		}),
		ConnState:                     IdleConnState,
		Logger:                        quietLogger{},
		DisableHeaderNamesNormalizing: true,
	}
	il := newIdleListener(ln, ListenOptions{}, 10*time.Millisecond)
	go func() { _ = srv.Serve(il) }()
	t.Cleanup(func() { _ = il.Shutdown(context.Background()) })

	for _, tc := range []struct {
		name, in string
		want     []string // bodies, then "400" for a refused request
	}{
		{"odd Host behind a plain one",
			"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: localhost: 2525\r\n\r\n",
			[]string{"GET /a [x] Host: x|| ", "GET /b [localhost: 2525] Host: localhost: 2525|| "}},
		{"behind a body",
			"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET  /b  HTTP/1.1\r\nHost:\r\n\r\nPOST /c HTTP/1.1\r\nHost: a b\r\ncontent-length: 2\r\n\r\nxyGET /d HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
			[]string{"POST /a [x] Host: x|Content-Length: 3|| abc", "GET /b [] Host: || ", "POST /c [a b] Host: a b|content-length: 2|| xy",
				"GET /d [x] Host: x|Host: y|| "}},
		{"behind a body in two writes",
			"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc\x00defghijGET /b HTTP/1.1\r\nHost: a b\r\n\r\n\x00GET /c HTTP/1.1\r\nHost: a:b:c\r\n\r\n",
			[]string{"POST /a [x] Host: x|Content-Length: 10|| abcdefghij", "GET /b [a b] Host: a b|| ", "GET /c [a:b:c] Host: a:b:c|| "}},
		{"odd Host alone", "GET /b HTTP/1.1\r\nHost: a b\r\n\r\n", []string{"GET /b [a b] Host: a b|| "}},
		{"gzip, chunked",
			"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n",
			[]string{"POST /a [x] Host: x|Transfer-Encoding: gzip, chunked|| xyz"}},
		{"gzip then chunked",
			"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n",
			[]string{"POST /a [x] Host: x|Transfer-Encoding: gzip|Transfer-Encoding: chunked|| xyz"}},
		{"chunked then gzip", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n3\r\nxyz\r\n0\r\n\r\n", []string{"400"}},
		{"behind a chunked body",
			"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\nA;n=v\r\n0123456789\r\n0\r\n\r\nGET /b HTTP/1.1\r\nHost: localhost: 2525\r\n\r\n",
			[]string{"POST /a [x] Host: x|Transfer-Encoding: chunked|| xyz0123456789", "GET /b [localhost: 2525] Host: localhost: 2525|| "}},
		{"behind chunks and trailers in pieces",
			"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n1\x00\r\nx\r\n1\r\ny\x00\r\n0\r\nX-T: 1\x00\r\n\r\nGET  /b HTTP/1.1\r\nHost: a b\r\n\r\nGET /c HTTP/1.1\nHost: x\n\n",
			[]string{"POST /a [x] Host: x|Transfer-Encoding: gzip, chunked|| xy", "GET /b [a b] Host: a b|| ", "400"}},
		{"bare LF behind a request",
			"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\nHost: x\n\n",
			[]string{"GET /a [x] Host: x|| ", "400"}},
	} {
		c, err := net.Dial("tcp", il.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		for i, part := range strings.Split(tc.in, "\x00") { // written apart (whether read apart or not)
			if i > 0 {
				time.Sleep(20 * time.Millisecond)
			}
			if _, err := io.WriteString(c, part); err != nil {
				t.Fatal(err)
			}
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		r := bufio.NewReader(c)
		for i, want := range tc.want {
			var resp fasthttp.Response
			if err := resp.Read(r); err != nil {
				t.Errorf("%s: answer %d: %v", tc.name, i, err)
				break
			}
			got := string(resp.Body())
			if resp.StatusCode() != 200 {
				got = strconv.Itoa(resp.StatusCode())
			}
			if got != want {
				t.Errorf("%s: answer %d: %q, want %q", tc.name, i, got, want)
			}
		}
		_ = c.Close()
	}
}

// serveTest serves il with srv until the test ends, then shuts il down and waits for Serve to
// return.
func serveTest(t *testing.T, srv *fasthttp.Server, il *IdleListener) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(il)
	}()
	t.Cleanup(func() {
		_ = il.Shutdown(context.Background())
		<-done
	})
}

// dialTest connects to a test server at addr, over TLS (any certificate) when useTLS.
func dialTest(t *testing.T, addr string, useTLS bool) net.Conn {
	t.Helper()
	var c net.Conn
	var err error
	if useTLS {
		c, err = tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // a test against its own server
	} else {
		c, err = net.Dial("tcp", addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBurstOfConnectionsEndsWithACollection checks that the memory a burst of connections kept
// goes back to the system once it ends, and that connections opened and closed steadily, or a
// small burst, do not ask for it.
func TestBurstOfConnectionsEndsWithACollection(t *testing.T) {
	calls := 0
	defer func(f func()) { releaseSoon = f }(releaseSoon)
	releaseSoon = func() { calls++ }
	burst := int(collectAfter / connBytes)
	for _, tt := range []struct {
		name  string
		steps []int // connections opened (> 0) or closed (< 0), in turn
		want  int
	}{
		{"burst", []int{burst + 100, -(burst + 100)}, 1},
		{"two bursts", []int{burst, -burst, burst, -burst}, 2},
		{"small burst", []int{burst - 1, -(burst - 1)}, 0},
		{"steady", append([]int{50}, slices.Repeat([]int{1, -1}, 5*burst)...), 0},
		{"burst not yet half closed", []int{2 * burst, -(burst - 1)}, 0},
		// Half closed: memory released; once the rest closes, again.
		{"burst closed in two halves", []int{2 * burst, -(burst - 1), -(burst + 1)}, 2},
	} {
		openConns.Store(0)
		peakConns.Store(0)
		calls = 0
		for _, n := range tt.steps {
			for range max(n, -n) {
				if n > 0 {
					connOpened()
				} else {
					connClosed()
				}
			}
		}
		if calls != tt.want {
			t.Errorf("%s: memory released %d times, want %d", tt.name, calls, tt.want)
		}
	}
	openConns.Store(0)
	peakConns.Store(0)
}
