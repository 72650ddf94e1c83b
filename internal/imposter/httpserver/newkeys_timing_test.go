package httpserver

import (
	"strconv"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/imposter/impostertest"
)

// BenchmarkProxyAlwaysNewKeys has proxyAlways record a new stub for every request (a new
// path each), past the number of stubs recorded before the loop: what a new key costs a
// recording of that many.
func BenchmarkProxyAlwaysNewKeys(b *testing.B) {
	addr := impostertest.Origin(b, func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("text/plain")
		ctx.SetBodyString("from the origin")
	})
	for _, before := range []int{100, 250, 1000, 5000, 15000} {
		b.Run("stubs="+strconv.Itoa(before), func(b *testing.B) {
			imp := `{"protocol":"http","port":4545,"stubs":[{"responses":[{"proxy":{"to":"http://` + addr +
				`","mode":"proxyAlways","predicateGenerators":[{"matches":{"method":true,"path":true,"query":true}}]}}]}]}`
			h, ctx := newBenchHandler(b, imp, impostertest.RawRequest("GET", "/items/0", "", ""), false)
			n := 0
			next := func() {
				ctx.Request.SetRequestURI("/items/" + strconv.Itoa(n) + "?q=" + strconv.Itoa(n%7))
				n++
				serveOnce(b, h, ctx)
			}
			for range before {
				next()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				next()
			}
		})
	}
}
