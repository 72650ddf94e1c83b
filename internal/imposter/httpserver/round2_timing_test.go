package httpserver

import (
	"crypto/tls"
	"log/slog"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/imposter/impostertest"
	"github.com/mockd/mockd/internal/script"
)

// startBench creates and starts an imposter from JSON on a free loopback port, with scripts
// allowed: a port the JSON names (4545) is left out, so that tests running at once in other
// processes do not collide on it.
func startBench(tb testing.TB, def string) *imposter.Imposter {
	tb.Helper()
	def = strings.Replace(def, `,"port":4545`, ``, 1)
	d := impostertest.Def(tb, def)
	log := slog.New(slog.DiscardHandler)
	im, err := imposter.New(d, imposter.Options{Host: "127.0.0.1", Logger: log, Script: script.New(script.Options{Logger: log}), Protocols: map[string]imposter.Protocol{"http": HTTP, "https": HTTPS}})
	if err != nil {
		tb.Fatal(err)
	}
	impostertest.Start(tb, im)
	return im
}

// BenchmarkHTTPSKeepAlive sends the simple stub's request over one keep-alive connection, plain
// and over TLS 1.3 (the handshake is done once, before the loop): what https costs a request.
func BenchmarkHTTPSKeepAlive(b *testing.B) {
	for _, proto := range []string{"http", "https"} {
		b.Run(proto, func(b *testing.B) {
			im := startBench(b, strings.Replace(impostertest.SimpleStub, `"protocol":"http","port":4545`, `"protocol":"`+proto+`"`, 1))
			c := &fasthttp.HostClient{Addr: "127.0.0.1:" + strconv.Itoa(im.Port()), IsTLS: proto == "https", MaxConns: 1,
				TLSConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}} //nolint:gosec // the imposter's own certificate
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.SetRequestURI(proto + "://" + c.Addr + "/hello")
			do := func() {
				if err := c.Do(req, resp); err != nil || resp.StatusCode() != 200 {
					b.Fatalf("%v %d", err, resp.StatusCode())
				}
			}
			do() // connects and, for https, shakes hands
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				do()
			}
		})
	}
}

// BenchmarkProxyRoundTrip serves a request through a proxy stub to a loopback origin:
// proxyTransparent is the round trip alone; proxyAlways also records every answer; bare is
// bench's ceiling proxy (a fasthttp HostClient forwarding the request as it came, recording
// nothing), the bound the other two are measured against.
func BenchmarkProxyRoundTrip(b *testing.B) {
	addr := impostertest.Origin(b, func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("text/plain")
		ctx.SetBodyString("order 7, from the origin")
	})
	b.Run("bare", func(b *testing.B) {
		hc := &fasthttp.HostClient{Addr: addr, MaxConns: 4096}
		ctx := impostertest.RequestCtx(b, impostertest.RawRequest("GET", "/orders/7", "", ""))
		b.ReportAllocs()
		for b.Loop() {
			ctx.Response.Reset()
			if err := hc.Do(&ctx.Request, &ctx.Response); err != nil || ctx.Response.StatusCode() != 200 {
				b.Fatalf("%v %d", err, ctx.Response.StatusCode())
			}
		}
	})
	for _, mode := range []string{"proxyTransparent", "proxyAlways", "proxyOnce"} {
		b.Run(mode, func(b *testing.B) {
			imp := `{"protocol":"http","port":4545,"stubs":[{"responses":[{"proxy":{"to":"http://` + addr + `","mode":"` + mode +
				`","predicateGenerators":[{"matches":{"method":true,"path":true}}]}}]}]}`
			h, ctx := newBenchHandler(b, imp, impostertest.RawRequest("GET", "/orders/7", "", ""), false)
			b.ReportAllocs()
			for b.Loop() {
				serveOnce(b, h, ctx)
			}
		})
	}
}

// BenchmarkProxyAlwaysKeepAlive sends bench's proxyAlways request through a listening imposter
// over one keep-alive connection: what BenchmarkProxyRoundTrip's handler alone does not show,
// the connection's context (the origin's exchange is ended when it ends) and its poller.
func BenchmarkProxyAlwaysKeepAlive(b *testing.B) {
	addr := impostertest.Origin(b, func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("text/plain")
		ctx.SetBodyString("order 7, from the origin")
	})
	im := startBench(b, `{"protocol":"http","port":4545,"stubs":[{"responses":[{"proxy":{"to":"http://`+addr+
		`","mode":"proxyAlways","predicateGenerators":[{"matches":{"method":true,"path":true}}]}}]}]}`)
	c := &fasthttp.HostClient{Addr: "127.0.0.1:" + strconv.Itoa(im.Port()), MaxConns: 1}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + c.Addr + "/orders/7")
	do := func() {
		if err := c.Do(req, resp); err != nil || resp.StatusCode() != 200 || string(resp.Body()) != "order 7, from the origin" {
			b.Fatalf("%v %d %q", err, resp.StatusCode(), resp.Body())
		}
	}
	do() // connects and records the stub
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		do()
	}
}

