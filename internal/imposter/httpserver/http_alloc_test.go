//go:build !race

package httpserver

import (
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/logs"
	"github.com/mockd/mockd/internal/metrics"
)

// TestPlainIsPathAllocatesNothing guards the hot path: a request answered by a static `is`
// response of stubs without scripts, not recorded, allocates nothing once warm, with or
// without metrics. (Off under -race, which allocates on its own.)
func TestPlainIsPathAllocatesNothing(t *testing.T) {
	for _, withMetrics := range []bool{false, true} {
		h, ctx := newBenchHandler(t, impostertest.SimpleStub, impostertest.SimpleRequest, withMetrics)
		serveOnce(t, h, ctx)
		if n := testing.AllocsPerRun(200, func() { serveOnce(t, h, ctx) }); n != 0 {
			t.Errorf("metrics %v: %v allocations per request, want 0", withMetrics, n)
		}
	}
}

// TestScriptedPathAllocations guards bench/'s inject and decorate answers through the handler:
// the native evaluator's objects, the strings it makes and their boxing into the response
// object come from the request's slab, and the request is recycled: nothing is allocated.
func TestScriptedPathAllocations(t *testing.T) {
	for _, tc := range []struct {
		name, imposter, raw string
		max                 float64
	}{
		{"inject", injectImposter, impostertest.RawRequest("GET", "/inject", "", ""), 0},
		{"decorate", decorateImposter(), impostertest.RawRequest("GET", "/decorate/19", "", ""), 0},
		// The same work through the general paths: an inject whose answer is built whole (a
		// header read from the request: not shaped), a decorate that reads the request (its
		// answer is built for every request, not kept).
		{"inject-built", `{"protocol":"http","port":4545,"stubs":[{"responses":[{"inject":` + strconv.Quote(
			`function (config) { return { statusCode: 200, headers: { 'Content-Type': 'application/json', 'X-Method': config.request.method }, body: JSON.stringify({ injected: config.request.path }) }; }`) + `}]}]}`,
			impostertest.RawRequest("GET", "/inject", "", ""), 0},
		{"decorate-request", `{"protocol":"http","port":4545,"stubs":[{"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"text/plain"},"body":"decorate"},` +
			`"_behaviors":{"decorate":` + strconv.Quote(`(config) => { config.response.body = config.response.body + config.request.path; config.response.headers['X-Decorated'] = 'yes'; }`) + `}}]}]}`,
			impostertest.RawRequest("GET", "/decorate/19", "", ""), 0},
	} {
		h, ctx := newBenchHandler(t, tc.imposter, tc.raw, false)
		serveOnce(t, h, ctx)
		if n := testing.AllocsPerRun(200, func() { serveOnce(t, h, ctx) }); n > tc.max {
			t.Errorf("%s: %v allocations per request, want at most %v", tc.name, n, tc.max)
		}
	}
}

// TestTemplateAllocations guards bench's handlebars answer through the handler: nothing is
// allocated. The body is rendered into the answer's pooled buffer (no response object), jsonPath
// of the body is written without boxing its argument or answer, and the request (recycled: the
// answer keeps none of its strings), the model, render state and buffers are reused.
func TestTemplateAllocations(t *testing.T) {
	h, ctx := newBenchHandler(t, handlebarsImposter, handlebarsRequest, false)
	serveOnce(t, h, ctx)
	if got := string(ctx.Response.Body()); got != `{"id":"42","q":"x","trace":"t-1","name":"Ada","method":"POST"}` {
		t.Fatalf("body %s", got)
	}
	if n := testing.AllocsPerRun(200, func() { serveOnce(t, h, ctx) }); n > 10 {
		t.Errorf("%v allocations per request, want none", n)
	}
}

