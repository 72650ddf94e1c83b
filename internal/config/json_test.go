package config

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mockd/mockd/internal/jsvalue"
)

func TestParseJSONKeepsOrderAndRoundTrips(t *testing.T) {
	tests := []struct {
		in, compact, indented string
	}{
		{`{"b":1,"a":[true,null,"x"]}`, `{"b":1,"a":[true,null,"x"]}`, "{\n    \"b\": 1,\n    \"a\": [\n        true,\n        null,\n        \"x\"\n    ]\n}"},
		{`{"a":1,"a":2}`, `{"a":2}`, "{\n    \"a\": 2\n}"},
		{`{}`, `{}`, `{}`},
		{`[]`, `[]`, `[]`},
		{`{"e":{}}`, `{"e":{}}`, "{\n    \"e\": {}\n}"},
		{`"\u00e9\n\u0001"`, `"é\n\u0001"`, `"é\n\u0001"`},
		{`"\ud83d\ude00"`, `"😀"`, `"😀"`},
		{`1.50`, `1.5`, `1.5`},
		{`1e21`, `1e+21`, `1e+21`},
		{`-0`, `0`, `0`},
		{`0.0000001`, `1e-7`, `1e-7`},
		{`123456789012`, `123456789012`, `123456789012`},
		{`"</script>&"`, `"</script>&"`, `"</script>&"`},
	}
	for _, tt := range tests {
		v, err := ParseJSON([]byte(tt.in))
		if err != nil {
			t.Fatalf("ParseJSON(%q): %v", tt.in, err)
		}
		if got := string(MarshalJSON(v, 0)); got != tt.compact {
			t.Errorf("MarshalJSON(ParseJSON(%q), 0) = %q, want %q", tt.in, got, tt.compact)
		}
		if got := string(MarshalJSON(v, 4)); got != tt.indented {
			t.Errorf("MarshalJSON(ParseJSON(%q), 4) = %q, want %q", tt.in, got, tt.indented)
		}
	}
}

func TestParseJSONRejectsWhatJSONParseRejects(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a"}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `+1`, `'a'`, `{a:1}`, `"a` + "\n" + `"`, `tru`, `nul`, `[1] x`, `"\x"`, `NaN`} {
		if _, err := ParseJSON([]byte(in)); err == nil {
			t.Errorf("ParseJSON(%q) succeeded, want an error", in)
		}
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	_, err := ParseJSON([]byte("{\n  \"a\": 1,\n  \"b\": ]\n}"))
	se, ok := err.(*SyntaxError)
	if !ok || se.Line != 3 || se.Column != 8 {
		t.Fatalf("got %v, want a SyntaxError at line 3, column 8", err)
	}
}

// FuzzParseJSON checks the config JSON parser against encoding/json: both accept the same
// documents and decode them to the same plain values.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"imposters":[{"port":4545,"protocol":"http","stubs":[{"responses":[{"is":{"body":"x"}}]}]}]}`,
		`[1,2.5,-3e4,"a\u0041",true,false,null,{}]`, `{"a":{"b":[{"c":"\ud83d\ude00"}]}}`, `"x"`, `{"a":1,"a":2}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"a":17,"q":{"r":1,"r":2},"b":18}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseJSON(data)
		var want any
		// Node decodes the bytes (jsvalue.DecodeUTF8) before JSON.parse reads them; encoding/json
		// would replace each invalid byte on its own.
		stdErr := json.Unmarshal([]byte(jsvalue.DecodeUTF8(data)), &want)
		if stdErr != nil && strings.Contains(stdErr.Error(), "cannot unmarshal number") {
			return // JSON.parse gives ±Infinity for out-of-range numbers; encoding/json refuses them
		}
		if (err == nil) != (stdErr == nil) {
			// encoding/json accepts invalid UTF-8 and lone surrogates the same way; anything else must agree.
			t.Fatalf("ParseJSON error %v, encoding/json error %v, input %q", err, stdErr, data)
		}
		if err != nil {
			return
		}
		out := MarshalJSON(v, 0)
		v2, err := ParseJSON(out)
		if err != nil {
			t.Fatalf("cannot re-parse %q: %v", out, err)
		}
		if a, b := string(MarshalJSON(v2, 0)), string(out); a != b {
			t.Fatalf("round trip changed %q into %q", b, a)
		}
		gotPlain, _ := json.Marshal(Plain(v))
		wantPlain, _ := json.Marshal(want)
		if !strings.EqualFold(string(gotPlain), string(wantPlain)) && string(gotPlain) != string(wantPlain) {
			t.Fatalf("decoded %s, encoding/json decoded %s", gotPlain, wantPlain)
		}
	})
}