// BenchmarkProxyAlwaysRetained reports what proxyAlways keeps of each answer it records
// (retained-B/op, retained-objects/op: the heap after a collection, before and after the
// loop), which the garbage collector marks on every cycle for as long as the imposter lives.
func BenchmarkProxyAlwaysRetained(b *testing.B) {
	addr := impostertest.Origin(b, func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("text/plain")
		ctx.SetBodyString("order 7, from the origin")
	})
	imp := `{"protocol":"http","port":4545,"stubs":[{"responses":[{"proxy":{"to":"http://` + addr +
		`","mode":"proxyAlways","predicateGenerators":[{"matches":{"method":true,"path":true}}]}}]}]}`
	h, ctx := newBenchHandler(b, imp, impostertest.RawRequest("GET", "/orders/7", "", ""), false)
	serveOnce(b, h, ctx) // the recorded stub is made
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		serveOnce(b, h, ctx)
		n++
	}
	b.StopTimer()
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "retained-B/op")
	b.ReportMetric(float64(int64(after.HeapObjects)-int64(before.HeapObjects))/float64(n), "retained-objects/op")
	goruntime.KeepAlive(h)
}

// injectImposter is bench/'s inject scenario: one stub whose response is a JavaScript function.
const injectImposter = `{"protocol":"http","port":4545,"stubs":[{"predicates":[{"equals":{"method":"GET","path":"/inject"}}],` +
	`"responses":[{"inject":"function (config) { return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ injected: config.request.path }) }; }"}]}]}`

// decorateImposter is bench/'s decorate scenario: 20 stubs whose responses have a JavaScript
// decorate behavior (one the native subset runs as Go), the request matching the 20th.
func decorateImposter() string {
	var b strings.Builder
	b.WriteString(`{"protocol":"http","port":4545,"stubs":[`)
	for i := range 20 {
		if i > 0 {
			b.WriteByte(',')
		}
		n := strconv.Itoa(i)
		b.WriteString(`{"predicates":[{"equals":{"method":"GET","path":"/decorate/` + n + `"}}],"responses":[{"is":{"statusCode":200,` +
			`"headers":{"Content-Type":"text/plain"},"body":"decorate-` + n + `"},"_behaviors":{"decorate":` +
			`"(config) => { config.response.body = config.response.body + '-decorated'; config.response.headers['X-Decorated'] = 'yes'; }"}}]}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

// BenchmarkDecorateKeepAlive serves bench/'s decorate scenario through a listening imposter over
// one keep-alive connection.
func BenchmarkDecorateKeepAlive(b *testing.B) {
	im := startBench(b, decorateImposter())
	c := &fasthttp.HostClient{Addr: "127.0.0.1:" + strconv.Itoa(im.Port()), MaxConns: 1}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + c.Addr + "/decorate/19")
	do := func() {
		if err := c.Do(req, resp); err != nil || resp.StatusCode() != 200 || string(resp.Body()) != "decorate-19-decorated" ||
			string(resp.Header.Peek("X-Decorated")) != "yes" {
			b.Fatalf("%v %d %q", err, resp.StatusCode(), resp.Body())
		}
	}
	do()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		do()
	}
}

// BenchmarkInjectKeepAlive serves bench/'s inject scenario through a listening imposter (the
// FIFO poller, the connection's context, the script call and its limits): over one keep-alive
// connection, and over 50 at once as the bench's load generator sends it, where calls run
// beside each other on the imposter's pool of runtimes.
func BenchmarkInjectKeepAlive(b *testing.B) {
	for _, conns := range []int{1, 50} {
		b.Run("conns="+strconv.Itoa(conns), func(b *testing.B) {
			im := startBench(b, injectImposter)
			c := &fasthttp.HostClient{Addr: "127.0.0.1:" + strconv.Itoa(im.Port()), MaxConns: conns}
			do := func(req *fasthttp.Request, resp *fasthttp.Response) {
				if err := c.Do(req, resp); err != nil || resp.StatusCode() != 200 || string(resp.Body()) != `{"injected":"/inject"}` {
					b.Fatalf("%v %d %q", err, resp.StatusCode(), resp.Body())
				}
			}
			newReq := func() (*fasthttp.Request, *fasthttp.Response) {
				req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
				req.SetRequestURI("http://" + c.Addr + "/inject")
				return req, resp
			}
			req, resp := newReq()
			do(req, resp) // connects and makes the imposter's runtime
			b.ReportAllocs()
			b.ResetTimer()
			if conns == 1 {
				for b.Loop() {
					do(req, resp)
				}
				return
			}
			b.SetParallelism((conns + goruntime.GOMAXPROCS(0) - 1) / goruntime.GOMAXPROCS(0))
			b.RunParallel(func(pb *testing.PB) {
				req, resp := newReq()
				for pb.Next() {
					do(req, resp)
				}
			})
		})
	}
}

// BenchmarkScriptedHandler serves bench/'s inject and decorate scenarios (and the simple stub,
// for the share every answer pays) through the handler alone, without a connection: what the
// answer costs, separated from the network path, for callgrind and pprof.
func BenchmarkScriptedHandler(b *testing.B) {
	for _, sc := range []struct{ name, imposter, raw string }{
		{"simple", impostertest.SimpleStub, impostertest.SimpleRequest},
		{"inject", injectImposter, impostertest.RawRequest("GET", "/inject", "", "")},
		{"decorate", decorateImposter(), impostertest.RawRequest("GET", "/decorate/19", "", "")},
	} {
		b.Run(sc.name, func(b *testing.B) {
			h, ctx := newBenchHandler(b, sc.imposter, sc.raw, false)
			b.ReportAllocs()
			for b.Loop() {
				serveOnce(b, h, ctx)
			}
		})
	}
}
