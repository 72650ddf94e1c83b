package match

import (
	"reflect"
	"testing"

	"github.com/mockd/mockd/internal/jsvalue"
	"github.com/mockd/mockd/internal/request"
)

// selectBoth returns what a jsonpath predicate with sel and opts selects from body, read by
// scanSelect and by the full parse (a Set withoutScans).
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
	if !p.fast || p.pp.sel == nil || p.pp.sel.jpKeys == nil {
		// Only names-only selectors of fast nodes are scanned. (Others select from maps in Go's
		// random order, so two selections of $.. may differ in order.)
		return nil, nil, false
	}
	run := func(s *Set) any {
		r := &request.Request{Method: "POST", Path: "/", Body: body}
		c := acquireCtx(s, r)
		defer releaseCtx(c)
		c.cur = p
		return c.selected()
	}
	return run(set), run(set.withoutScans()), true
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
		{"missing", `{"a":{"b":1}}`, "$.a.c", jsvalue.Undef},
		{"through an array", `{"a":[{"b":1}]}`, "$.a.b", jsvalue.Undef},
		{"through a string", `{"a":"b"}`, "$.a.b", jsvalue.Undef},
		{"upper-case key", `{"Customer":{"ID":"x"}}`, "$.customer.id", "x"},
		{"white space", " \t\r\n{ \"a\" : [ 1 , 2 ] , \"b\" : { } } \n", "$.b", map[string]any{}},
		{"invalid", `{"a":1,}`, "$.a", jsvalue.Undef},
		{"not an object", `["a"]`, "$.a", jsvalue.Undef},
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
					if opts == nil {
						t.Fatal("selector does not compile")
					}
					continue // keys and values cased apart: the reference selects
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

// fieldsBoth reads keys from body as an equals predicate with opts sees its body: with
// scanFields (nil when it leaves the body to the parse) and with the parse (bodyValue), strings
// as the pipe makes them, objects and arrays as scannedComplex.
func fieldsBoth(tb testing.TB, body string, keys []string, opts map[string]any) (scanned, parsed []any) {
	tb.Helper()
	exp := map[string]any{}
	for _, k := range keys {
		exp[k] = "x"
	}
	pred := map[string]any{"equals": map[string]any{"body": exp}}
	for k, v := range opts {
		pred[k] = v
	}
	set, err := Compile([][]any{{pred}}, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	p := set.stubs[0][0]
	// The expected keys as the predicate compares them (lowercased without keyCaseSensitive).
	keys = p.exp.vals[0].(*eobj).keys
	r := &request.Request{Method: "POST", Path: "/", Body: body}
	c := acquireCtx(set, r)
	defer releaseCtx(c)
	c.cur = p
	so := c.scanFields(keys)
	if so == nil {
		return nil, nil
	}
	for i := range keys {
		switch so.kind[i] {
		case scannedRaw:
			s := so.strs[i]
			if p.pp.valLower {
				s = jsvalue.ToLower(s)
			}
			scanned = append(scanned, s)
		case scannedNum:
			scanned = append(scanned, so.nums[i])
		case scannedComplex:
			scanned = append(scanned, scannedComplex)
		default:
			scanned = append(scanned, so.vals[i])
		}
	}
	for _, k := range keys {
		v, sure := c.bodyValue(k)
		switch {
		case sure != yes:
			parsed = append(parsed, "unsure")
		case isObject(v):
			parsed = append(parsed, scannedComplex)
		default:
			parsed = append(parsed, v)
		}
	}
	return scanned, parsed
}

func TestScanFields(t *testing.T) {
	keySets := [][]string{{"id"}, {"ID", "n"}, {"a", "id", "Z"}}
	scannedAny := 0
	for _, body := range []string{
		`{"id":"X","n":"A"}`, `{"ID":"Ab","n":[1,"B",{"C":"D"}],"z":{"Y":"Q"}}`, `{"Id":1,"iD":2}`, `{"id":"1","id":"1"}`,
		`{"id":-0.5,"n":null,"a":true,"z":false}`, `{"id":"ÄÖ","N":"ẞ"}`, `{"id":1e3}`, `{"id":"a\"b"}`, `[{"id":1}]`,
		`{"id":1,}`, `{}`, `not json`, ` { "id" : "x" } `, `{"n":{"id":"inner"}}`,
	} {
		for _, keys := range keySets {
			for _, opts := range scanOptions {
				scanned, parsed := fieldsBoth(t, body, keys, opts)
				if scanned == nil {
					continue
				}
				scannedAny++
				if !reflect.DeepEqual(scanned, parsed) {
					t.Errorf("body %s, keys %v, options %v: scanned %#v, parsed %#v", body, keys, opts, scanned, parsed)
				}
			}
		}
	}
	if scannedAny < 80 {
		t.Errorf("only %d readings were scanned", scannedAny)
	}
}

// FuzzScanFields: reading a few keys of a body by scanning gives what the full parse gives.
func FuzzScanFields(f *testing.F) {
	f.Add(`{"id":"X","n":"A"}`, 0, 0)
	f.Add(`{"ID":"Ab","n":[1,"B",{"C":"D"}],"z":{"Y":"Q"}}`, 1, 1)
	f.Add(`{"id":-0.5,"n":null,"a":true,"z":false}`, 2, 2)
	f.Add(`{"id":"ÄÖ","N":"ẞ"}`, 1, 3)
	f.Fuzz(func(t *testing.T, body string, keySet, opt int) {
		keys := [][]string{{"id"}, {"ID", "n"}, {"a", "id", "Z"}}[uint(keySet)%3]
		opts := scanOptions[uint(opt)%uint(len(scanOptions))]
		scanned, parsed := fieldsBoth(t, body, keys, opts)
		if scanned != nil && !reflect.DeepEqual(scanned, parsed) {
			t.Fatalf("body %q, keys %v, options %v: scanned %#v, parsed %#v", body, keys, opts, scanned, parsed)
		}
	})
}

// TestScanReusedOnlyBySamePipe: stubs that read the same key through pipes that transform it
// differently do not share one scan's values.
func TestScanReusedOnlyBySamePipe(t *testing.T) {
	stubs := [][]any{
		{map[string]any{"equals": map[string]any{"body": map[string]any{"id": "x"}}, "caseSensitive": true}},
		{map[string]any{"equals": map[string]any{"body": map[string]any{"id": "x"}}}},
		{map[string]any{"contains": map[string]any{"body": map[string]any{"id": "x"}}, "caseSensitive": true}},
		{map[string]any{"contains": map[string]any{"body": map[string]any{"id": "x"}}}},
	}
	for _, tc := range []struct {
		stubs [][]any
		want  int
	}{{stubs[:2], 1}, {stubs[2:], 1}} {
		s, err := Compile(tc.stubs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := &request.Request{Method: "POST", Path: "/", Body: `{"id":"X"}`}
		if got, err := s.Find(r); got != tc.want || err != nil {
			t.Errorf("Find = %d, %v; want %d", got, err, tc.want)
		}
	}
}
