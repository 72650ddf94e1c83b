package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// misbehavingOrigin reads one request on each connection and runs serve on it; closed receives
// once for every connection whose other end (mockd) hung up while serve waited on it.
func misbehavingOrigin(t *testing.T, serve func(c net.Conn)) (addr string, closed chan struct{}) {
	t.Helper()
	closed = make(chan struct{}, 100)
	addr = serveLoopback(t, func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		serve(c)
		closed <- struct{}{}
	})
	return addr, closed
}

// silent answers nothing: it returns when the peer closes the connection (or after 10 minutes).
func silent(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Minute))
	_, _ = io.Copy(io.Discard, c)
}

// A proxy whose origin never answers holds the request only while someone waits for it: a
// client that hangs up, or a DELETE of the imposter once its drain time is over, ends the
// exchange with the origin. Before, the request (its goroutine, both connections) stayed for
// the 5-minute proxy timeout, after the DELETE too. The client hangs up (or the DELETE is sent)
// once the origin holds the request: earlier, mockd may rightly never reach the origin (the test
// failed once under load that way, waiting for an origin connection that was never made).
func TestProxyToASilentOriginIsCancelled(t *testing.T) {
	s := start(t, "--drain-timeout", "1s")
	arrived := make(chan struct{}, 100)
	origin, closed := misbehavingOrigin(t, func(c net.Conn) {
		arrived <- struct{}{}
		silent(c)
	})
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"proxy":{"to":"http://%s"}}]}]}`, port, origin)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	proxied := func(path string) net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		waitChan(t, arrived, "the request to reach the origin")
		return c
	}

	_ = proxied("/hang-up").Close()
	waitChan(t, closed, "the client hung up: mockd still holds its connection to the silent origin")

	c := proxied("/deleted")
	if status, _, body := do(t, "DELETE", s.Admin+"/imposters/"+strconv.Itoa(port), ""); status != 200 {
		t.Fatalf("DELETE: %d %s", status, body)
	}
	waitChan(t, closed, "the imposter was deleted: mockd still holds its connection to the silent origin")
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Minute))
	if b, err := io.ReadAll(c); err != nil || len(b) != 0 {
		t.Errorf("the client of the deleted imposter got %q, %v; want its connection closed", b, err)
	}
}

// waitChan waits for ch, failing with what after two minutes (far below the proxies' own bounds:
// 5 minutes for http, --idle-timeout for tcp, set higher where it matters).
func waitChan(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(2 * time.Minute):
		t.Fatal(what)
	}
}

// A tcp proxy's exchange with an origin that never answers ends when its client hangs up or its
// imposter is deleted, as an http proxy's does. Before, both connections and the goroutine
// stayed until --idle-timeout (two minutes by default) for nobody.
func TestTCPProxyToASilentOriginIsCancelled(t *testing.T) {
	s := start(t, "--idle-timeout", "10m")
	arrived, closed := make(chan struct{}, 100), make(chan struct{}, 100)
	origin := serveLoopback(t, func(c net.Conn) {
		if _, err := c.Read(make([]byte, 4096)); err != nil {
			return
		}
		arrived <- struct{}{}
		silent(c)
		closed <- struct{}{}
	})
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"tcp","port":%d,"stubs":[{"responses":[{"proxy":{"to":"tcp://%s"}}]}]}`, port, origin)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	proxied := func() net.Conn {
		t.Helper()
		c := dialTCP(t, port)
		if _, err := io.WriteString(c, "hello"); err != nil {
			t.Fatal(err)
		}
		waitChan(t, arrived, "the request to reach the origin")
		return c
	}

	_ = proxied().Close()
	waitChan(t, closed, "the client hung up: mockd still holds its connection to the silent origin")

	// a client that sends more while it waits is still there: the exchange goes on
	c := proxied()
	if _, err := io.WriteString(c, "more"); err != nil {
		t.Fatal(err)
	}
	if status, _, body := do(t, "GET", s.Admin+"/imposters/"+strconv.Itoa(port), ""); status != 200 {
		t.Fatalf("GET imposter: %d %s", status, body)
	}
	select {
	case <-closed:
		t.Fatal("the origin's connection was closed while its client waited")
	default:
	}

	if status, _, body := do(t, "DELETE", s.Admin+"/imposters/"+strconv.Itoa(port), ""); status != 200 {
		t.Fatalf("DELETE: %d %s", status, body)
	}
	waitChan(t, closed, "the imposter was deleted: mockd still holds its connection to the silent origin")
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Minute))
	// closed with "more" unread: the kernel resets the connection rather than ending it
	if b, err := io.ReadAll(c); (err != nil && !errors.Is(err, syscall.ECONNRESET)) || len(b) != 0 {
		t.Errorf("the client of the deleted imposter got %q, %v; want its connection closed", b, err)
	}
}

