package jsonscan

import "testing"

// TestScanJSONPathResult: what the scanner reads itself and what it leaves to the parse.
func TestScanJSONPathResult(t *testing.T) {
	for _, tc := range []struct {
		body string
		keys []string
		want Result
		text string // the value found
	}{
		{`{"customer":{"id":"c-1"}}`, []string{"customer", "id"}, Found, `"c-1"`},
		{`{"Customer":{"ID":[1, {"a":2}]}}`, []string{"customer", "id"}, Found, `[1, {"a":2}]`},
		{`{"a":{"b":1}}`, []string{"a", "c"}, Missing, ""},
		{`{"a":[{"b":1}]}`, []string{"a", "b"}, Missing, ""},
		{`{"a":1,"A":2}`, []string{"a"}, Unsure, ""}, // a key repeated (after lowercasing)
		{`{"a":"\n"}`, []string{"a"}, Unsure, ""},    // an escape
		{`{"a":"x\"y"}`, []string{"a"}, Unsure, ""},  // an escape
		{`{"a":1e2}`, []string{"a"}, Unsure, ""},     // an exponent
		{`{"a":1234567890123456}`, []string{"a"}, Unsure, ""},
		{`[{"a":1}]`, []string{"a"}, Unsure, ""}, // not an object
		{`{"a":1} x`, []string{"a"}, Unsure, ""}, // trailing text
		{`{"a":01}`, []string{"a"}, Unsure, ""},  // not JSON
	} {
		start, end, res := Path(tc.body, tc.keys, true)
		if res != tc.want || (res == Found && tc.body[start:end] != tc.text) {
			t.Errorf("Path(%s, %v) = %d %q, want %d %q", tc.body, tc.keys, res, tc.body[start:end], tc.want, tc.text)
		}
	}
	var spans [2][2]int
	if !Fields(`{"id":"x","n":[1]}`, []string{"n", "zz"}, true, spans[:]) ||
		spans[0] != [2]int{14, 17} || spans[1] != [2]int{-1, -1} {
		t.Errorf("Fields spans = %v", spans)
	}
}
