package match

import (
	"fmt"
	"testing"

	"github.com/mockd/mockd/internal/request"
)

var sinkInt int

func methodPathStubs(n int) [][]any {
	stubs := make([][]any, n)
	for i := range stubs {
		stubs[i] = []any{map[string]any{"equals": map[string]any{"method": "GET", "path": fmt.Sprintf("/api/items/%d", i)}}}
	}
	return stubs
}

func jsonBodyStubs(n int) [][]any {
	stubs := make([][]any, n)
	for i := range stubs {
		stubs[i] = []any{map[string]any{
			"equals": map[string]any{"method": "POST", "body": map[string]any{"id": float64(i), "kind": "order"}},
		}}
	}
	return stubs
}

func benchFind(b *testing.B, stubs [][]any, r *request.Request, want int) {
	s, err := Compile(stubs, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if got, err := s.Find(r); got != want || err != nil {
		b.Fatalf("Find = %d, %v; want %d", got, err, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkInt, _ = s.Find(r)
	}
}

func BenchmarkFindMethodPath(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		stubs := methodPathStubs(n)
		b.Run(fmt.Sprintf("stubs=%d/first", n), func(b *testing.B) {
			benchFind(b, stubs, &request.Request{Method: "GET", Path: "/api/items/0"}, 0)
		})
		b.Run(fmt.Sprintf("stubs=%d/last", n), func(b *testing.B) {
			benchFind(b, stubs, &request.Request{Method: "GET", Path: fmt.Sprintf("/api/items/%d", n-1)}, n-1)
		})
		b.Run(fmt.Sprintf("stubs=%d/nomatch", n), func(b *testing.B) {
			benchFind(b, stubs, &request.Request{Method: "GET", Path: "/nothing"}, -1)
		})
	}
}

// BenchmarkFindJSONBody uses a fresh request each iteration, as a server
// does, so the body is parsed once per Find.
func BenchmarkFindJSONBody(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		stubs := jsonBodyStubs(n)
		for _, tc := range []struct {
			name string
			id   int
		}{{"first", 0}, {"last", n - 1}, {"nomatch", -1}} {
			body := fmt.Sprintf(`{"id": %d, "kind": "ORDER", "extra": [1, 2, 3]}`, tc.id)
			want := tc.id
			b.Run(fmt.Sprintf("stubs=%d/%s", n, tc.name), func(b *testing.B) {
				s, err := Compile(stubs, Options{})
				if err != nil {
					b.Fatal(err)
				}
				r := request.Acquire()
				r.Method, r.Path, r.Body = "POST", "/orders", body
				if got, err := s.Find(r); got != want || err != nil {
					b.Fatalf("Find = %d, %v; want %d", got, err, want)
				}
				request.Release(r)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					r := request.Acquire()
					r.Method, r.Path, r.Body = "POST", "/orders", body
					sinkInt, _ = s.Find(r)
					request.Release(r)
				}
			})
		}
	}
}

func BenchmarkFindParallel(b *testing.B) {
	s, err := Compile(methodPathStubs(1000), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := &request.Request{Method: "GET", Path: "/api/items/999"}
		n := 0
		for pb.Next() {
			n, _ = s.Find(r)
		}
		sinkInt = n
	})
}

// BenchmarkFindRegexPaths is the bench/ scenario "100 regex path patterns": each stub matches
// an anchored pattern with a distinct literal start.
func BenchmarkFindRegexPaths(b *testing.B) {
	stubs := make([][]any, 100)
	for i := range stubs {
		stubs[i] = []any{map[string]any{"matches": map[string]any{"path": fmt.Sprintf(`^/api/v2/items%d/\d+$`, i)}}}
	}
	b.Run("last", func(b *testing.B) {
		benchFind(b, stubs, &request.Request{Method: "GET", Path: "/api/v2/items99/42"}, 99)
	})
	b.Run("nomatch", func(b *testing.B) {
		benchFind(b, stubs, &request.Request{Method: "GET", Path: "/other/42"}, -1)
	})
}

// BenchmarkFindRegexDotPaths: 100 patterns with '.', which JavaScript can match on half of a
// character past the BMP, so each match first looks for one in the path (none here).
func BenchmarkFindRegexDotPaths(b *testing.B) {
	stubs := make([][]any, 100)
	for i := range stubs {
		stubs[i] = []any{map[string]any{"matches": map[string]any{"path": fmt.Sprintf(`^/api/v2/items%d/.+$`, i)}}}
	}
	b.Run("last", func(b *testing.B) {
		benchFind(b, stubs, &request.Request{Method: "GET", Path: "/api/v2/items99/some-longer-item-name-42"}, 99)
	})
}

// BenchmarkFindExtended is BenchmarkFindMethodPath's last and nomatch requests against 10,000
// stubs Extend appended one at a time after the first 1,000 (as a proxyAlways recording
// appends them): Find looks in each level of the appended stubs in turn.
func BenchmarkFindExtended(b *testing.B) {
	const n = 10000
	stubs := methodPathStubs(n)
	s, err := Compile(stubs[:1000], Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := 1000; i < n; i++ {
		if s, err = Extend(s, fromPlainStubs(stubs[i:i+1]), Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d levels after the first index", len(s.tail))
	for _, tc := range []struct {
		name string
		path string
		want int
	}{{"last", fmt.Sprintf("/api/items/%d", n-1), n - 1}, {"nomatch", "/nothing", -1}} {
		b.Run(tc.name, func(b *testing.B) {
			r := &request.Request{Method: "GET", Path: tc.path}
			if got, err := s.Find(r); got != tc.want || err != nil {
				b.Fatalf("Find = %d, %v; want %d", got, err, tc.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				sinkInt, _ = s.Find(r)
			}
		})
	}
}
