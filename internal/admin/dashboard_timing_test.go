package admin

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

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
	a.dashReads.now = eachReadAlone()
	benchGET(b, a, "/dashboard/api/imposters/"+port, "X-Mockd-Dashboard", "refresh")
}

// BenchmarkDashboardListRead measures what an open overview costs mockd: one
// GET /dashboard/api/imposters (every imposter's counters and verdict) with an imposter of
// 10,000 stubs, which the page sends once a second.
func BenchmarkDashboardListRead(b *testing.B) {
	a, _ := newTestAPI(b, Options{})
	var stubs []string
	for i := range 10000 {
		stubs = append(stubs, `{"predicates":[{"equals":{"path":"/`+strconv.Itoa(i)+`"}}],"responses":[{"is":{"statusCode":200}}]}`)
	}
	createImposter(b, a.reg, `{"protocol":"http","stubs":[`+strings.Join(stubs, ",")+`]}`)
	a.dashReads.now = eachReadAlone()
	benchGET(b, a, "/dashboard/api/imposters")
}

// eachReadAlone is a clock for dashReads that moves a second at each read: every read is then
// rendered, as an open page's read is (a loop of reads would otherwise be a busy page's,
// sharing renderings).
func eachReadAlone() func() time.Time {
	now := time.Unix(1_800_000_000, 0)
	return func() time.Time {
		now = now.Add(time.Second)
		return now
	}
}

// benchGET measures the admin API's answer to GET uri with the headers given (name, value, …),
// served in process: it must be 200.
func benchGET(b *testing.B, a *API, uri string, headers ...string) {
	var req fasthttp.Request
	req.SetRequestURI(uri)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
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
