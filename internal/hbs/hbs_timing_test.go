package hbs

import "testing"

// BenchmarkRender renders a typical JSON body template: path segments, a query parameter, a
// header and a JSONPath selection from the body.
func BenchmarkRender(b *testing.B) {
	tpl, err := Parse(`{"id": "{{request.path.[1]}}", "q": "{{request.query.q}}", "trace": "{{request.headers.X-Trace}}", "name": "{{jsonPath request.body '$.name'}}", "at": "{{now format='yyyy-MM-dd'}}"}`)
	if err != nil {
		b.Fatal(err)
	}
	r := req("POST", "/users/42?q=x", `{"name": "Ada", "tags": [1, 2, 3]}`, "X-Trace", "t-1", "Content-Type", "application/json")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var buf []byte
		for pb.Next() {
			var err error
			if buf, err = tpl.Render(buf[:0], &Model{Request: r, Port: 4545, Scheme: "http"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRenderPathOnly renders the cheapest useful template: one path segment.
func BenchmarkRenderPathOnly(b *testing.B) {
	tpl, err := Parse(`{"id": "{{request.path.[1]}}"}`)
	if err != nil {
		b.Fatal(err)
	}
	r := req("GET", "/users/42", "")
	b.ReportAllocs()
	var buf []byte
	for i := 0; i < b.N; i++ {
		if buf, err = tpl.Render(buf[:0], &Model{Request: r, Port: 4545, Scheme: "http"}); err != nil {
			b.Fatal(err)
		}
	}
}
