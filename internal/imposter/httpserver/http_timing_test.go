package httpserver

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/logs"
	"github.com/mockd/mockd/internal/metrics"
	"github.com/mockd/mockd/internal/netconn"
	"github.com/mockd/mockd/internal/script"
)

// newBenchHandler builds an http imposter from JSON without listening and a request context
// holding raw, parsed as the server parses what it reads from a connection.
func newBenchHandler(tb testing.TB, imposterJSON, raw string, withMetrics bool) (*server, *fasthttp.RequestCtx) {
	tb.Helper()
	log := slog.New(slog.DiscardHandler)
	opts := imposter.Options{Logger: log, Script: script.New(script.Options{Logger: log})}
	if withMetrics {
		opts.Metrics = metrics.New()
	}
	return newBenchHandlerWith(tb, imposterJSON, raw, opts)
}

// newBenchHandlerWith is newBenchHandler with the imposter options given.
func newBenchHandlerWith(tb testing.TB, imposterJSON, raw string, opts imposter.Options) (*server, *fasthttp.RequestCtx) {
	tb.Helper()
	def := impostertest.Def(tb, imposterJSON)
	im, err := imposter.New(def, opts)
	if err != nil {
		tb.Fatal(err)
	}
	h := newServer(im, nil)
	return h, keepAliveCtx(tb, raw)
}

// keepAliveCtx is a request context holding raw as the server hands it to the handler for each
// request of a keep-alive connection: on a connection an IdleListener accepted (here
// netconn.Tracked), which keeps its request view from one request to the next, with the
// response's body buffer kept from one answer to the next (fasthttp's server without
// ReduceMemoryUsage; impostertest.RequestCtx gives it back to fasthttp's pool each time).
func keepAliveCtx(tb testing.TB, raw string) *fasthttp.RequestCtx {
	ctx := impostertest.RequestCtx(tb, raw)
	// The request stays; the client's address with it.
	ctx.Init2(netconn.Tracked(&replayConn{Conn: ctx.Conn(), raw: raw}), nil, false)
	return ctx
}

// replayConn is a client connection each read of which brings the same request, as a
// keep-alive client sends it again and again (see arrive).
type replayConn struct {
	net.Conn
	raw string
}

func (c *replayConn) Read(b []byte) (int, error) { return copy(b, c.raw), nil }

// arrive reads the next request of keep-alive ctx (keepAliveCtx) into buf, as the server reads
// each request of a connection once the last one was answered: the connection's scan of the
// header block (netconn's framing) runs over it. The request's fasthttp parse is not done
// again: ctx holds it already.
func arrive(tb testing.TB, ctx *fasthttp.RequestCtx, buf []byte) {
	c := ctx.Conn()
	netconn.IdleConnState(c, fasthttp.StateIdle) // the last answer is out: the next read begins a request
	if n, err := c.Read(buf); err != nil || n == 0 {
		tb.Fatalf("read %d: %v", n, err)
	}
}

// serveOnce runs the handler on ctx's request as the server would for a new request.
func serveOnce(tb testing.TB, h *server, ctx *fasthttp.RequestCtx) {
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
			h, ctx := newBenchHandler(b, impostertest.SimpleStub, impostertest.SimpleRequest, withMetrics)
			b.ReportAllocs()
			for b.Loop() {
				serveOnce(b, h, ctx)
			}
		})
	}
}

// BenchmarkHTTPSimpleStubLogged is BenchmarkHTTPSimpleStub with mockd's log handler taking
// every request's line at info (the default level), written to a file by its writer: what
// request logging costs. Run it with -cpu 1 to count the writer on the same core.
func BenchmarkHTTPSimpleStubLogged(b *testing.B) {
	for _, format := range []string{"text", "json"} {
		b.Run("format="+format, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "console.log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			core := logs.New(logs.Options{Level: slog.LevelInfo, Console: f, JSON: format == "json"})
			defer core.Close()
			log := slog.New(core.Handler("mb:2525")).With("imposter", "http:4545")
			h, ctx := newBenchHandlerWith(b, impostertest.SimpleStub, impostertest.SimpleRequest, imposter.Options{Logger: log, Metrics: metrics.New()})
			b.ReportAllocs()
			for b.Loop() {
				serveOnce(b, h, ctx)
			}
		})
	}
}

