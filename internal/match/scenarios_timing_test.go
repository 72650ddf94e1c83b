package match

import (
	"fmt"
	"testing"

	"github.com/mockd/mockd/internal/request"
)

// The stubs and requests of bench/'s predicate scenarios (bench/cmd/mockd-bench/scenarios.go),
// matched in-process: each request is fresh, as a server's is, so nothing is memoized from the
// run before.
var benchScenarios = []struct {
	name  string
	stubs func() [][]any
	req   func() *request.Request
	want  int
}{
	{"json-contains", func() [][]any {
		return stubsOf(100, func(i int) any {
			return map[string]any{"contains": map[string]any{"body": map[string]any{"sku": fmt.Sprintf("SKU-%03d", i)}}}
		})
	}, func() *request.Request {
		return postJSON("/orders", `{"orderId":"ord-049","customer":"acme","qty":1,"sku":"SKU-049"}`)
	}, 49},
	{"jsonpath", func() [][]any {
		return stubsOf(100, func(i int) any {
			return map[string]any{"equals": map[string]any{"body": fmt.Sprintf("cust-%03d", i)},
				"jsonpath": map[string]any{"selector": "$.customer.id"}}
		})
	}, func() *request.Request {
		return postJSON("/customers", `{"customer":{"id":"cust-049","tier":"gold","tags":["a","b"]},"items":[{"sku":"x","qty":1},{"sku":"y","qty":2}]}`)
	}, 49},
	{"xpath", func() [][]any {
		return stubsOf(100, func(i int) any {
			return map[string]any{"equals": map[string]any{"body": fmt.Sprintf("cust-%03d", i)},
				"xpath": map[string]any{"selector": "//customer/id"}}
		})
	}, func() *request.Request {
		return postJSON("/customers", `<order><customer><id>cust-049</id><tier>gold</tier></customer><items><item sku="x">1</item><item sku="y">2</item></items></order>`)
	}, 49},
	{"header", func() [][]any {
		return stubsOf(100, func(i int) any {
			return map[string]any{"equals": map[string]any{"headers": map[string]any{"X-Tenant": fmt.Sprintf("tenant-%03d", i)}}}
		})
	}, func() *request.Request {
		r := request.Acquire()
		r.Method, r.Path = "GET", "/profile"
		r.Headers = append(r.Headers, request.KV{Name: "Accept", Value: "application/json"}, request.KV{Name: "X-Tenant", Value: "tenant-049"})
		return r
	}, 49},
	{"and-or-not", func() [][]any {
		return stubsOf(50, func(i int) any {
			return map[string]any{"and": []any{
				map[string]any{"equals": map[string]any{"method": "POST"}},
				map[string]any{"or": []any{
					map[string]any{"equals": map[string]any{"path": fmt.Sprintf("/logic/%d", i)}},
					map[string]any{"startsWith": map[string]any{"path": fmt.Sprintf("/logic-alt/%d/", i)}},
				}},
				map[string]any{"not": map[string]any{"contains": map[string]any{"body": "forbidden"}}},
			}}
		})
	}, func() *request.Request {
		r := request.Acquire()
		r.Method, r.Path, r.Body = "POST", "/logic/49", "ok"
		return r
	}, 49},
	{"deepEquals-body", func() [][]any {
		return stubsOf(50, func(i int) any {
			return map[string]any{"deepEquals": map[string]any{"body": map[string]any{"id": float64(i), "name": "x", "tags": []any{"a", "b"}}}}
		})
	}, func() *request.Request {
		return postJSON("/items", `{"tags":["b","a"],"name":"X","id":49}`)
	}, 49},
	{"nested-body", func() [][]any {
		return stubsOf(50, func(i int) any {
			return map[string]any{"equals": map[string]any{"body": map[string]any{"customer": map[string]any{"id": fmt.Sprintf("c-%d", i)}}}}
		})
	}, func() *request.Request {
		return postJSON("/orders", `{"customer":{"id":"c-49","tier":"gold"},"qty":1}`)
	}, 49},
	{"except", func() [][]any {
		return stubsOf(50, func(i int) any {
			return map[string]any{"equals": map[string]any{"path": fmt.Sprintf("/items/%d", i)}, "except": "\\?.*$"}
		})
	}, func() *request.Request {
		r := request.Acquire()
		r.Method, r.Path = "GET", "/items/49"
		return r
	}, 49},
	{"array", func() [][]any {
		return stubsOf(50, func(i int) any {
			return map[string]any{"equals": map[string]any{"body": map[string]any{"ids": []any{float64(i)}}}}
		})
	}, func() *request.Request {
		return postJSON("/orders", `{"ids":[49,50],"qty":1}`)
	}, 49},
	// A reference node: a shape the speed layer leaves to the reference.
	{"reference-nested-array", func() [][]any {
		return stubsOf(50, func(i int) any {
			return map[string]any{"equals": map[string]any{"body": map[string]any{"ids": []any{[]any{float64(i)}}}}}
		})
	}, func() *request.Request {
		return postJSON("/orders", `{"ids":[[49],[50]],"qty":1}`)
	}, 49},
	{"deepEquals-query", func() [][]any {
		return stubsOf(20, func(i int) any {
			return map[string]any{"deepEquals": map[string]any{"query": map[string]any{"q": fmt.Sprint(i), "page": "1"}}}
		})
	}, func() *request.Request {
		r := request.Acquire()
		r.Method, r.Path = "GET", "/search"
		r.Query = request.ParseQuery(r.Query, "q=19&page=1")
		return r
	}, 19},
}

func stubsOf(n int, pred func(i int) any) [][]any {
	stubs := make([][]any, n)
	for i := range stubs {
		stubs[i] = []any{pred(i)}
	}
	return stubs
}

func postJSON(path, body string) *request.Request {
	r := request.Acquire()
	r.Method, r.Path, r.Body = "POST", path, body
	r.Headers = append(r.Headers, request.KV{Name: "Content-Type", Value: "application/json"})
	return r
}

func BenchmarkFindScenarios(b *testing.B) {
	for _, sc := range benchScenarios {
		b.Run(sc.name, func(b *testing.B) {
			s, err := Compile(sc.stubs(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			r := sc.req()
			if got, err := s.Find(r); got != sc.want || err != nil {
				b.Fatalf("Find = %d, %v; want %d", got, err, sc.want)
			}
			request.Release(r)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := sc.req()
				sinkInt, _ = s.Find(r)
				request.Release(r)
			}
		})
	}
}