// An origin's answer is bounded by --max-body: one announcing 100 GB (which made mockd die of
// running out of memory) or streaming a chunked body without end gets the request a 500
// `invalid proxy`, and mockd and its other imposters go on.
func TestProxyAnswerIsBounded(t *testing.T) {
	s := start(t, "--max-body", "1MiB")
	huge, _ := misbehavingOrigin(t, func(c net.Conn) {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100000000000\r\n\r\nabc")
		silent(c)
	})
	endless, _ := misbehavingOrigin(t, func(c net.Conn) {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
		chunk := "10000\r\n" + strings.Repeat("x", 0x10000) + "\r\n"
		for i := 0; i < 1000; i++ { // 64 MiB at most
			if _, err := io.WriteString(c, chunk); err != nil {
				return
			}
		}
	})
	for _, origin := range []string{huge, endless} {
		port := listenFree(t)
		imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[{"responses":[{"proxy":{"to":"http://%s"}}]}]}`, port, origin)
		if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
			t.Fatalf("create: %d %s", status, body)
		}
		status, _, body := do(t, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/", "")
		if status != 500 || !strings.Contains(body, "invalid proxy") || !strings.Contains(body, "larger than 1048576 bytes") {
			t.Errorf("proxy to %s: %d %.300s, want 500 invalid proxy naming the limit", origin, status, body)
		}
	}
	if status, _, body := do(t, "GET", s.Admin+"/imposters", ""); status != 200 {
		t.Fatalf("admin after the proxies: %d %s", status, body)
	}
	if rss := peakRSS(t, s.cmd.Process.Pid); rss > 512<<20 {
		t.Errorf("peak RSS %d MiB, want the answers bounded at 1 MiB", rss>>20)
	}
}

// A tcp proxy whose endOfRequestResolver never finds the end of the origin's endless answer
// keeps at most --max-body of it: the client gets an error instead of mockd growing until the
// idle timeout (two minutes of loopback streaming is gigabytes).
func TestTCPProxyAnswerIsBounded(t *testing.T) {
	s := start(t, "--allowInjection", "--max-body", "1MiB")
	origin := serveLoopback(t, func(c net.Conn) {
		if _, err := c.Read(make([]byte, 4096)); err != nil {
			return
		}
		chunk := strings.Repeat("x", 0x10000)
		for i := 0; i < 4096; i++ { // 256 MiB at most
			if _, err := io.WriteString(c, chunk); err != nil {
				return
			}
		}
	})
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"tcp","port":%d,
		"endOfRequestResolver":{"inject":"function (data) { return data.toString().indexOf('END') >= 0; }"},
		"stubs":[{"responses":[{"proxy":{"to":"tcp://%s"}}]}]}`, port, origin)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	c := dialTCP(t, port)
	if _, err := io.WriteString(c, "hello END"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	var b []byte
	buf := make([]byte, 4096)
	for len(b) < 4096 && !strings.Contains(string(b), "bytes") {
		n, err := c.Read(buf)
		b = append(b, buf[:n]...)
		if err != nil {
			break
		}
	}
	if !strings.Contains(string(b), "larger than 1048576 bytes") {
		t.Errorf("the client got %.300q, want the error naming the limit", b)
	}
	if rss := peakRSS(t, s.cmd.Process.Pid); rss > 512<<20 {
		t.Errorf("peak RSS %d MiB, want the answer bounded at 1 MiB", rss>>20)
	}
}

// A client that stops in the middle of its TLS handshake on an https imposter is closed at
// --header-timeout, as a slowloris request is; before, its connection (and two goroutines)
// stayed for as long as the client kept it open, so such clients could use up the fds.
func TestHTTPSHandshakeStalledMidway(t *testing.T) {
	s := start(t, "--header-timeout", "1s")
	port := listenFree(t)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", fmt.Sprintf(`{"protocol":"https","port":%d}`, port)); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")); err != nil { // a ClientHello's first bytes
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	if b, err := io.ReadAll(c); err != nil {
		t.Errorf("the stalled handshake's connection is still open: %q, %v", b, err)
	}
}