// BenchmarkHTTPNoMatchExplained is the no-match scenarios with the explanation made, as the
// debug log or --debug makes it for every request that matches no stub.
func BenchmarkHTTPNoMatchExplained(b *testing.B) {
	for _, sc := range []struct {
		name, imposter, request string
	}{
		{"api500-nomatch", impostertest.StubsJSON(500, func(i int) string {
			return fmt.Sprintf(`{"equals":{"method":%q,"path":"/api/v1/resource%d/items"}}`, []string{"GET", "POST", "PUT", "DELETE"}[i%4], i)
		}), impostertest.RawRequest("GET", "/api/v1/none", "", "")},
		{"stubs10-nomatch", impostertest.StubsJSON(10, func(i int) string {
			return fmt.Sprintf(`{"equals":{"method":"GET","path":"/api/v1/resource%d/items"}}`, i)
		}), impostertest.RawRequest("GET", "/api/v1/none", "", "")},
	} {
		for _, debug := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/debug=%t", sc.name, debug), func(b *testing.B) {
				log := slog.New(slog.DiscardHandler)
				h, ctx := newBenchHandlerWith(b, sc.imposter, sc.request, imposter.Options{Logger: log, Debug: debug, Metrics: metrics.New()})
				b.ReportAllocs()
				for b.Loop() {
					serveOnce(b, h, ctx)
				}
			})
		}
	}
}

