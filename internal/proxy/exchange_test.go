package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

// recordingOrigin answers every request on 127.0.0.1 with an empty 200 and keeps each
// request's head (request line and headers, as they arrived) and body; closeAfter > 0 closes
// each connection after that many answers, without reading what comes next (an origin whose
// idle timeout ends a kept-alive connection). It returns its address, the requests so far and
// the connections it accepted so far.
func recordingOrigin(t *testing.T, closeAfter int) (addr string, requests func() []string, conns func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var got []string
	accepted := 0
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted++
			mu.Unlock()
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for n := 0; closeAfter == 0 || n < closeAfter; n++ {
					var head strings.Builder
					length := 0
					for {
						line, err := br.ReadString('\n')
						if err != nil {
							return
						}
						head.WriteString(line)
						if line == "\r\n" {
							break
						}
						if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "content-length") {
							for _, d := range strings.TrimSpace(value) {
								length = length*10 + int(d-'0')
							}
						}
					}
					body := make([]byte, length)
					if _, err := io.ReadFull(br, body); err != nil {
						return
					}
					mu.Lock()
					got = append(got, head.String()+string(body))
					mu.Unlock()
					if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(),
		func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), got...) },
		func() int { mu.Lock(); defer mu.Unlock(); return accepted }
}

// TestForwardRequestTarget: the origin gets the request target as fasthttp's parse of the
// proxy's URL made it (the request line's path as sent, a query when it is not empty, no
// fragment), whether Forward writes it as it is (a path) or lets HostClient.Do parse it (any
// other), and the headers and body as listed.
func TestForwardRequestTarget(t *testing.T) {
	addr, requests, _ := recordingOrigin(t, 0)
	p, cerr := Compile(config.NewObject("to", "http://"+addr), 0)
	if cerr != nil {
		t.Fatal(cerr)
	}
	for _, tc := range []struct{ method, uri, body, want string }{
		{"GET", "/orders/7", "", "GET /orders/7 HTTP/1.1\r\nhost: " + addr + "\r\n\r\n"},
		{"GET", "/a?b=1&c=%41", "", "GET /a?b=1&c=%41 HTTP/1.1\r\nhost: " + addr + "\r\n\r\n"},
		{"GET", "/a?", "", "GET /a HTTP/1.1\r\nhost: " + addr + "\r\n\r\n"},
		{"GET", "/a??", "", "GET /a?? HTTP/1.1\r\nhost: " + addr + "\r\n\r\n"},
		{"GET", "/a?b?", "", "GET /a?b? HTTP/1.1\r\nhost: " + addr + "\r\n\r\n"},
		{"GET", "/", "", "GET / HTTP/1.1\r\nhost: " + addr + "\r\n\r\n"},
		{"GET", "//x/../y/./%2e%2E/z", "", "GET //x/../y/./%2e%2E/z HTTP/1.1\r\nhost: " + addr + "\r\n\r\n"},
		{"GET", "/p%20q?x=a/b?c://d", "", "GET /p%20q?x=a/b?c://d HTTP/1.1\r\nhost: " + addr + "\r\n\r\n"},
		{"GET", "/caf\xc3\xa9", "", "GET /caf\xc3\xa9 HTTP/1.1\r\nhost: " + addr + "\r\n\r\n"},
		{"GET", "/f#frag", "", "GET /f HTTP/1.1\r\nhost: " + addr + "\r\n\r\n"},
		{"GET", "/f?q=1#frag?x", "", "GET /f?q=1 HTTP/1.1\r\nhost: " + addr + "\r\n\r\n"},
		{"GET", "?q=1", "", "GET /?q=1 HTTP/1.1\r\nhost: " + addr + "\r\n\r\n"},
		{"POST", "/orders", "{\"a\":1}", "POST /orders HTTP/1.1\r\nX-A: 1\r\nhost: " + addr + "\r\ncontent-length: 7\r\n\r\n{\"a\":1}"},
		{"POST", "/empty", "", "POST /empty HTTP/1.1\r\nX-A: 1\r\nhost: " + addr + "\r\ncontent-length: 0\r\n\r\n"},
		{"DELETE", "/d", "", "DELETE /d HTTP/1.1\r\nhost: " + addr + "\r\n\r\n"},
	} {
		r := &Request{Method: tc.method, URI: []byte(tc.uri), Body: []byte(tc.body)}
		if tc.method == "POST" {
			r.Headers = []request.KV{{Name: "X-A", Value: "1"}, {Name: "Host", Value: "client"}, {Name: "content-length", Value: "x"}}
		}
		before := len(requests())
		if _, err := p.Forward(context.Background(), r); err != nil {
			t.Fatalf("%s %q: %v", tc.method, tc.uri, err)
		}
		if got := requests(); len(got) != before+1 || got[before] != tc.want {
			t.Errorf("%s %q: the origin got %q, want %q", tc.method, tc.uri, got[before:], tc.want)
		}
	}
}

