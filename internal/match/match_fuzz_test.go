package match

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ohler55/ojg/jp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/request"
)

var fuzzRequest = func() *request.Request {
	r := &request.Request{
		Method: "POST", Path: "/users/42",
		Query:   []request.KV{{Name: "q", Value: "1"}, {Name: "q", Value: "2"}, {Name: "Name", Value: "x"}},
		Headers: []request.KV{{Name: "Content-Type", Value: "application/json"}, {Name: "x-a", Value: ""}, {Name: "X-A", Value: "b"}},
		Body:    `{"a":[1,{"b":"c"}],"n":null,"Name":"Mixed"}`,
	}
	r.SetClient("::ffff:127.0.0.1", "::ffff:127.0.0.1:5000")
	return r
}()

// FuzzCompile: arbitrary JSON predicates never panic, at compile time or
// when evaluated.
func FuzzCompile(f *testing.F) {
	for _, tc := range loadMBCases(f) {
		b, _ := json.Marshal([]any{tc.Predicate})
		f.Add(string(b), tc.Binary)
	}
	f.Add(`[{"or":[{"and":[{"not":{"equals":{"path":"/"}}}]}]}]`, false)
	f.Add(`[{"matches":{"body":"(?<x>a)\\k<x>"}}]`, false)
	f.Add(`[{"equals":{"body":{"0":{"length":1}}},"xpath":{"selector":"//a:b","ns":{"a":1}}}]`, false)
	f.Fuzz(func(t *testing.T, s string, binary bool) {
		var preds []any
		if json.Unmarshal([]byte(s), &preds) != nil {
			var one any
			if json.Unmarshal([]byte(s), &one) != nil {
				return
			}
			preds = []any{one}
		}
		set, err := Compile([][]any{preds}, Options{Binary: binary, TCP: binary})
		if err != nil {
			return
		}
		r := *fuzzRequest
		r.Query = append([]request.KV(nil), fuzzRequest.Query...)
		_, _ = set.Find(&r)
		r.TCP = true
		r.SetDataText("aGVsbG8=")
		_, _ = set.Find(&r)
	})
}

// FuzzFind: arbitrary request fields and bodies never panic against a fixed
// set of predicates that parse bodies every way.
func FuzzFind(f *testing.F) {
	stubs := [][]any{}
	if err := json.Unmarshal([]byte(fuzzFindStubs), &stubs); err != nil {
		f.Fatal(err)
	}
	set, err := Compile(stubs, Options{})
	if err != nil {
		f.Fatal(err)
	}
	addFuzzFindSeeds(f)
	f.Fuzz(func(t *testing.T, method, path, query, hname, hvalue, body string) {
		r := fuzzFindRequest(method, path, query, hname, hvalue, body)
		defer request.Release(r)
		got, gerr := set.Find(r)
		want, werr := scanParsed(set, r)
		ref, rerr := plainFind(set, r)
		if got != want || (gerr == nil) != (werr == nil) || !sameAnswer(got, gerr, ref, rerr) {
			t.Fatalf("indexed Find = %d, %v; scan = %d, %v; reference = %d, %v", got, gerr, want, werr, ref, rerr)
		}
	})
}

