package proxy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
)

// TestHopsOf: a request that arrives on a connection a proxy of this process has open counts
// the hops Enter gave it, under its IPv4 address whether mapped or not, until Leave.
func TestHopsOf(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	served := net.TCPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:45000"))
	Serving(served.Port, true)
	defer Serving(served.Port, false)
	tcp := func(s string, remote *net.TCPAddr) net.Conn {
		return addrConn{Conn: a, local: net.TCPAddrFromAddrPort(netip.MustParseAddrPort(s)), remote: remote}
	}
	h1 := Enter(tcp("127.0.0.1:40000", served), 3)
	h2 := Enter(tcp("[::ffff:127.0.0.1]:40001", served), 5)
	h3 := Enter(a, 7) // not a TCP connection: no entry
	// A connection to a port no imposter of this process listens on cannot bring the request
	// back: no entry.
	h4 := Enter(tcp("127.0.0.1:40003", net.TCPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:45001"))), 9)
	tests := []struct {
		client string
		want   int
	}{
		{"127.0.0.1:40000", 3},
		{"[::ffff:127.0.0.1]:40000", 3},
		{"127.0.0.1:40001", 5},
		{"127.0.0.1:40002", 0},
		{"127.0.0.1:40003", 0},
		{"[::1]:40000", 0},
	}
	for _, tt := range tests {
		if got := HopsOf(netip.MustParseAddrPort(tt.client)); got != tt.want {
			t.Errorf("HopsOf(%s) = %d, want %d", tt.client, got, tt.want)
		}
	}
	if got := HopsOf(netip.AddrPort{}); got != 0 {
		t.Errorf("HopsOf(zero) = %d, want 0", got)
	}
	h1.Leave()
	h2.Leave()
	h3.Leave()
	h4.Leave()
	if got := HopsOf(netip.MustParseAddrPort("127.0.0.1:40000")); got != 0 {
		t.Errorf("HopsOf after Leave = %d, want 0", got)
	}
}

type addrConn struct {
	net.Conn
	local  net.Addr
	remote *net.TCPAddr
}

func (c addrConn) LocalAddr() net.Addr { return c.local }

func (c addrConn) RemoteAddr() net.Addr {
	if c.remote == nil {
		return c.Conn.RemoteAddr()
	}
	return c.remote
}

// TestServing: the ports imposters listen on, counted (two imposters may share a port on
// different hosts), out of range ones ignored.
func TestServing(t *testing.T) {
	const port = 45002
	Serving(port, true)
	Serving(port, true)
	Serving(port, false)
	if !served(port) {
		t.Fatal("a port one of two imposters still listens on is not served")
	}
	Serving(port, false)
	if served(port) {
		t.Fatal("a port no imposter listens on is served")
	}
	for _, p := range []int{0, -1, 65536, 1 << 20} {
		Serving(p, true)
		if served(p) {
			t.Errorf("port %d served", p)
		}
	}
}

// TestForwardCountsHops: the origin of a proxied request sees it arrive on a connection
// whose hops are the request's and one, and a request past MaxHops is not forwarded.
func TestForwardCountsHops(t *testing.T) {
	seen := make(chan int, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveRaw(t, ln, func(c net.Conn) string {
		seen <- HopsOfAddr(c.RemoteAddr())
		return "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
	})
	p, cerr := Compile(config.NewObject("to", "http://"+ln.Addr().String()), 0)
	if cerr != nil {
		t.Fatal(cerr)
	}
	// An origin no imposter of this process is: nothing is recorded.
	if _, err := p.Forward(context.Background(), &Request{Method: "GET", URI: []byte("/"), Hops: 3}); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != 0 {
		t.Errorf("a request to an origin no imposter listens on arrived with %d hops, want 0", got)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	Serving(port, true)
	defer Serving(port, false)
	for _, hops := range []int{0, 4, MaxHops - 1} {
		if _, err := p.Forward(context.Background(), &Request{Method: "GET", URI: []byte("/"), Hops: hops}); err != nil {
			t.Fatalf("hops %d: %v", hops, err)
		}
		if got := <-seen; got != hops+1 {
			t.Errorf("request of %d hops arrived with %d, want %d", hops, got, hops+1)
		}
	}
	_, err = p.Forward(context.Background(), &Request{Method: "GET", URI: []byte("/"), Hops: MaxHops})
	var ce *config.Error
	if !errors.As(err, &ce) || !strings.HasPrefix(ce.Message, "proxy loop:") {
		t.Errorf("a request of MaxHops hops: err %v, want the proxy loop error", err)
	}
	select {
	case <-seen:
		t.Error("a request of MaxHops hops was forwarded")
	default:
	}
}

// TestForwardOpensAConnectionPerRequestInFlight: as node's agent does, a proxy opens as many
// connections to its origin as it has requests in flight; fasthttp's default of 512 failed
// the 513th at once ("no free connections available to host"). The origin answers once all
// have arrived (or after a minute).
func TestForwardOpensAConnectionPerRequestInFlight(t *testing.T) {
	const n = 600
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveRaw(t, ln, func(net.Conn) string {
		mu.Lock()
		if arrived++; arrived == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(time.Minute):
		}
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	})
	p, cerr := Compile(config.NewObject("to", "http://"+ln.Addr().String()), 0)
	if cerr != nil {
		t.Fatal(cerr)
	}
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := p.Forward(context.Background(), &Request{Method: "GET", URI: []byte("/")})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	failed := 0
	var first error
	for err := range errs {
		if err != nil {
			if failed++; first == nil {
				first = err
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d concurrent requests failed, the first with %v", failed, n, first)
	}
}

// TestForwardToIPv6Origin: a proxy reaches an origin on an IPv6 address, as a tcp proxy does;
// fasthttp's dialer took IPv4 addresses alone ("couldn't find dns entries for the given
// domain: try using dual-stack dialing").
func TestForwardToIPv6Origin(t *testing.T) {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	serveRaw(t, ln, func(net.Conn) string { return "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nsix" })
	p, cerr := Compile(config.NewObject("to", "http://"+ln.Addr().String()), 0)
	if cerr != nil {
		t.Fatal(cerr)
	}
	got, err := p.Forward(context.Background(), &Request{Method: "GET", URI: []byte("/")})
	if err != nil {
		t.Fatalf("Forward to %s: %v", ln.Addr(), err)
	}
	if body, _ := got.Get("body"); body != "six" {
		t.Errorf("body %v, want six", body)
	}
}
