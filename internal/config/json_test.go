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

// appendStringBytewise is AppendString one byte at a time, as it was written before it
// skipped eight bytes at once: the reference its fast path must agree with.
func appendStringBytewise(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20 && shortEscapes[c] != 0:
			dst = append(dst, '\\', shortEscapes[c])
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// TestAppendStringEscapes: every byte that needs an escape is found at each place of an
// eight-byte word and past it, beside bytes that do not (0x20, '!', '#', '[', ']', 0x7f, 0x80,
// 0xff are the neighbours of the ones that do, where a borrow would show).
func TestAppendStringEscapes(t *testing.T) {
	special := []byte{0, 1, '\b', '\t', '\n', '\f', '\r', 0x1f, '"', '\\'}
	plain := []byte{' ', '!', '#', '[', ']', 'a', 0x7f, 0x80, 0xc3, 0xff}
	for n := 0; n <= 19; n++ {
		for at := 0; at < n; at++ {
			for _, c := range special {
				for _, p := range plain {
					b := make([]byte, n)
					for i := range b {
						b[i] = p
					}
					b[at] = c
					if got, want := string(AppendString(nil, string(b))), string(appendStringBytewise(nil, string(b))); got != want {
						t.Fatalf("%q: got %s, want %s", b, got, want)
					}
				}
			}
		}
		for _, p := range plain {
			b := strings.Repeat(string(p), n)
			if got, want := string(AppendString(nil, b)), string(appendStringBytewise(nil, b)); got != want {
				t.Fatalf("%q: got %s, want %s", b, got, want)
			}
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain text of a header", "a\"b\\c\nd\x00e\x1f\x7f\xff", "0123456789abcdef\"", "é€😀 ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendString(nil, s)), string(appendStringBytewise(nil, s)); got != want {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	s := "Mon, 27 Nov 2026 23:52:04 GMT, order 7, from the origin: plain text with no escapes at all"
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendString(buf[:0], s)
	}
}

// TestWellKnownTable checks the table of well-known strings against the set it stands for:
// each string is found, as itself and boxed; a string one byte longer, shorter or different
// is not; and no search walks far.
func TestWellKnownTable(t *testing.T) {
	var words []string
	for i := range wellKnown {
		if s := wellKnown[i].s; s != "" {
			words = append(words, s)
			if wellKnown[i].v != s {
				t.Errorf("%q boxed as %v", s, wellKnown[i].v)
			}
		}
	}
	if len(words) < 90 {
		t.Fatalf("%d well-known strings", len(words))
	}
	set := map[string]bool{}
	for _, w := range words {
		set[w] = true
	}
	check := func(s string) {
		t.Helper()
		k := wellKnown.find([]byte(s))
		if (k != nil) != set[s] || (k != nil && k.s != s) {
			t.Errorf("find(%q) = %v, want found %v", s, k, set[s])
		}
	}
	check("")
	for _, w := range words {
		check(w)
		check(w + "x")
		check(w[:len(w)-1])
		for i := range len(w) {
			check(w[:i] + "_" + w[i+1:])
			check(strings.ToUpper(w[:i+1]) + w[i+1:])
		}
	}
	for i := range wellKnown {
		n := 0
		for j := i; wellKnown[j].s != ""; j = (j + 1) % knownSlots {
			n++
		}
		if n > 8 {
			t.Errorf("a search from slot %d walks %d strings", i, n)
		}
	}
}
