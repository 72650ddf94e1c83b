package imposter

import (
	"log/slog"
	"net"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
)

// BenchmarkHTTPSimpleStub serves the bench/ "simple stub" request through the http handler:
// request view, match, response writing.
func BenchmarkHTTPSimpleStub(b *testing.B) {
	v, err := config.ParseJSON([]byte(`{"protocol":"http","port":4545,"stubs":[
		{"predicates":[{"equals":{"method":"GET","path":"/hello"}}],"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"text/plain"},"body":"Hello, World!"}}]}]}`))
	if err != nil {
		b.Fatal(err)
	}
	def, errs := config.ParseImposter(v, config.ParseOptions{})
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	im, err := New(def, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	h := newHTTPServer(im).(*httpServer)
	var req fasthttp.Request
	req.Header.DisableNormalizing()
	req.SetRequestURI("/hello")
	req.Header.SetHost("127.0.0.1:4545")
	req.Header.Set("User-Agent", "bench")
	req.Header.Set("Accept", "*/*")
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}
	var ctx fasthttp.RequestCtx
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx.Init(&req, addr, nil)
		h.handle(&ctx)
		if ctx.Response.StatusCode() != 200 {
			b.Fatalf("status %d", ctx.Response.StatusCode())
		}
	}
}