// BenchmarkHTTPScenarios serves some of bench/'s scenarios through the handler, each request
// as a keep-alive connection's reaches it: read from the connection (its header block scanned
// as it arrives), then the handler wrapped as the server wraps it (netconn.TrackRequests).
// fasthttp's own parse of the request is left out.
func BenchmarkHTTPScenarios(b *testing.B) {
	order := func(i int) string {
		return fmt.Sprintf(`{"orderId":"ord-%03d","customer":"acme","qty":%d,"sku":"SKU-%03d"}`, i, i%7+1, i)
	}
	for _, sc := range []struct {
		name, imposter, request string
	}{
		// The journal's cost: the simple stub with recordRequests.
		{"simple-recorded", strings.Replace(impostertest.SimpleStub, `"port":4545,`, `"port":4545,"recordRequests":true,`, 1), impostertest.SimpleRequest},
		{"api500-last", impostertest.StubsJSON(500, func(i int) string {
			return fmt.Sprintf(`{"equals":{"method":%q,"path":"/api/v1/resource%d/items"}}`, []string{"GET", "POST", "PUT", "DELETE"}[i%4], i)
		}), impostertest.RawRequest("DELETE", "/api/v1/resource499/items", "", "")},
		{"api500-nomatch", impostertest.StubsJSON(500, func(i int) string {
			return fmt.Sprintf(`{"equals":{"method":%q,"path":"/api/v1/resource%d/items"}}`, []string{"GET", "POST", "PUT", "DELETE"}[i%4], i)
		}), impostertest.RawRequest("GET", "/api/v1/none", "", "")},
		{"json-equals-first", impostertest.StubsJSON(100, func(i int) string {
			return fmt.Sprintf(`{"equals":{"method":"POST","path":"/orders","body":%s}}`, order(i))
		}), impostertest.RawRequest("POST", "/orders", "application/json", order(0))},
		{"json-equals-middle", impostertest.StubsJSON(100, func(i int) string {
			return fmt.Sprintf(`{"equals":{"method":"POST","path":"/orders","body":%s}}`, order(i))
		}), impostertest.RawRequest("POST", "/orders", "application/json", order(49))},
		{"json-contains", impostertest.StubsJSON(100, func(i int) string {
			return fmt.Sprintf(`{"contains":{"body":{"sku":"SKU-%03d"}}}`, i)
		}), impostertest.RawRequest("POST", "/orders", "application/json", order(49))},
		{"jsonpath-first", impostertest.StubsJSON(100, func(i int) string {
			return fmt.Sprintf(`{"equals":{"body":"cust-%03d"},"jsonpath":{"selector":"$.customer.id"}}`, i)
		}), impostertest.RawRequest("POST", "/customers", "application/json",
			`{"customer":{"id":"cust-000","tier":"gold","tags":["a","b"]},"items":[{"sku":"x","qty":1},{"sku":"y","qty":2}]}`)},
		{"jsonpath-last", impostertest.StubsJSON(100, func(i int) string {
			return fmt.Sprintf(`{"equals":{"body":"cust-%03d"},"jsonpath":{"selector":"$.customer.id"}}`, i)
		}), impostertest.RawRequest("POST", "/customers", "application/json",
			`{"customer":{"id":"cust-099","tier":"gold","tags":["a","b"]},"items":[{"sku":"x","qty":1},{"sku":"y","qty":2}]}`)},
		{"xpath-first", impostertest.StubsJSON(100, func(i int) string {
			return fmt.Sprintf(`{"equals":{"body":"cust-%03d"},"xpath":{"selector":"//customer/id"}}`, i)
		}), impostertest.RawRequest("POST", "/customers", "application/xml",
			`<order><customer><id>cust-000</id><tier>gold</tier></customer><items><item sku="x">1</item><item sku="y">2</item></items></order>`)},
		{"regex-last", impostertest.StubsJSON(100, func(i int) string {
			return fmt.Sprintf(`{"matches":{"path":"^/api/v2/items%d/[0-9]+/details$"}}`, i)
		}), impostertest.RawRequest("GET", "/api/v2/items99/100099/details", "", "")},
		{"header-last", impostertest.StubsJSON(100, func(i int) string {
			return fmt.Sprintf(`{"equals":{"headers":{"X-Tenant":"tenant-%03d"}}}`, i)
		}), "GET /profile HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nX-Tenant: tenant-099\r\n\r\n"},
		{"decorate", `{"protocol":"http","port":4545,"stubs":[{"predicates":[{"equals":{"method":"GET","path":"/decorate/0"}}],
			"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"text/plain"},"body":"decorate-0"},
			"_behaviors":{"decorate":"(config) => { config.response.body = config.response.body + '-decorated'; config.response.headers['X-Decorated'] = 'yes'; }"}}]}]}`,
			impostertest.RawRequest("GET", "/decorate/0", "", "")},
		{"inject", injectImposter, impostertest.RawRequest("GET", "/inject", "", "")},
		// bench's handlebars scenario: a template of a path segment, a query parameter, a header,
		// a JSONPath of the body and the method.
		{"handlebars", handlebarsImposter, handlebarsRequest},
		{"template-body", templateBodyImposter(), impostertest.RawRequest("GET", "/catalog/5", "", "")},
		{"simple", impostertest.SimpleStub, impostertest.SimpleRequest},
		{"query-last", impostertest.StubsJSON(100, func(i int) string {
			return fmt.Sprintf(`{"equals":{"query":{"tenant":"t%03d"}}}`, i)
		}), impostertest.RawRequest("GET", "/search?q=shoes&tenant=t099&page=2", "", "")},
	} {
		b.Run(sc.name, func(b *testing.B) {
			h, ctx := newBenchHandler(b, sc.imposter, sc.request, true)
			serve := netconn.TrackRequests(h.handle) // as the server's handler runs
			buf := make([]byte, len(sc.request)+256) // with room for the scan's rewrites
			b.ReportAllocs()
			for b.Loop() {
				arrive(b, ctx, buf)
				ctx.Response.Reset()
				serve(ctx)
				if ctx.Response.StatusCode() != 200 {
					b.Fatalf("status %d", ctx.Response.StatusCode())
				}
			}
		})
	}
}

