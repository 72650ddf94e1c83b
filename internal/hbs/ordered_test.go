package hbs

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ohler55/ojg/jp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

// TestJSONPathDocumentOrder: wildcards, filters and recursive descent over objects select in
// the document's order, as WireMock does (they came in Go's map order, which changes from one
// run to the next), whether the document is the body, another string or a parsed value.
func TestJSONPathDocumentOrder(t *testing.T) {
	var keys []string
	var b strings.Builder
	b.WriteString("{")
	for i := range 30 {
		k := fmt.Sprintf("k%c%d", 'z'-i%26, i) // neither sorted nor in a map's order
		keys = append(keys, k)
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"%s":"%s"`, k, k)
	}
	b.WriteString("}")
	wide := b.String()
	nested := `{"name":"a","z":1,"child":{"name":"b","x":{"name":"c"}},"arr":[{"name":"d"},{"name":"e","k":{"name":"f"}}],"b":2,"name2":{"name":"g"}}`
	for _, tc := range []struct{ doc, tpl, want string }{
		{wide, "{{#each (jsonPath DOC '$.*')}}{{this}},{{/each}}", strings.Join(keys, ",") + ","},
		{wide, "{{join (jsonPath DOC '$..*') ','}}", strings.Join(keys, ",")},
		{nested, "{{join (jsonPath DOC '$..name') ','}}", "a,b,c,d,e,f,g"},
		{nested, "{{join (jsonPath DOC '$.arr..name') ','}}", "d,e,f"},
		{nested, "{{join (jsonPath DOC '$..[?(@.name)].name') ','}}", "b,g,c,d,e,f"}, // the filter of each value's members
		{nested, "{{join (jsonPath DOC '$.*.name') ','}}", "b,g"},
		{nested, "{{size (jsonPath DOC '$..*')}}", "16"},
		{`{"b":{"y":1,"x":2},"a":[3,{"q":4}]}`, "{{toJson (jsonPath DOC '$..*')}}", `[{"x":2,"y":1},[3,{"q":4}],1,2,3,{"q":4},4]`},
		{`{"n":null}`, "{{jsonPath DOC '$.*' default='D'}}", "D"},
		// Keys that are array indexes keep their place too (JavaScript's order, Mountebank's
		// predicates', puts them first).
		{`{"b":1,"2":2,"a":3,"1":4}`, "{{join (jsonPath DOC '$.*') ','}}", "1,2,3,4"},
		// A descent after a wildcard applies to each value the wildcard selects, as in Jayway
		// (ojg alone selected 1 only).
		{`[{"a":1},[{"a":2}],{"b":{"a":3}}]`, "{{join (jsonPath DOC '$.*..a') ','}}", "1,2,3"},
		// A filter ojg cannot run on a value selects nothing (it panicked).
		{`null`, "{{jsonPath DOC '$..[?(@.price < 10)]' default='D'}}", "D"},
		{`not json`, "{{jsonPath DOC '$.*' default='D'}}", "D"},
	} {
		for _, doc := range []string{"request.body", "(replace request.body 'QQQ' '')", "(parseJson request.body)"} {
			src := strings.ReplaceAll(tc.tpl, "DOC", doc)
			if strings.HasPrefix(doc, "(parseJson") && tc.doc == "not json" {
				continue
			}
			body := tc.doc
			if strings.Contains(doc, "QQQ") {
				body = "QQQ" + body
			}
			for range 3 { // Go's map order would differ between these
				// (toJson writes as Jackson's pretty printer: compared without its white space)
				if got := render(t, src, &request.Request{Body: body}); strings.Join(strings.Fields(got), "") != tc.want {
					t.Errorf("%s of %s: %s, want %s", src, tc.doc, got, tc.want)
					break
				}
			}
		}
	}
}

// TestOrderedSelectIsOjgsSelection: the ordered walk selects what ojg selects from the same
// document as plain maps, only in another order (but for a descent after a wildcard, where ojg
// selects less than Jayway: see TestJSONPathDocumentOrder).
func TestOrderedSelectIsOjgsSelection(t *testing.T) {
	docs := []string{
		`{"name":"a","z":1,"child":{"name":"b","x":{"name":"c"}},"arr":[{"name":"d"},{"name":"e","k":{"name":"f"}}],"b":2,"name2":{"name":"g"}}`,
		`{"a":[[1,[2,{"a":3}]],{"a":{"a":[4]}}],"b":{"c":{"d":{"a":null}}},"s":"str","e":{},"f":[]}`,
		`[{"a":1},[{"a":2}],{"b":{"a":3}}]`, `"x"`, `3`, `null`, `{"a":1,"a":{"a":2}}`,
		`{"store":{"book":[{"price":8,"t":"x"},{"price":12,"t":"y"},{"price":9,"t":"z","isbn":"1"}],"bicycle":{"price":19}}}`,
	}
	paths := []string{"$.*", "$..*", "$..a", "$..a.a", "$..a[0]", "$..[0]", "$..*.a", "$..b..a", "$..[*]",
		"$..[?(@.price < 10)].t", "$.store..price", "$..book[?(@.isbn)]", "$..['a','b']", "$..a..a", "$..", "$.a..",
		"$[*].a", "$..[1:]", "$.store.book[*].t", "$..length"}
	text := func(vs []any) []string {
		out := make([]string, len(vs))
		for i, v := range vs {
			out[i] = string(config.MarshalJSON(config.FromPlain(config.Plain(v)), 0))
		}
		slices.Sort(out)
		return out
	}
	for _, doc := range docs {
		v, err := config.ParseJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			x, err := jp.ParseString(p)
			if err != nil {
				t.Fatal(err)
			}
			got := append([]any(nil), orderedSelect(x, v)...)
			var want []any
			func() {
				defer func() { _ = recover() }() // ojg panics on some filters of null
				want = x.Get(config.Plain(v))
			}()
			if a, b := text(got), text(want); !slices.Equal(a, b) {
				t.Errorf("%s of %s: %v, ojg %v", p, doc, a, b)
			}
		}
	}
}
