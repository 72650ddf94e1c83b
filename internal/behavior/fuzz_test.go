package behavior

import (
	"context"
	"testing"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

// FuzzCopyLookup sends arbitrary request bodies and selectors through copy (regex, jsonpath,
// xpath) and lookup; nothing may panic.
func FuzzCopyLookup(f *testing.F) {
	f.Add(`{"user":{"id":42,"name":"Bob"},"items":[{"sku":"x1"}]}`, "$.user.id")
	f.Add(`<root xmlns:p="urn:p"><p:item id="1">one</p:item></root>`, "//p:item/@id")
	f.Add(`id=42&name=ann`, `id=(\d+)`)
	f.Add(`{"a":[1,[2,[3]]]}`, "$..*")
	f.Add(`<a><![CDATA[x]]><!-- c --></a>`, "//a/text()")
	f.Add("\xff\xfe<", "$[?(@.a>1)]")
	f.Fuzz(func(t *testing.T, body, sel string) {
		r := &request.Request{Method: "POST", Path: "/p/42", Body: body,
			Query: []request.KV{{Name: "q", Value: body}}, Headers: []request.KV{{Name: "X", Value: sel}}}
		var behaviors []any
		for _, method := range []string{"regex", "jsonpath", "xpath"} {
			using := config.NewObject("method", method, "selector", sel, "ns", config.NewObject("p", "urn:p"))
			behaviors = append(behaviors,
				config.NewObject("copy", config.NewObject("from", "body", "into", "${T}", "using", using)),
				config.NewObject("copy", config.NewObject("from", config.NewObject("query", "q"), "into", "${Q}", "using", using)),
				config.NewObject("lookup", config.NewObject(
					"key", config.NewObject("from", "body", "using", using),
					"fromDataSource", config.NewObject("csv", config.NewObject("path", "testdata/people.csv", "keyColumn", "id")),
					"into", "${ROW}")))
		}
		comp, err := Compile(behaviors, Options{})
		if err != nil {
			t.Fatal(err)
		}
		resp := config.NewObject("statusCode", 200.0, "headers", config.NewObject("X-${T}", "${Q}"),
			"body", config.NewObject("a", "${T}[1] ${ROW}[name]", "b", []any{"${T}", 1.0}))
		_, _ = comp.Apply(context.Background(), r, resp, nil)
		_ = Validate(behaviors)
	})
}
