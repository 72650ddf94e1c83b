package script

import (
	"encoding/json"
	"testing"
)

func TestJSONValues(t *testing.T) {
	for _, tt := range []struct {
		text string
		want int
	}{
		{``, 1},
		{`1`, 1},
		{`[1,2,3]`, 4},
		{`{"a":1,"b":[2,3]}`, 7},
		{`"a,b:c"`, 1},
		{`["a\",b", "c\\", ","]`, 4},
		{`[[],{}]`, 5},
		{`"unterminated ,,,`, 1},
		{`,,,`, 4},
	} {
		if got := jsonValues(tt.text); got != tt.want {
			t.Errorf("jsonValues(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

// countValues is how many values a JSON document holds (every value, its members' included).
func countValues(v any) int {
	n := 1
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			n += countValues(e)
		}
	case map[string]any:
		for _, e := range v {
			n += countValues(e)
		}
	}
	return n
}

// FuzzJSONValues: jsonValues never panics, and never answers fewer values than a JSON text
// holds (the bound the prelude's JSON.parse refuses by must not refuse a text that would fit).
func FuzzJSONValues(f *testing.F) {
	for _, s := range []string{`[1,2]`, `{"a":[1,{"b":"c,d"}]}`, `"\\\""`, `[[],[[]]]`, `1`, `[[1],[2],{"a":{}}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		n := jsonValues(text)
		var v any
		if json.Unmarshal([]byte(text), &v) != nil {
			return
		}
		if n < countValues(v) {
			t.Errorf("jsonValues(%q) = %d, the text holds %d", text, n, countValues(v))
		}
	})
}
