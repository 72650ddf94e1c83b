package imposter

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/metrics"
	"github.com/mockd/mockd/internal/request"
	"github.com/mockd/mockd/internal/script"
)

var timeZero = time.Unix(0, 0)

// simpleStub is the bench/ "simple stub" imposter.
const simpleStub = `{"protocol":"http","port":4545,"stubs":[
	{"predicates":[{"equals":{"method":"GET","path":"/hello"}}],"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"text/plain"},"body":"Hello, World!"}}]}]}`

const simpleRequest = "GET /hello HTTP/1.1\r\nHost: 127.0.0.1:4545\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n"

// testServer serves http requests as httpserver does (which imports this package, so its tests
// cannot use it), through the entry points it uses: Resolve, Build, Recyclable and
// RecordMatch. The answer is written onto a fasthttp context; no socket is involved.
type testServer struct{ im *Imposter }

// newBenchHandler builds an http imposter from JSON without listening and a request context
// holding raw, parsed as the server parses what it reads from a connection.
func newBenchHandler(tb testing.TB, imposterJSON, raw string, withMetrics bool) (*testServer, *fasthttp.RequestCtx) {
	tb.Helper()
	log := slog.New(slog.DiscardHandler)
	opts := Options{Logger: log, Script: script.New(script.Options{Logger: log})}
	if withMetrics {
		opts.Metrics = metrics.New()
	}
	v, err := config.ParseJSON([]byte(imposterJSON))
	if err != nil {
		tb.Fatal(err)
	}
	def, errs := config.ParseImposter(v, config.ParseOptions{AllowInjection: true})
	if len(errs) > 0 {
		tb.Fatal(errs)
	}
	im, err := New(def, opts)
	if err != nil {
		tb.Fatal(err)
	}
	var req fasthttp.Request
	req.Header.DisableNormalizing()
	if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		tb.Fatal(err)
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}, nil)
	return &testServer{im: im}, ctx
}

// handle answers ctx's request: status, header lines and body (errors as a 500).
func (h *testServer) handle(ctx *fasthttp.RequestCtx) {
	im := h.im
	req := request.Acquire()
	recycle := false
	defer func() {
		if recycle {
			request.Recycle(req)
		} else {
			request.Release(req)
		}
	}()
	request.FromHTTPLimit(ctx, req, im.PlainIPv4(), im.MaxBody())
	fail := func(err error) {
		ctx.SetStatusCode(fasthttp.StatusInternalServerError)
		ctx.Response.SetBodyRaw(config.MarshalJSON(ErrorBody(err), 0))
	}
	a := im.Resolve(req)
	if a.Err != nil {
		fail(a.Err)
		return
	}
	recycle = im.Recyclable(a)
	a, err := im.Build(context.Background(), req, ctx.Request.Header.RequestURI(), ctx.Request.Body(), a)
	if err != nil {
		fail(err)
		return
	}
	status, err := a.Status()
	if err != nil {
		fail(err)
		return
	}
	ctx.SetStatusCode(status)
	for i := range a.NumHeaders() {
		name, value, _ := a.Header(i)
		ctx.Response.Header.Add(name, value)
	}
	ctx.Response.SetBodyRaw(a.Body())
	im.RecordMatch(a)
}

// serveOnce runs the handler on ctx's request as the server would for a new request.
func serveOnce(tb testing.TB, h *testServer, ctx *fasthttp.RequestCtx) {
	ctx.Response.Reset()
	h.handle(ctx)
	if ctx.Response.StatusCode() != 200 {
		tb.Fatalf("status %d", ctx.Response.StatusCode())
	}
}

// rawRequest is an http request as a client sends it.
func rawRequest(method, path, contentType, body string) string {
	s := method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:4545\r\nUser-Agent: bench\r\n"
	if contentType != "" {
		s += "Content-Type: " + contentType + "\r\n"
	}
	if body != "" || method == "POST" {
		s += fmt.Sprintf("Content-Length: %d\r\n", len(body))
	}
	return s + "\r\n" + body
}

// stubsJSON renders an http imposter of n stubs; pred gives stub i's predicates (JSON).
func stubsJSON(n int, pred func(i int) string) string {
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