// templateBodyImposter is bench/'s template-body scenario: 10 stubs on method and path, each
// answering a ~3 KB JSON document (templateBody) with three headers.
func templateBodyImposter() string {
	var b strings.Builder
	b.WriteString(`{"protocol":"http","port":4545,"stubs":[`)
	for i := range 10 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"predicates":[{"equals":{"method":"GET","path":"/catalog/%d"}}],"responses":[{"is":{"statusCode":200,`+
			`"headers":{"Content-Type":"application/json","Cache-Control":"no-cache","X-Template":"%d"},"body":%q}}]}`, i, i, templateBody(i))
	}
	b.WriteString(`]}`)
	return b.String()
}

// templateBody is bench/'s ~3 KB JSON document of the template-body scenario.
func templateBody(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"template":%d,"generatedAt":"2024-01-01T00:00:00Z","items":[`, i)
	for j := range 30 {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item-%d-%d","price":%d.99,"currency":"EUR","inStock":true,"tags":["new","sale"]}`, j, i, j, j+10)
	}
	b.WriteString(`],"page":{"number":1,"size":30,"total":300}}`)
	return b.String()
}

// bench's handlebars scenario: a template of a path segment, a query parameter, a header, a
// JSONPath of the body and the method.
const (
	handlebarsImposter = `{"protocol":"http","port":4545,"stubs":[{"predicates":[{"equals":{"method":"POST","path":"/users/42"}}],
			"responses":[{"is":{"statusCode":200,"headers":{"Content-Type":"application/json"},"template":true,
			"body":"{\"id\":\"{{request.path.[1]}}\",\"q\":\"{{request.query.q}}\",\"trace\":\"{{request.headers.X-Trace}}\",\"name\":\"{{jsonPath request.body '$.name'}}\",\"method\":\"{{request.method}}\"}"}}]}]}`
	handlebarsRequest = "POST /users/42?q=x HTTP/1.1\r\nHost: x\r\nX-Trace: t-1\r\nContent-Type: application/json\r\nContent-Length: 29\r\n\r\n{\"name\":\"Ada\",\"tags\":[1,2,3]}"
)

// BenchmarkHTTPRecordedFull is the simple stub with recordRequests once the journal is full (its
// default 100,000 requests, as bench/'s record-on scenario has it after its warm-up): every
// request drops the oldest one, and the garbage collector's cycles meet a full ring.
func BenchmarkHTTPRecordedFull(b *testing.B) {
	h, ctx := newBenchHandler(b, strings.Replace(impostertest.SimpleStub, `"port":4545,`, `"port":4545,"recordRequests":true,`, 1), impostertest.SimpleRequest, true)
	for range 100000 {
		serveOnce(b, h, ctx)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		serveOnce(b, h, ctx)
	}
}

// BenchmarkHTTPScaleLast is bench/'s scale-N-last scenarios: N stubs on method and path, the
// request matching the last; 10,000 should cost what 10 do (issue 26: >= 0.8x).
func BenchmarkHTTPScaleLast(b *testing.B) {
	for _, n := range []int{10, 10000} {
		b.Run("stubs="+strconv.Itoa(n), func(b *testing.B) {
			imp := impostertest.StubsJSON(n, func(i int) string {
				return fmt.Sprintf(`{"equals":{"method":"GET","path":"/scale/%d"}}`, i)
			})
			h, ctx := newBenchHandler(b, imp, impostertest.RawRequest("GET", fmt.Sprintf("/scale/%d", n-1), "", ""), true)
			b.ReportAllocs()
			for b.Loop() {
				serveOnce(b, h, ctx)
			}
		})
	}
}
