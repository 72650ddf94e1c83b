package app

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// BenchmarkImposterCreateDelete is bench/'s admin-pairs scenario in process: POST /imposters
// (a small http imposter on a loopback port) then DELETE /imposters/:port, one after the other,
// as a client suite does around each test, through the whole app (metrics and logging on, as
// mockd start runs; the admin API on an in-memory listener, the imposter on a real port).
// One op is one pair.
func BenchmarkImposterCreateDelete(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts Options
	}{
		{"default", Options{}},
		{"loglevel=warn", Options{LogLevel: "warn"}}, // as bench/ runs mockd
	} {
		b.Run(bc.name, func(b *testing.B) {
			benchmarkPairs(b, bc.opts)
		})
	}
}

func benchmarkPairs(b *testing.B, opts Options) {
	port := freePort(b)
	opts.Port = 2525
	a, c, _ := startInmem(b, opts)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		a.Stop(ctx)
	})
	create := []byte(`{"protocol":"http","port":` + strconv.Itoa(port) + `,"host":"127.0.0.1","stubs":[` +
		`{"predicates":[{"equals":{"method":"GET","path":"/health"}}],"responses":[{"is":{"statusCode":200,"body":"ok"}}]}]}`)
	post, del := fasthttp.AcquireRequest(), fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	post.Header.SetMethod("POST")
	post.SetRequestURI("http://localhost:2525/imposters")
	post.Header.SetContentType("application/json")
	post.SetBody(create)
	del.Header.SetMethod("DELETE")
	del.SetRequestURI("http://localhost:2525/imposters/" + strconv.Itoa(port))
	do := func(req *fasthttp.Request, want int) {
		if err := c.DoTimeout(req, resp, 10*time.Second); err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode() != want {
			b.Fatalf("%s: %d %s", req.Header.Method(), resp.StatusCode(), resp.Body())
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		do(post, 201)
		do(del, 200)
	}
}
