package imposter

import (
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// TestMatchShowsPreflightHeaders: with --debug, a match shows the response as Mountebank's http
// server left it: a preflight's Access-Control-Allow-* values set into the response's own
// headers (headersMap.set: a name in another case keeps its place and spelling), then
// Connection: close unless one is named; a response without headers is shown as it is.
func TestMatchShowsPreflightHeaders(t *testing.T) {
	one := &[3][]string{{"X"}, {"PUT"}, {"http://e"}}
	two := &[3][]string{{"X"}, {"PUT"}, {"http://e", "http://f"}}
	tests := []struct {
		is   string
		cors *[3][]string
		want string
	}{
		{`{"body":"b"}`, one, `{"body":"b"}`},
		{`{"headers":{"X-A":"1"}}`, nil, `{"headers":{"X-A":"1","Connection":"close"}}`},
		{`{"headers":{"X-A":"1","access-control-allow-origin":"*"}}`, one,
			`{"headers":{"X-A":"1","access-control-allow-origin":"http://e","Access-Control-Allow-Headers":"X","Access-Control-Allow-Methods":"PUT","Connection":"close"}}`},
		{`{"headers":{"connection":"keep-alive"}}`, two,
			`{"headers":{"connection":"keep-alive","Access-Control-Allow-Headers":"X","Access-Control-Allow-Methods":"PUT","Access-Control-Allow-Origin":["http://e","http://f"]}}`},
		{`{"headers":{"connection":"keep-alive"}}`, nil, `{"headers":{"connection":"keep-alive"}}`},
	}
	for _, tt := range tests {
		v, err := config.ParseJSON([]byte(tt.is))
		if err != nil {
			t.Fatal(err)
		}
		is := v.(*config.Object)
		before := string(config.MarshalJSON(is, 0))
		got := string(config.MarshalJSON(withConnectionClose(is, tt.cors), 0))
		if got != tt.want {
			t.Errorf("%s with %v:\n got %s\nwant %s", tt.is, tt.cors, got, tt.want)
		}
		if after := string(config.MarshalJSON(is, 0)); after != before {
			t.Errorf("%s: changed to %s", before, after)
		}
	}
}
