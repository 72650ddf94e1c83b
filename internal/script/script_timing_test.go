package script

import (
	"context"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
)

var sink any

func BenchmarkDecorate(b *testing.B) {
	s := New(Options{Timeout: time.Second}).NewScope(nil)
	const src = `function (request, response) { response.headers['X-Path'] = request.path; response.body = response.body + '!'; }`
	resp := config.NewObject("statusCode", 200.0, "headers", config.NewObject("Content-Type", "text/plain"), "body", "hello")
	r := testRequest()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := s.Decorate(ctx, src, r, resp)
		if err != nil {
			b.Fatal(err)
		}
		sink = out
	}
}

// BenchmarkDecorateScripts sets what a decorate costs in goja apart from what its script does:
// an empty function is the floor (the call, the config object, reading the response back).
func BenchmarkDecorateScripts(b *testing.B) {
	for _, tc := range []struct{ name, src string }{
		{"empty", `(config) => {}`},
		{"read-body", `(config) => { config.response.body; }`},
		{"append-body", `(config) => { config.response.body = config.response.body + '-decorated'; }`},
		// bench/'s decorate scenario
		{"append-body-add-header", `(config) => { config.response.body = config.response.body + '-decorated'; config.response.headers['X-Decorated'] = 'yes'; }`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := New(Options{Timeout: time.Second}).NewScope(nil)
			resp := config.NewObject("statusCode", 200.0, "headers", config.NewObject("Content-Type", "text/plain"), "body", "hello")
			r := testRequest()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				out, err := s.Decorate(ctx, tc.src, r, resp)
				if err != nil {
					b.Fatal(err)
				}
				sink = out
			}
		})
	}
}

func BenchmarkInjectResponse(b *testing.B) {
	s := New(Options{Timeout: time.Second}).NewScope(nil)
	const src = `function (config) { return { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ path: config.request.path }) }; }`
	r := testRequest()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := s.Response(ctx, src, r)
		if err != nil {
			b.Fatal(err)
		}
		sink = out
	}
}

func BenchmarkInjectResponseParallel(b *testing.B) {
	e := New(Options{Timeout: time.Second})
	const src = `function (config) { return { body: config.request.path }; }`
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		s := e.NewScope(nil) // one imposter per goroutine: scopes run in parallel
		r := testRequest()
		for pb.Next() {
			out, err := s.Response(context.Background(), src, r)
			if err != nil {
				b.Fatal(err)
			}
			sink = out
		}
	})
}

func BenchmarkPredicate(b *testing.B) {
	s := New(Options{Timeout: time.Second}).NewScope(nil)
	const src = `function (config) { return config.request.path === '/users/42'; }`
	r := testRequest()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ok, err := s.Predicate(src, r)
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}
