package imposter

import (
	"testing"

	"github.com/mockd/mockd/internal/config"
)

// TestMatchedConfig: a match (--debug) shows a proxy's mode as Mountebank's resolver sets it on
// the copy it answers with (proxyOnce when missing or unknown), and leaves the stub's own
// configuration as written.
func TestMatchedConfig(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"is":{"body":"x"}}`, `{"is":{"body":"x"}}`},
		{`{"proxy":{"to":"http://o"}}`, `{"proxy":{"to":"http://o","mode":"proxyOnce"}}`},
		{`{"proxy":{"to":"http://o","mode":"bogus"}}`, `{"proxy":{"to":"http://o","mode":"proxyOnce"}}`},
		{`{"proxy":{"mode":"proxyAlways","to":"http://o"}}`, `{"proxy":{"mode":"proxyAlways","to":"http://o"}}`},
		{`{"proxy":{"to":"http://o","mode":"proxyTransparent"}}`, `{"proxy":{"to":"http://o","mode":"proxyTransparent"}}`},
		{`{"proxy":{"to":"http://o","mode":1}}`, `{"proxy":{"to":"http://o","mode":"proxyOnce"}}`},
	} {
		v, err := config.ParseJSON([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		cfg := v.(*config.Object)
		if got := string(config.MarshalJSON(matchedConfig(cfg), 0)); got != tc.want {
			t.Errorf("%s: match shows %s, want %s", tc.in, got, tc.want)
		}
		if got := string(config.MarshalJSON(cfg, 0)); got != tc.in {
			t.Errorf("%s: the stub's configuration became %s", tc.in, got)
		}
	}
}
