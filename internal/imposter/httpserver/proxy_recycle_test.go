package httpserver

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
)

// TestProxyAlwaysRecycledRequests: a proxyAlways request whose answer is appended to a stub
// with known predicates keeps none of its strings, and its memory serves the next request
// (Recyclable); the requests that make a stub's predicates keep theirs. Requests of several
// keys and lengths, each several times, through a listening imposter: every recorded stub's
// predicates still name the path and query its answers were proxied for (a recycled request
// whose strings a stub kept would see them overwritten by the requests after it).
func TestProxyAlwaysRecycledRequests(t *testing.T) {
	addr := echoOrigin(t)
	im := startBench(t, `{"protocol":"http","port":4545,"stubs":[{"responses":[{"proxy":{"to":"http://`+addr+
		`","mode":"proxyAlways","predicateGenerators":[{"matches":{"path":true,"query":true}}]}}]}]}`)
	c := &fasthttp.HostClient{Addr: "127.0.0.1:" + strconv.Itoa(im.Port()), MaxConns: 1}
	const keys, rounds = 12, 4
	target := func(k int) string {
		if k%2 == 0 {
			return "/items/" + strconv.Itoa(k) + "?q=" + strings.Repeat(string(rune('a'+k)), 10+3*k)
		}
		return "/other/" + strings.Repeat(string(rune('A'+k)), 40-2*k) + "?q=" + strconv.Itoa(k)
	}
	for range rounds {
		for k := range keys {
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			req.SetRequestURI("http://" + c.Addr + target(k))
			if err := c.Do(req, resp); err != nil || resp.StatusCode() != 200 || string(resp.Body()) != target(k) {
				t.Fatalf("%s: %v %d %q", target(k), err, resp.StatusCode(), resp.Body())
			}
			fasthttp.ReleaseRequest(req)
			fasthttp.ReleaseResponse(resp)
		}
	}
	defs := im.StubDefinitions()
	if len(defs) != 1+keys {
		t.Fatalf("%d stubs, want the proxy's and %d recorded", len(defs), keys)
	}
	for i, def := range defs[1:] {
		list, _ := def.Get("responses")
		responses, _ := list.([]any)
		if len(responses) != rounds {
			t.Errorf("stub %d has %d responses, want %d", i+1, len(responses), rounds)
			continue
		}
		body, _ := config.AsObject(config.AsObject(responses[0]).Members[0].Value).Get("body")
		want, _ := body.(string)
		path, query, _ := strings.Cut(want, "?")
		q := strings.TrimPrefix(query, "q=")
		preds, _ := def.Get("predicates")
		text := string(config.MarshalJSON(preds, 0))
		if !strings.Contains(text, `"path":"`+path+`"`) || !strings.Contains(text, `"q":"`+q+`"`) {
			t.Errorf("stub %d, recorded for %s, has predicates %s", i+1, want, text)
		}
		for j, r := range responses {
			if b, _ := config.AsObject(config.AsObject(r).Members[0].Value).Get("body"); b != want {
				t.Errorf("stub %d (%s): response %d is %v", i+1, want, j+1, b)
			}
		}
	}
}

// echoOrigin answers every request (a head without a body) with its target as the body, on a
// loopback port, a goroutine a connection (not a fasthttp.Server: see rawOrigin).
func echoOrigin(t *testing.T) string {
	t.Helper()
	return loopbackOrigin(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		target := ""
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if target == "" {
				if f := strings.Fields(line); len(f) == 3 {
					target = f[1]
				}
				continue
			}
			if line == "\r\n" {
				answer := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + strconv.Itoa(len(target)) + "\r\n\r\n" + target
				if _, err := c.Write([]byte(answer)); err != nil {
					return
				}
				target = ""
			}
		}
	})
}

// loopbackOrigin serves each connection to a loopback port with serve, on a goroutine of its
// own (not a fasthttp.Server, whose worker pool's goroutines may outlive the test:
// TestStoppedServerLeavesNoPoolGoroutine looks for any), and returns its address; the test's
// end closes the port and every connection, and waits for their goroutines.
func loopbackOrigin(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				serve(c)
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}
