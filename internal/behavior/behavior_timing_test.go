package behavior

import (
	"context"
	"testing"
	"time"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
	"github.com/mockd/mockd/internal/script"
)

var sink any

func benchApply(b *testing.B, behaviors []any) {
	comp, _ := Compile(behaviors, Options{})
	scope := script.New(script.Options{Timeout: time.Second}).NewScope(nil)
	is := config.NewObject("statusCode", 200.0, "headers", config.NewObject("Content-Type", "text/plain"), "body", "hello $ID")
	r := &request.Request{Method: "GET", Path: "/users/42", Headers: []request.KV{{Name: "Host", Value: "localhost"}}}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp := config.Clone(is).(*config.Object) // the imposter clones `is` per request
		out, err := comp.Apply(ctx, r, resp, scope)
		if err != nil {
			b.Fatal(err)
		}
		sink = out
	}
}

func BenchmarkApplyDecorate(b *testing.B) {
	benchApply(b, []any{config.NewObject("decorate", "function (request, response) { response.headers['X-Path'] = request.path; }")})
}

func BenchmarkApplyCopyRegex(b *testing.B) {
	benchApply(b, []any{config.NewObject("copy", config.NewObject("from", "path", "into", "$ID",
		"using", config.NewObject("method", "regex", "selector", "\\d+")))})
}
