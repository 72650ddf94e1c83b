//go:build !race

package match

import (
	"fmt"
	"testing"

	"github.com/mockd/mockd/internal/request"
)

// TestFindMethodPathZeroAlloc guards the hot path: equals on method and path
// (case-insensitive, an uppercase method) allocates nothing.
func TestFindMethodPathZeroAlloc(t *testing.T) {
	s, err := Compile(methodPathStubs(1000), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*request.Request{
		{Method: "GET", Path: "/api/items/999"},
		{Method: "GET", Path: "/API/Items/5"},
		{Method: "GET", Path: "/none"},
	} {
		if n := testing.AllocsPerRun(200, func() { sinkInt, _ = s.Find(r) }); n != 0 {
			t.Errorf("Find(%s %s) allocates %v times per run, want 0", r.Method, r.Path, n)
		}
	}
	scanSet, err := Compile([][]any{
		{map[string]any{"matches": map[string]any{"path": "^/api/items/\\d+$"}}},
		{map[string]any{"startsWith": map[string]any{"path": "/api"}}},
		{map[string]any{"exists": map[string]any{"query": map[string]any{"q": true}}}},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &request.Request{Method: "GET", Path: "/api/items/x", Query: []request.KV{{Name: "q", Value: "1"}}}
	if n := testing.AllocsPerRun(200, func() { sinkInt, _ = scanSet.Find(r) }); n != 0 {
		t.Errorf("Find with matches/startsWith/exists allocates %v times per run, want 0", n)
	}
}

// TestFindHeaderQueryZeroAlloc: equals on one header or query parameter, indexed by its value
// and then compared, allocates nothing when the request gives that key once.
func TestFindHeaderQueryZeroAlloc(t *testing.T) {
	for _, field := range []string{"headers", "query"} {
		var stubs [][]any
		for i := 0; i < 100; i++ {
			stubs = append(stubs, []any{map[string]any{"equals": map[string]any{field: map[string]any{"X-Tenant": fmt.Sprintf("tenant-%03d", i)}}}})
		}
		s, err := Compile(stubs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for v, want := range map[string]int{"tenant-099": 99, "TENANT-050": 50, "tenant-none": -1} {
			r := &request.Request{Method: "GET", Path: "/profile"}
			kv := []request.KV{{Name: "Accept", Value: "*/*"}, {Name: "x-tenant", Value: v}}
			if field == "headers" {
				r.Headers = kv
			} else {
				r.Query = kv
			}
			if got, err := s.Find(r); got != want || err != nil {
				t.Errorf("Find with %s X-Tenant %s = %d, %v; want %d", field, v, got, err, want)
			}
			if n := testing.AllocsPerRun(200, func() { sinkInt, _ = s.Find(r) }); n != 0 {
				t.Errorf("Find with %s X-Tenant %s allocates %v times per run, want 0", field, v, n)
			}
		}
	}
}

// TestFindJSONBodyZeroAlloc: equals on method, path and JSON body fields (strings, in any case,
// and a number), read by scanning the body, allocates nothing.
func TestFindJSONBodyZeroAlloc(t *testing.T) {
	var stubs [][]any
	for i := 0; i < 100; i++ {
		stubs = append(stubs, []any{map[string]any{"equals": map[string]any{"method": "POST", "path": "/orders",
			"body": map[string]any{"orderId": fmt.Sprintf("ord-%03d", i), "customer": "acme", "qty": float64(i%7 + 1), "sku": fmt.Sprintf("SKU-%03d", i)}}}})
	}
	s, err := Compile(stubs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for body, want := range map[string]int{
		`{"orderId":"ord-000","customer":"acme","qty":1,"sku":"SKU-000"}`: 0,
		`{"orderId":"ORD-049","customer":"Acme","qty":1,"sku":"sku-049"}`: 49,
		`{"orderId":"ord-049","customer":"acme","qty":2,"sku":"SKU-049"}`: -1,
	} {
		var r request.Request
		fill := func() {
			r.Reset()
			r.Method, r.Path, r.Body = "POST", "/orders", body
		}
		fill()
		if got, err := s.Find(&r); got != want || err != nil {
			t.Errorf("Find(%s) = %d, %v; want %d", body, got, err, want)
		}
		// A fresh request each run: no parse memoized by the one before.
		if n := testing.AllocsPerRun(200, func() { fill(); sinkInt, _ = s.Find(&r) }); n != 0 {
			t.Errorf("Find(%s) allocates %v times per run, want 0", body, n)
		}
	}
}
