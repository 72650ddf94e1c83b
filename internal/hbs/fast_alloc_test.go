//go:build !race

package hbs

import "testing"

// TestFastPathAllocations guards what a render of bench's template allocates: the fast paths
// read neither the model's boxed values nor the parsed body, and the render state is reused.
// (Off under -race, where sync.Pool drops what it is given at random.)
func TestFastPathAllocations(t *testing.T) {
	r := req("POST", "/users/42?q=x", `{"name":"Ada"}`, "X-Trace", "t-1")
	tpl, _ := Parse(`{{request.path.[1]}}{{request.query.q}}{{request.headers.X-Trace}}{{request.method}}{{jsonPath request.body '$.name'}}`)
	m := &Model{Request: r}
	allocs := testing.AllocsPerRun(100, func() {
		if out, err := tpl.Render(make([]byte, 0, 64), m); err != nil || string(out) != "42xt-1POSTAda" {
			t.Fatalf("render: %q, %v", out, err)
		}
	})
	if allocs > 1 { // the buffer (jsonPath of the body is written without boxing its text or answer)
		t.Errorf("%v allocations a render, want at most 1", allocs)
	}
}
