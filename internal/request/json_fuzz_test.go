package request

import (
	stdjson "encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzParseJSON checks that goccy/go-json (the fast parser) and
// encoding/json agree on every input, and that ParseJSON never panics.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,2,{"b":[null,true,false]}]`, `"x\u0041"`, `1e400`, `-0`, `{"a":"\ud800"}`,
		`{"a":1,"a":2}`, ` 5 `, `[`, `{"a" 1}`, `"\xff"`, `0.1e-7`, `{"store":{"book":[{"price":8.95}]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := ParseJSON(s)
		var want any
		err := stdjson.Unmarshal([]byte(s), &want)
		if !utf8.ValidString(s) {
			return // request bodies are valid UTF-8 after decoding
		}
		if (err == nil) != ok {
			t.Fatalf("ParseJSON(%q) ok = %v, encoding/json err = %v", s, ok, err)
		}
		if ok && !reflect.DeepEqual(v, want) {
			t.Fatalf("ParseJSON(%q) = %#v, encoding/json = %#v", s, v, want)
		}
	})
}
