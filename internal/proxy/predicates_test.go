package proxy

import (
	"testing"

	"github.com/mockd/mockd/internal/config"
)

func mustJSON(t testing.TB, s string) config.Value {
	t.Helper()
	v, err := config.ParseJSON([]byte(s))
	if err != nil {
		t.Fatalf("ParseJSON(%s): %v", s, err)
	}
	return v
}

func TestPredicatesFor(t *testing.T) {
	req := `{"requestFrom":"1.2.3.4:5","method":"POST","path":"/a","query":{"q":"Go","page":"2"},"headers":{"X-T":"acme","Accept":"*/*"},"body":"hi","ip":"1.2.3.4"}`
	tests := []struct{ gens, want string }{
		{`[{"matches":{"path":true}}]`, `[{"deepEquals":{"path":"/a"}}]`},
		{`[{"matches":{"method":true,"path":true},"caseSensitive":true}]`,
			`[{"caseSensitive":true,"deepEquals":{"method":"POST"}},{"caseSensitive":true,"deepEquals":{"path":"/a"}}]`},
		{`[{"matches":{"query":{"q":true}}}]`, `[{"equals":{"query":{"q":"Go"}}}]`},
		{`[{"matches":{"query":{"missing":true}}}]`, `[{"equals":{"query":{}}}]`},
		{`[{"matches":{"query":true},"ignore":{"query":"page"}}]`, `[{"deepEquals":{"query":{"q":"Go"}}}]`},
		{`[{"matches":{"nope":true}}]`, `[{"deepEquals":{}}]`},
		{`[{"matches":{"path":true},"predicateOperator":"contains"}]`,
			`[{"contains":{"requestFrom":"1.2.3.4:5","method":"POST","path":"/a","query":{"q":"Go","page":"2"},"headers":{"X-T":"acme","Accept":"*/*"},"body":"hi","ip":"1.2.3.4"}}]`},
		{`[]`, `[]`},
	}
	for _, tt := range tests {
		gens := []*config.Object{}
		for _, g := range mustJSON(t, tt.gens).([]any) {
			gens = append(gens, config.AsObject(g))
		}
		got, err := PredicatesFor(config.AsObject(mustJSON(t, req)), gens, nil, nil)
		if err != nil {
			t.Fatalf("PredicatesFor(%s): %v", tt.gens, err)
		}
		if g, w := string(config.MarshalJSON(got, 0)), string(config.MarshalJSON(mustJSON(t, tt.want), 0)); g != w {
			t.Errorf("PredicatesFor(%s)\n got %s\nwant %s", tt.gens, g, w)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct{ proxy, code, msg string }{
		{`{}`, "bad data", "Missing to"},
		{`{"to":"http://h:1/path"}`, "bad data", "proxy.to must not contain a path '/path'"},
		{`{"to":"not a url"}`, "ERR_INVALID_URL", "Invalid URL"},
	}
	for _, tt := range tests {
		_, err := Compile(config.AsObject(mustJSON(t, tt.proxy)), 0)
		if err == nil || err.Code != tt.code || err.Message != tt.msg {
			t.Errorf("Compile(%s) = %v, want %s %q", tt.proxy, err, tt.code, tt.msg)
		}
	}
	if _, err := Compile(config.AsObject(mustJSON(t, `{"to":"https://h/"}`)), 0); err != nil {
		t.Errorf("Compile(https://h/) = %v, want nil", err)
	}
}

// FuzzPredicatesFor builds predicates from arbitrary requests and generators: it must not
// panic, and what it builds must render as JSON that parses back.
func FuzzPredicatesFor(f *testing.F) {
	f.Add(`{"method":"GET","path":"/","query":{"a":["1","2"]},"headers":{},"body":"{\"id\":1}"}`, `[{"matches":{"query":{"a":true}},"jsonpath":{"selector":"$.id"}}]`)
	f.Add(`{"path":"/x","body":"<a/>"}`, `[{"matches":{"path":"abc","body":[1]},"predicateOperator":"exists"}]`)
	f.Add(`{"headers":{"X":"y"}}`, `[{"matches":{"headers":true},"ignore":{"headers":["X"]}}]`)
	f.Fuzz(func(t *testing.T, reqJSON, gensJSON string) {
		rv, err := config.ParseJSON([]byte(reqJSON))
		if err != nil || config.AsObject(rv) == nil {
			return
		}
		gv, err := config.ParseJSON([]byte(gensJSON))
		list, ok := gv.([]any)
		if err != nil || !ok {
			return
		}
		var gens []*config.Object
		for _, g := range list {
			if o := config.AsObject(g); o != nil {
				gens = append(gens, o)
			}
		}
		preds, err := PredicatesFor(config.AsObject(rv), gens, nil, nil)
		if err != nil {
			return
		}
		if _, err := config.ParseJSON(config.MarshalJSON(preds, 0)); err != nil {
			t.Fatalf("predicates do not round-trip: %v", err)
		}
	})
}

// TestPredicatesForArrays: a repeated name's array is recursed into like an object, as
// Mountebank's isObject (typeof 'object') does.
func TestPredicatesForArrays(t *testing.T) {
	req := `{"method":"GET","path":"/a","query":{"q":["1","2"]},"headers":{"X-G":["y",""]},"body":""}`
	tests := []struct{ gens, want string }{
		{`[{"matches":{"query":{"q":true}}}]`, `[{"equals":{"query":{"q":{}}}}]`},
		{`[{"matches":{"headers":{"X-G":{"0":true}}}}]`, `[{"equals":{"headers":{"X-G":{"0":"y"}}}}]`},
		{`[{"matches":{"query":{"q":{"1":true,"5":true}}}}]`, `[{"equals":{"query":{"q":{"1":"2"}}}}]`},
	}
	for _, tt := range tests {
		gens := []*config.Object{}
		for _, g := range mustJSON(t, tt.gens).([]any) {
			gens = append(gens, config.AsObject(g))
		}
		got, err := PredicatesFor(config.AsObject(mustJSON(t, req)), gens, nil, nil)
		if err != nil {
			t.Fatalf("PredicatesFor(%s): %v", tt.gens, err)
		}
		if s := string(config.MarshalJSON(got, 0)); s != tt.want {
			t.Errorf("PredicatesFor(%s) = %s, want %s", tt.gens, s, tt.want)
		}
	}
}
