package main

import (
	"net"
	"testing"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
)

// TestProxyHandler: every request is forwarded to the origin as it came (method, path, body) and
// answered with the origin's status, headers and body; a bad -proxy-to is refused.
func TestProxyHandler(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	origin := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetStatusCode(201)
		ctx.Response.Header.Set("X-Origin", "yes")
		ctx.SetBodyString(string(ctx.Method()) + " " + string(ctx.RequestURI()) + " " + string(ctx.PostBody()))
	}}
	go func() { _ = origin.Serve(ln) }()
	defer origin.Shutdown()

	h, err := proxyHandler("http://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	front := fasthttputil.NewInmemoryListener()
	s := &fasthttp.Server{Handler: h}
	go func() { _ = s.Serve(front) }()
	defer s.Shutdown()
	c := &fasthttp.Client{Dial: func(string) (net.Conn, error) { return front.Dial() }}

	for i, tc := range []struct{ method, uri, body, want string }{
		{"GET", "/orders/7?x=1", "", "GET /orders/7?x=1 "},
		{"POST", "/upload", "payload", "POST /upload payload"},
	} {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.Header.SetMethod(tc.method)
		req.SetRequestURI("http://ceiling" + tc.uri)
		req.SetBodyString(tc.body)
		if err := c.Do(req, resp); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if resp.StatusCode() != 201 || string(resp.Header.Peek("X-Origin")) != "yes" || string(resp.Body()) != tc.want {
			t.Errorf("%d: got %d %q %q, want 201 yes %q", i, resp.StatusCode(), resp.Header.Peek("X-Origin"), resp.Body(), tc.want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:80", "https://127.0.0.1:1", "::"} {
		if _, err := proxyHandler(bad); err == nil {
			t.Errorf("proxyHandler(%q) accepted", bad)
		}
	}
}
