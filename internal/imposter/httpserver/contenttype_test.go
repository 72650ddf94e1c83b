package httpserver

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// TestContentTypeName: write sets a header line through SetContentType exactly when fasthttp's
// SetCanonical would take its name for Content-Type, and the header then written is the same.
func TestContentTypeName(t *testing.T) {
	for _, name := range []string{"Content-Type", "content-type", "CONTENT-TYPE", "cOnTeNt-TyPe",
		"Content\rType", "Content-Typ", "Content-Types", "X-Content-Type", "Content-Length", "", "content_type"} {
		var probe fasthttp.Response
		probe.Header.SetCanonical([]byte(name), []byte("m/m"))
		if got, want := contentTypeName(name), string(probe.Header.ContentType()) == "m/m"; got != want {
			t.Errorf("contentTypeName(%q) = %v; SetCanonical takes it for Content-Type: %v", name, got, want)
		}
		if !contentTypeName(name) {
			continue
		}
		for _, value := range []string{"application/json", "text/plain; charset=utf-8", "", "a\r\nb", "a\nb", " x ", "é"} {
			var canonical, direct fasthttp.Response
			canonical.Header.SetCanonical([]byte(name), []byte(value))
			direct.Header.SetContentType(value)
			if a, b := canonical.Header.String(), direct.Header.String(); a != b {
				t.Errorf("%q: %q: SetCanonical writes %q, SetContentType %q", name, value, a, b)
			}
		}
	}
}