// fuzzFindStubs are the stubs of FuzzFind and FuzzReference: predicates that parse bodies
// every way.
const fuzzFindStubs = `[
	[{"equals":{"body":{"a":[1,{"b":"c"}]}}}],
	[{"deepEquals":{"body":{"a":"1"}}}],
	[{"deepEquals":{"query":{"q":["1","2"]},"headers":{"x":"y"}}}],
	[{"equals":{"body":"x"},"jsonpath":{"selector":"$..b"}}],
	[{"deepEquals":{"body":["c"]},"jsonpath":{"selector":"$.a[*]"}}],
	[{"matches":{"body":"^\\s*<"},"xpath":{"selector":"//a/@id"}}],
	[{"equals":{"body":2},"xpath":{"selector":"count(//b:x)","ns":{"b":"urn:b"}}}],
	[{"deepEquals":{"body":{"x":"1"}},"xpath":{"selector":"//x"}}],
	[{"exists":{"body":{"n":false},"form":{"a":true}}}],
	[{"contains":{"body":{"a":"q"}},"except":"\\d+"}],
	[{"startsWith":{"headers":{"content-type":"app"}},"keyCaseSensitive":false,"caseSensitive":true}],
	[{"endsWith":{"query":{"q":"2"}}}],
	[{"not":{"or":[{"equals":{"method":"GET"}},{"matches":{"path":"^/a.*$"}}]}}],
	[{"equals":{"body":{"x":{"length":2}}}}],
	[{"equals":{"body":{"id":1,"kind":"a"}}}],
	[{"equals":{"body":{"id":"2"}},"caseSensitive":true}],
	[{"equals":{"body":{"ID":true}}}],
	[{"equals":{"path":"/o","body":{"k":"same","id":"1"}}}],
	[{"equals":{"path":"/o","body":{"k":"same","id":"2"}}}],
	[{"equals":{"method":"POST","path":"/o","body":{"id":"3","k":"same"}},"caseSensitive":true}],
	[{"equals":{"path":"/p","body":{"id":"1"}}}],
	[{"equals":{"headers":{"X-Tenant":"t1"}}}],
	[{"equals":{"headers":{"x-tenant":"T2"},"path":"/o"}}],
	[{"equals":{"query":{"tenant":"t1"}},"caseSensitive":true}],
	[{"equals":{"query":{"Tenant":"t3","q":"1"}}}],
	[{"matches":{"path":"^/api/v2/items1/\\d+/details$"}}],
	[{"matches":{"path":"^/API/"}}],
	[{"matches":{"path":"^/k"},"caseSensitive":true}],
	[{"matches":{"path":"^/ks"}}],
	[{"deepEquals":{"method":"PUT"}},{"deepEquals":{"path":"/o"}}],
	[{"equals":{"method":"get"},"caseSensitive":true},{"equals":{"path":"/x"}}],
	[{"startsWith":{"method":"P"}},{"equals":{"path":"/p"}}],
	[{"equals":{"method":"GET"}},{"equals":{"path":"/a/b"}},{"equals":{"query":{"q":"1"}}}],
	[]
]`

func addFuzzFindSeeds(f *testing.F) {
	f.Add("GET", "/", "q=1&q=2", "Content-Type", "application/json", `{"a":[1,{"b":"c"}]}`)
	f.Add("POST", "/a/b", "", "x", "y", `<a id="1"><b:x xmlns:b="urn:b"/></a>`)
	f.Add("PUT", "/É", "%zz=%", "X-A", "", `[{"a":"1"},{"a":2}]`)
	f.Add("get", "/x", "a", "content-type", "application/x-www-form-urlencoded", `a=1&a=&b`)
	f.Add("POST", "/o", "", "Content-Type", "application/json", `{"k":"SAME","id":"2"}`)
	f.Add("POST", "/p", "", "Content-Type", "application/json", `{"k":"same","id":["3","1"]}`)
	f.Add("GET", "/o", "tenant=t1&Tenant=T3&q=1", "X-TENANT", "t2", ``)
	f.Add("GET", "/api/v2/items1/42/details", "", "", "", ``)
	f.Add("GET", "/Ks", "", "", "", ``)
}

// fuzzFindRequest builds the request of FuzzFind's inputs: the header is sent twice, with its
// value and with the body. Release it when done.
func fuzzFindRequest(method, path, query, hname, hvalue, body string) *request.Request {
	r := request.Acquire()
	r.Method, r.Path, r.Body = method, path, body
	r.Query = request.ParseQuery(r.Query, query)
	r.Headers = append(r.Headers, request.KV{Name: hname, Value: hvalue}, request.KV{Name: hname, Value: body})
	if request.IsURLEncodedForm(hvalue) && body != "" {
		r.Form, r.HasForm = request.ParseQuery(r.Form, body), true
	}
	return r
}

// FuzzChildPath checks that a selector of names only ($.a.b), which safeJPGet walks itself,
// selects what ojg's Get selects on the same parsed document.
func FuzzChildPath(f *testing.F) {
	for _, c := range [][2]string{
		{`{"customer":{"id":"c-1","tags":["a"]}}`, `$.customer.id`},
		{`{"a":{"b":null}}`, `$.a.b`},
		{`{"a":{"b":null}}`, `$.a.b.c`},
		{`{"a":[{"b":1}]}`, `$.a.b`},
		{`{"a":"text"}`, `$.a.length`},
		{`[1,2]`, `$.a`},
		{`{"a":{"":1}}`, `$.a.`},
		{`{"a b":{"c":1}}`, `$['a b'].c`},
		{`{"a":1}`, `$`},
		{`{"a":{"b":{"c":{"d":false}}}}`, `$.a.b.c.d`},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, doc, path string) {
		x, err := jp.ParseString(path)
		if err != nil {
			return
		}
		keys := childNames(x)
		if keys == nil {
			return
		}
		v, ok := request.ParseJSON(doc)
		if !ok {
			return
		}
		want := x.Get(v)
		got, _ := config.Plain(safeJPGet(&selector{jpExpr: x, jpKeys: keys}, v)).([]any)
		if len(want) == 0 && len(got) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s on %s: walked %#v, ojg %#v", path, doc, got, want)
		}
	})
}
