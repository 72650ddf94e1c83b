package imposter

import (
	"bufio"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/metrics"
)

// simpleStub is the bench/ "simple stub" imposter.
const simpleStub = `{"protocol":"http","port":4545,"stubs":[
	{"predicates":[{"equals":{"method":"GET","path":"/hello"}}],"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"text/plain"},"body":"Hello, World!"}}]}]}`

// newBenchHandler builds an http imposter from JSON without listening and a request context
// holding raw, parsed as the server parses what it reads from a connection.
func newBenchHandler(tb testing.TB, imposterJSON, raw string, withMetrics bool) (*httpServer, *fasthttp.RequestCtx) {
	tb.Helper()
	v, err := config.ParseJSON([]byte(imposterJSON))
	if err != nil {
		tb.Fatal(err)
	}
	def, errs := config.ParseImposter(v, config.ParseOptions{})
	if len(errs) > 0 {
		tb.Fatal(errs)
	}
	opts := Options{Logger: slog.New(slog.DiscardHandler)}
	if withMetrics {
		opts.Metrics = metrics.New()
	}
	im, err := New(def, opts)
	if err != nil {
		tb.Fatal(err)
	}
	h := newHTTPServer(im).(*httpServer)
	var req fasthttp.Request
	req.Header.DisableNormalizing()
	if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		tb.Fatal(err)
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}, nil)
	return h, ctx
}

const simpleRequest = "GET /hello HTTP/1.1\r\nHost: 127.0.0.1:4545\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n"

// serveOnce runs the handler on ctx's request as the server would for a new request.
func serveOnce(tb testing.TB, h *httpServer, ctx *fasthttp.RequestCtx) {
	ctx.Response.Reset()
	h.handle(ctx)
	if ctx.Response.StatusCode() != 200 {
		tb.Fatalf("status %d", ctx.Response.StatusCode())
	}
}

// BenchmarkHTTPSimpleStub serves the bench/ "simple stub" request through the http handler:
// request view, match, response writing.
func BenchmarkHTTPSimpleStub(b *testing.B) {
	for _, withMetrics := range []bool{false, true} {
		name := "metrics=off"
		if withMetrics {
			name = "metrics=on"
		}
		b.Run(name, func(b *testing.B) {
			h, ctx := newBenchHandler(b, simpleStub, simpleRequest, withMetrics)
			b.ReportAllocs()
			for b.Loop() {
				serveOnce(b, h, ctx)
			}
		})
	}
}