// TestTemplateBodyAllocations guards bench's template-body answer through the handler: the
// stub's ~3 KB body and its three headers are written as configured, and nothing is allocated.
func TestTemplateBodyAllocations(t *testing.T) {
	h, ctx := newBenchHandler(t, templateBodyImposter(), impostertest.RawRequest("GET", "/catalog/5", "", ""), false)
	serveOnce(t, h, ctx)
	if got := string(ctx.Response.Body()); got != templateBody(5) {
		t.Fatalf("body %s", got)
	}
	for name, want := range map[string]string{"Content-Type": "application/json", "Cache-Control": "no-cache", "X-Template": "5"} {
		if got := string(ctx.Response.Header.Peek(name)); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if n := testing.AllocsPerRun(200, func() { serveOnce(t, h, ctx) }); n != 0 {
		t.Errorf("%v allocations per request, want none", n)
	}
}

// TestListeningAllocations guards what a request costs through a listening imposter (the FIFO
// poller, the connection's reads and writes, the handler) over one keep-alive connection, the
// client's own work included: the simple stub, inject and decorate (answered by the native
// evaluator) allocate nothing. The bounds are
// averages over many requests, with room for a rare allocation of the runtime.
func TestListeningAllocations(t *testing.T) {
	for _, tc := range []struct {
		name, imposter, path, body string
		max                        float64
	}{
		{"simple", impostertest.SimpleStub, "/hello", "", 0.2},
		{"inject", injectImposter, "/inject", `{"injected":"/inject"}`, 0.2},
		{"decorate", decorateImposter(), "/decorate/19", "decorate-19-decorated", 0.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			im := startBench(t, tc.imposter)
			c := &fasthttp.HostClient{Addr: "127.0.0.1:" + strconv.Itoa(im.Port()), MaxConns: 1}
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.SetRequestURI("http://" + c.Addr + tc.path)
			do := func() {
				if err := c.Do(req, resp); err != nil || resp.StatusCode() != 200 || (tc.body != "" && string(resp.Body()) != tc.body) {
					t.Fatalf("%v %d %q", err, resp.StatusCode(), resp.Body())
				}
			}
			for range 50 {
				do() // connects, warms the pools
			}
			if n := testing.AllocsPerRun(500, do); n > tc.max {
				t.Errorf("%v allocations per request, want at most %v", n, tc.max)
			}
		})
	}
}

// TestProxyAlwaysAllocations guards bench's proxyAlways answer through the handler: the
// origin's answer kept as its bytes and its pending compile; the answer is served from those
// bytes (no object, no wire: it is the answer before's, proxy.Plain, its lines read into a
// pooled list; 7 allocations before),
// the recorded stub takes the answer in place (its lists doubled now and then), not as a new
// stub, stub list and table (15 allocations before), and the request is recycled (its strings
// are not kept: see TestProxyAlwaysRecycledRequests). The origin is rawOrigin, whose answer
// has no Date or Server header. The kept bytes are written into the proxy's block of them
// and the pending compile taken from a slab of them (one allocation each before): measured
// 0.02 (a new block or slab now and then, the lists doubled).
func TestProxyAlwaysAllocations(t *testing.T) {
	addr := rawOrigin(t, []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 24\r\n\r\norder 7, from the origin"))
	imp := `{"protocol":"http","port":4545,"stubs":[{"responses":[{"proxy":{"to":"http://` + addr +
		`","mode":"proxyAlways","predicateGenerators":[{"matches":{"method":true,"path":true}}]}}]}]}`
	h, ctx := newBenchHandler(t, imp, impostertest.RawRequest("GET", "/orders/7", "", ""), false)
	for range 10 { // the recorded stub is made, the origin's connection pooled
		serveOnce(t, h, ctx)
	}
	if n := testing.AllocsPerRun(1000, func() { serveOnce(t, h, ctx) }); n > 0.2 {
		t.Errorf("%v allocations per request, want at most 0.2", n)
	}
}

// rawOrigin serves answer to every request (a head without a body) on a loopback port, with a
// goroutine a connection: not a fasthttp.Server, whose worker pool's goroutines may outlive
// the test (TestStoppedServerLeavesNoPoolGoroutine looks for any).
func rawOrigin(t *testing.T, answer []byte) string {
	t.Helper()
	return loopbackOrigin(t, func(c net.Conn) {
		// Nothing allocated a request (AllocsPerRun counts the process's).
		buf, end, at := make([]byte, 4096), "\r\n\r\n", 0
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			for _, b := range buf[:n] {
				switch {
				case b == end[at]:
					at++
				case b == '\r':
					at = 1
				default:
					at = 0
				}
				if at == len(end) { // the end of a request's head
					at = 0
					if _, err := c.Write(answer); err != nil {
						return
					}
				}
			}
		}
	})
}

// TestLoggedRequestAllocatesNothing guards the default log level: every request's line at info
// ("client => GET /path", Mountebank's), as text or as JSON with its timestamp, to the console
// and a log file, is written without an allocation (the client's address is worked out once a
// connection, the line is made in the log's own buffers).
func TestLoggedRequestAllocatesNothing(t *testing.T) {
	for _, jsonLines := range []bool{false, true} {
		core := logs.New(logs.Options{Level: slog.LevelInfo, Console: io.Discard, File: io.Discard, JSON: jsonLines})
		log := slog.New(core.Handler("mb:2525")).With("imposter", "http:4545")
		h, ctx := newBenchHandlerWith(t, impostertest.SimpleStub, impostertest.SimpleRequest, imposter.Options{Logger: log, Metrics: metrics.New()})
		for range 2000 { // past the log's ring of kept lines, whose buffers are made once
			serveOnce(t, h, ctx)
		}
		if n := testing.AllocsPerRun(200, func() { serveOnce(t, h, ctx) }); n != 0 {
			t.Errorf("json %v: %v allocations per logged request, want 0", jsonLines, n)
		}
		core.Close()
	}
}
