package proxy

import (
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// TestMaybeJSON: a body is recorded parsed when it is JSON (white space around it allowed),
// and as text otherwise, whether the quick look at its first character or the parse says so.
func TestMaybeJSON(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{" \t\r\n[1, 2] \n", `[1,2]`},
		{`"text"`, `"text"`},
		{`-1.5`, `-1.5`},
		{`42`, `42`},
		{`true`, `true`},
		{`false`, `false`},
		{`null`, `null`},
		{``, `""`},
		{`   `, `"   "`},
		{`order 7, from the origin`, `"order 7, from the origin"`},
		{`<xml/>`, `"<xml/>"`},
		{`nothing`, `"nothing"`},
		{`{"a":`, `"{\"a\":"`},
		{`7 and more`, `"7 and more"`},
		{"\ufeff{}", "\"\ufeff{}\""}, // JSON.parse refuses a BOM
	} {
		if got := string(config.MarshalJSON(maybeJSON(tt.in), 0)); got != tt.want {
			t.Errorf("maybeJSON(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
