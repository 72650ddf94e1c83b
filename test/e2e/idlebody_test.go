package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestIdleConnectionsHoldNoLargeBodies: keep-alive connections that each sent a 2 MiB body (to
// a stub answering "ok", and to a template echoing it back) and then stay open and idle do not
// hold those bodies: once they have been idle for a second or two, mockd's heap is back to far
// less than they add up to. Each connection kept the buffers of its largest request and answer
// for as long as it stayed open (25 + 25 connections here: 150 MiB; 10,000 connections that
// sent 1 MiB: 10-23 GB).
func TestIdleConnectionsHoldNoLargeBodies(t *testing.T) {
	s := start(t)
	port := listenFree(t)
	imp := fmt.Sprintf(`{"protocol":"http","port":%d,"stubs":[
		{"predicates":[{"equals":{"path":"/upload"}}],"responses":[{"is":{"body":"ok"}}]},
		{"predicates":[{"equals":{"path":"/echo"}}],"responses":[{"is":{"body":"{{{request.body}}}","template":true}}]}]}`, port)
	if status, _, body := do(t, "POST", s.Admin+"/imposters", imp); status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	const conns, size = 25, 2 << 20
	body := strings.Repeat("a", size)
	before := heapUsed(t, s)
	var open []net.Conn
	defer func() {
		for _, c := range open {
			_ = c.Close()
		}
	}()
	for _, path := range []string{"/upload", "/echo"} {
		want := "ok"
		if path == "/echo" {
			want = body
		}
		for range conns {
			c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				t.Fatal(err)
			}
			open = append(open, c)
			if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("POST %s: %v", path, err)
			}
			got, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || string(got) != want {
				t.Fatalf("POST %s: %d, %d bytes (%v)", path, resp.StatusCode, len(got), err)
			}
		}
	}
	// The connections stay open and idle. What they sent and got adds up to 150 MiB, which each
	// kept: mockd's heap stayed grown by more than that. Now, after one to two seconds idle, the
	// buffers are let go of and the collector runs (150 MiB let go of at once): the heap is back
	// to a few MiB over what it was. The wait is for that to happen at all, however slow the
	// machine, not a bound on how long it takes.
	var grown int64
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if grown = heapUsed(t, s) - before; grown < 32<<20 || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("heap grew by %.1f MiB", float64(grown)/(1<<20))
	if grown >= 32<<20 {
		t.Errorf("%d connections idle for a minute that had each sent (and half of them got back) %d bytes: mockd's heap is still %.1f MiB over what it was", 2*conns, size, float64(grown)/(1<<20))
	}
}

// heapUsed returns mockd's heap in use (GET /config: process.heapUsed), in bytes.
func heapUsed(t *testing.T, s *server) int64 {
	t.Helper()
	status, _, body := do(t, "GET", s.Admin+"/config", "")
	if status != 200 {
		t.Fatalf("GET /config: %d %s", status, body)
	}
	p, ok := jsonBody(t, body)["process"].(map[string]any)
	if !ok {
		t.Fatalf("GET /config has no process: %s", body)
	}
	h, ok := p["heapUsed"].(float64)
	if !ok {
		t.Fatalf("GET /config has no process.heapUsed: %s", body)
	}
	return int64(h)
}
