package admin

import (
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkDashboardImposterRead measures what an open imposter page costs mockd: one
// GET /dashboard/api/imposters/:port (counters, the verdict, and the 50 latest of 1,000
// recorded requests, all no-matches, explained at the first read), which the page sends once a
// second.
func BenchmarkDashboardImposterRead(b *testing.B) {
	a, im := newTestAPI(b, Options{})
	port := strconv.Itoa(im.Port())
	c := &http.Client{}
	for range 1000 {
		resp, err := c.Get("http://127.0.0.1:" + port + "/users/42?q=1")
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
	var req fasthttp.Request
	req.SetRequestURI("/dashboard/api/imposters/" + port)
	req.Header.Set("X-Mockd-Dashboard", "refresh")
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}, nil)
	b.ReportAllocs()
	for b.Loop() {
		ctx.Response.Reset()
		a.Handler(&ctx)
		if ctx.Response.StatusCode() != 200 {
			b.Fatalf("status %d", ctx.Response.StatusCode())
		}
	}
}
