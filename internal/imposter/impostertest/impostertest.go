// Package impostertest holds what the tests of the imposter core and of its protocol servers
// share: imposter definitions from JSON, bench/'s requests, starting an imposter for a test. It
// does not import the core, so the core's own tests can use it.
package impostertest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
)

// SimpleStub is the bench/ "simple stub" imposter.
const SimpleStub = `{"protocol":"http","port":4545,"stubs":[
	{"predicates":[{"equals":{"method":"GET","path":"/hello"}}],"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"text/plain"},"body":"Hello, World!"}}]}]}`

// SimpleRequest is the request bench/ sends the simple stub.
const SimpleRequest = "GET /hello HTTP/1.1\r\nHost: 127.0.0.1:4545\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n"

// Def parses an imposter definition from JSON, scripts allowed.
func Def(tb testing.TB, imposterJSON string) *config.Imposter {
	tb.Helper()
	v, err := config.ParseJSON([]byte(imposterJSON))
	if err != nil {
		tb.Fatal(err)
	}
	def, errs := config.ParseImposter(v, config.ParseOptions{AllowInjection: true})
	if len(errs) > 0 {
		tb.Fatalf("parse %s: %v", imposterJSON, errs[0])
	}
	return def
}

// Imposter is what Start needs of an imposter.
type Imposter interface {
	Start() error
	Stop(ctx context.Context)
}

// Start starts im and stops it when the test ends.
func Start(tb testing.TB, im Imposter) {
	tb.Helper()
	if err := im.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		im.Stop(ctx)
	})
}

// StubsJSON renders an http imposter of n stubs; pred gives stub i's predicates (JSON), and
// its response's body is {"index":i}.
func StubsJSON(n int, pred func(i int) string) string {
	var b strings.Builder
	b.WriteString(`{"protocol":"http","port":4545,"stubs":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"predicates":[%s],"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"application/json"},"body":"{\"index\":%d}"}}]}`, pred(i), i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// RawRequest is an http request as a client sends it.
func RawRequest(method, path, contentType, body string) string {
	s := method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:4545\r\nUser-Agent: bench\r\n"
	if contentType != "" {
		s += "Content-Type: " + contentType + "\r\n"
	}
	if body != "" || method == "POST" {
		s += fmt.Sprintf("Content-Length: %d\r\n", len(body))
	}
	return s + "\r\n" + body
}

// RequestCtx is a request context holding raw, parsed as the http server parses what it reads
// from a connection (header names as sent), from 127.0.0.1:50000.
func RequestCtx(tb testing.TB, raw string) *fasthttp.RequestCtx {
	tb.Helper()
	var req fasthttp.Request
	req.Header.DisableNormalizing()
	if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		tb.Fatal(err)
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}, nil)
	return ctx
}

// Origin serves handler on a free loopback port until the test ends and returns its address
// (host:port): a proxy's origin.
func Origin(tb testing.TB, handler fasthttp.RequestHandler) string {
	tb.Helper()
	srv := &fasthttp.Server{Handler: handler}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	tb.Cleanup(func() { _ = srv.Shutdown() })
	return ln.Addr().String()
}