// TestForwardTriesAnotherConnection: an origin that closes each connection after one answer
// (its kept-alive connection is gone when the next request is sent on it) still answers an
// idempotent request, which is sent again on a new connection, as HostClient.Do does. A POST or
// DELETE is not sent again: it goes on another connection when the origin's close has come
// before the request (peerClosed, as Mountebank's agent drops the socket; see
// TestForwardSkipsClosedConnection), and fails as when the origin hangs up when the close comes
// after it was sent; either way the next request goes on a new connection.
func TestForwardTriesAnotherConnection(t *testing.T) {
	for _, method := range []string{"GET", "HEAD", "PUT", "POST", "DELETE"} {
		t.Run(method, func(t *testing.T) {
			addr, requests, conns := recordingOrigin(t, 1)
			p, cerr := Compile(config.NewObject("to", "http://"+addr), 0)
			if cerr != nil {
				t.Fatal(cerr)
			}
			failed := true // (the first request goes on a new connection)
			for i := range 3 {
				_, err := p.Forward(context.Background(), &Request{Method: method, URI: []byte("/again")})
				switch {
				case err == nil:
					failed = false
				case failed || retried(method):
					// a failure is followed by a request on a new connection: answered
					t.Fatalf("request %d: %v", i+1, err)
				default:
					// the origin's close had not come when the request was sent (it may have, as
					// the request after a failure's, on a new connection, shows)
					if want := `Unable to connect to "http://` + addr + `"`; err.Error() != want {
						t.Fatalf("request %d: %v, want %s", i+1, err, want)
					}
					failed = true
				}
			}
			if n, c := len(requests()), conns(); retried(method) && (n != 3 || c != 3) {
				t.Errorf("%d requests on %d connections, want 3 on 3", n, c)
			}
		})
	}
}

func retried(method string) bool { return method == "GET" || method == "HEAD" || method == "PUT" }

// TestForwardSkipsClosedConnection: a POST or DELETE does not go on a kept-alive connection
// the origin has closed since its answer: the proxy takes another (Mountebank's agent drops
// such a socket when its end comes), so the origin gets every request and answers each; it
// failed every other request with "Unable to connect". The test waits until the pooled
// connection shows the origin's close before each request.
func TestForwardSkipsClosedConnection(t *testing.T) {
	for _, method := range []string{"POST", "DELETE", "PATCH"} {
		t.Run(method, func(t *testing.T) {
			addr, requests, conns := recordingOrigin(t, 1)
			p, cerr := Compile(config.NewObject("to", "http://"+addr), 0)
			if cerr != nil {
				t.Fatal(cerr)
			}
			for i := range 3 {
				if i > 0 {
					waitPooledClosed(t, p.client)
				}
				if _, err := p.Forward(context.Background(), &Request{Method: method, URI: []byte("/again"), Body: []byte("b")}); err != nil {
					t.Fatalf("request %d: %v", i+1, err)
				}
			}
			if n, c := len(requests()), conns(); n != 3 || c != 3 {
				t.Errorf("%d requests on %d connections, want 3 on 3", n, c)
			}
		})
	}
}

// waitPooledClosed waits until the kept-alive connection hc holds shows its origin's close
// (at most 10 s), and gives it back to the pool for the next request.
func waitPooledClosed(t *testing.T, hc *fasthttp.HostClient) {
	t.Helper()
	cc, err := hc.AcquireConn(time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	if cc.LastUseTime().IsZero() {
		t.Fatal("no kept-alive connection in the pool")
	}
	for deadline := time.Now().Add(10 * time.Second); !peerClosed(cc.Conn()); {
		if time.Now().After(deadline) {
			t.Fatal("the origin's close never reached the pooled connection")
		}
		time.Sleep(time.Millisecond)
	}
	hc.ReleaseConn(cc)
}

// TestPeerClosed: a kept-alive connection is open while nothing waits on it, and closed once
// its peer's FIN or a reset has come or it holds bytes no request asked for.
func TestPeerClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, peer := range []string{"idle", "closes", "writes"} {
		t.Run(peer, func(t *testing.T) {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if peerClosed(c) {
				t.Fatal("a fresh connection reads as closed")
			}
			switch peer {
			case "idle":
				if _, err := c.Write([]byte("x")); err != nil { // only the other way
					t.Fatal(err)
				}
				if peerClosed(c) {
					t.Fatal("an idle connection reads as closed")
				}
				return
			case "closes":
				s.Close()
			case "writes":
				if _, err := s.Write([]byte("stray")); err != nil {
					t.Fatal(err)
				}
			}
			for deadline := time.Now().Add(10 * time.Second); !peerClosed(c); {
				if time.Now().After(deadline) {
					t.Fatalf("peer %s: never read as closed", peer)
				}
				time.Sleep(time.Millisecond)
			}
			buf := make([]byte, 8) // it peeked: what came is still there to read
			n, _ := c.Read(buf)
			if peer == "writes" && string(buf[:n]) != "stray" {
				t.Errorf("read %q after the look, want the stray bytes", buf[:n])
			}
		})
	}
}

// FuzzRequestTarget: a target requestTarget calls direct is what fasthttp's parse of the
// proxy's URL (what HostClient.Do sends otherwise) makes of it.
func FuzzRequestTarget(f *testing.F) {
	for _, s := range []string{"/", "/a?", "/a??", "/a?b?", "//x/../y", "/f#x", "?q", "*", "http://h/p", "/a b", "/\x7f", "/caf\xc3\xa9?x=%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		target, direct := requestTarget([]byte(uri))
		if !direct {
			return
		}
		for _, base := range []string{"http://127.0.0.1:8080", "https://[::1]:8443", "http://localhost"} {
			req := fasthttp.AcquireRequest()
			req.SetRequestURI(base + uri)
			req.URI().DisablePathNormalizing = true
			if got := string(req.URI().RequestURI()); got != string(target) {
				t.Errorf("%s + %q: fasthttp sends %q, requestTarget %q", base, uri, got, target)
			}
			fasthttp.ReleaseRequest(req)
		}
	})
}
