//go:build !race

package match

import (
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
