package proxy

import (
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// The predicateGenerators Mountebank 2.9.1's dry run throws a TypeError on (checked side by side,
// test/compat scenario proxy-generators-dry-run).
func TestDryRunGenerators(t *testing.T) {
	tests := []struct {
		gen       string
		http, tcp bool // refused
	}{
		{`{"matches":{"path":true}}`, false, false},
		{`{"matches":{"query":true},"ignore":{"query":"ts"}}`, false, true},
		{`{"matches":{"path":true},"ignore":{"query":"ts"}}`, true, true},
		{`{"matches":{"data":true},"ignore":{"data":"x"}}`, true, false},
		{`{"matches":{"query":true},"ignore":"ts"}`, true, true},
		{`{"matches":{"body":true},"ignore":{"body":"length"}}`, true, true},
		{`{"matches":{"ip":true},"ignore":{"ip":5}}`, false, false},
		{`{}`, true, true},
		{`{"matches":null}`, true, true},
		{`{"matches":"ab"}`, true, true},
		{`{"matches":5}`, false, false},
		{`{"matches":{"x":{"a":1}}}`, true, true},
		{`{"matches":{"query":{"a":true}}}`, false, true},
		{`{"matches":{"method":true},"predicateOperator":"exists"}`, true, false},
		{`{"matches":{"headers":{"a":true}},"predicateOperator":"equals"}`, false, false},
		{`{"inject":"function () { return []; }"}`, false, false},
	}
	for _, tt := range tests {
		v, err := config.ParseJSON([]byte(tt.gen))
		if err != nil {
			t.Fatal(err)
		}
		gens := []*config.Object{v.(*config.Object)}
		if got := DryRunGenerators(gens, HTTPTestRequest(), true) != nil; got != tt.http {
			t.Errorf("http %s: refused %v, want %v", tt.gen, got, tt.http)
		}
		if got := DryRunGenerators(gens, config.NewObject("data", "test"), false) != nil; got != tt.tcp {
			t.Errorf("tcp %s: refused %v, want %v", tt.gen, got, tt.tcp)
		}
	}
	err := DryRunGenerators([]*config.Object{config.NewObject()}, HTTPTestRequest(), true)
	err.Source = "{}"
	if got := string(config.MarshalJSON(err.Render(), 0)); got != `{"source":"{}"}` {
		t.Errorf("rendered %s, want the source alone", got)
	}
}
