package imposter

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/metrics"
	"github.com/mockd/mockd/internal/request"
	"github.com/mockd/mockd/internal/script"
)

var timeZero = time.Unix(0, 0)

// testServer serves http requests as httpserver does (which imports this package, so its tests
// cannot use it), through the entry points it uses: Resolve, Build and RecordMatch. The answer
// is written onto a fasthttp context; no socket is involved.
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
	return newBenchHandlerWith(tb, imposterJSON, raw, opts)
}

// newBenchHandlerWith is newBenchHandler with the imposter options given.
func newBenchHandlerWith(tb testing.TB, imposterJSON, raw string, opts Options) (*testServer, *fasthttp.RequestCtx) {
	tb.Helper()
	im, err := New(impostertest.Def(tb, imposterJSON), opts)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := impostertest.RequestCtx(tb, raw)
	return &testServer{im: im}, ctx
}

// handle answers ctx's request: status, header lines and body (errors as a 500).
func (h *testServer) handle(ctx *fasthttp.RequestCtx) {
	im := h.im
	req := request.Acquire()
	defer request.Release(req) // never recycled: a test may keep what it was answered
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
	err := im.Build(context.Background(), req, ctx.Request.Header.RequestURI(), ctx.Request.Body(), &a)
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
	im.RecordMatch(&a)
}

// serveOnce runs the handler on ctx's request as the server would for a new request.
func serveOnce(tb testing.TB, h *testServer, ctx *fasthttp.RequestCtx) {
	ctx.Response.Reset()
	h.handle(ctx)
	if ctx.Response.StatusCode() != 200 {
		tb.Fatalf("status %d", ctx.Response.StatusCode())
	}
}
