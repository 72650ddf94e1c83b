package match

import (
	"reflect"
	"testing"

	"github.com/mockd/mockd/internal/request"
)

// selectBoth returns what a jsonpath predicate with sel and opts selects from body, read by
// scanSelect and by the full parse (noScan).
func selectBoth(tb testing.TB, body, sel string, opts map[string]any) (scanned, parsed any, ok bool) {
	tb.Helper()
	pred := map[string]any{"equals": map[string]any{"body": "x"}, "jsonpath": map[string]any{"selector": sel}}
	for k, v := range opts {
		pred[k] = v
	}
	set, err := Compile([][]any{{pred}}, Options{})
	if err != nil {
		return nil, nil, false
	}
	p := set.stubs[0][0]
	if p.pp == nil || p.pp.sel == nil || !p.pp.sel.jpOK {
		return nil, nil, false
	}
	run := func(off bool) any {
		noScan = off
		defer func() { noScan = false }()
		r := &request.Request{Method: "POST", Path: "/", Body: body}
		c := acquireCtx(set, r, false)
		defer releaseCtx(c)
		c.cur = p
		return c.pipeString(r.Body, true)
	}
	return run(false), run(true), true
}

var scanOptions = []map[string]any{
	nil,
	{"caseSensitive": true},
	{"keyCaseSensitive": true},
	{"caseSensitive": true, "keyCaseSensitive": false},
}

func TestScanSelect(t *testing.T) {
	for _, tc := range []struct {
		name, body, sel string
		want            any // with the default options
	}{
		{"string", `{"customer":{"id":"Cust-1","tier":"gold"}}`, "$.customer.id", "cust-1"},
		{"number", `{"a":{"qty":12.5}}`, "$.a.qty", 12.5},
		{"negative zero", `{"a":-0}`, "$.a", 0.0},
		{"true", `{"a":true}`, "$.a", true},
		{"null", `{"a":null}`, "$.a", nil},
		{"object", `{"a":{"B":"C","n":1}}`, "$.a", map[string]any{"b": "c", "n": 1.0}},
		{"array sorted", `{"a":["b","a"]}`, "$.a", []any{"a", "b"}},
		{"missing", `{"a":{"b":1}}`, "$.a.c", undef},
		{"through an array", `{"a":[{"b":1}]}`, "$.a.b", undef},
		{"through a string", `{"a":"b"}`, "$.a.b", undef},
		{"upper-case key", `{"Customer":{"ID":"x"}}`, "$.customer.id", "x"},
		{"white space", " \t\r\n{ \"a\" : [ 1 , 2 ] , \"b\" : { } } \n", "$.b", map[string]any{}},
		{"invalid", `{"a":1,}`, "$.a", undef},
		{"not an object", `["a"]`, "$.a", undef},
		{"repeated key", `{"a":1,"a":2}`, "$.a", 2.0},
		{"keys that collide", `{"ID":1,"id":2,"ID":3}`, "$.id", 3.0}, // the text is lowercased first
		{"escape", `{"a":"x\"y"}`, "$.a", `x"y`},
		{"exponent", `{"a":1E2}`, "$.a", 100.0},
		{"long number", `{"a":12345678901234567890}`, "$.a", 12345678901234567890.0},
		{"string body", `"{\"a\":1}"`, "$.a", 1.0},
		{"non-ASCII key", `{"ÄB":"Ü"}`, "$.äb", "ü"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, opts := range scanOptions {
				scanned, parsed, ok := selectBoth(t, tc.body, tc.sel, opts)
				if !ok {
					t.Fatal("selector does not compile")
				}
				if !reflect.DeepEqual(scanned, parsed) {
					t.Errorf("options %v: scanned %#v, full parse %#v", opts, scanned, parsed)
				}
				if opts == nil && !reflect.DeepEqual(scanned, tc.want) {
					t.Errorf("selected %#v, want %#v", scanned, tc.want)
				}
			}
		})
	}
}

var scanSelectors = []string{"$.a", "$.a.b", "$.A.b", "$.customer.id", "$.a.b.c", "$.äb"}

// FuzzScanJSONPath: a names-only selector reads the same from the text as from the parsed body.
func FuzzScanJSONPath(f *testing.F) {
	for _, s := range []string{
		`{"customer":{"id":"cust-000","tier":"gold","tags":["a","b"]},"items":[{"sku":"x","qty":1}]}`,
		`{"A":{"b":[1,2,{"c":null}]},"a":{"B":-0.5}}`, `{"a":01}`, `{"a":1.}`, `{"a":tru}`, `{"a":"\u0041"}`,
		`{"a":{"b":{"c":{"d":true}}}}`, `{}`, `{"a":1}x`, "{\"a\":\"\x01\"}", `{"ÄÖ":{"ß":"ẞ"}}`,
	} {
		for _, sel := range []string{"$.a", "$.a.b", "$.customer.id", "$.A.B"} {
			f.Add(s, sel, 0)
		}
	}
	f.Fuzz(func(t *testing.T, body, sel string, opt int) {
		opts := scanOptions[uint(opt)%uint(len(scanOptions))]
		scanned, parsed, ok := selectBoth(t, body, sel, opts)
		if !ok {
			// Most generated selectors do not compile: read the body with a fixed one.
			sel = scanSelectors[len(sel)%len(scanSelectors)]
			scanned, parsed, _ = selectBoth(t, body, sel, opts)
		}
		if !reflect.DeepEqual(scanned, parsed) {
			t.Fatalf("body %q, selector %q, options %v: scanned %#v, full parse %#v", body, sel, opts, scanned, parsed)
		}
	})
}
