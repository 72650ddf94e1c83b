package httpserver

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/imposter/impostertest"
)

func TestSetStatusSendsNodeReasonPhrase(t *testing.T) {
	for _, tc := range []struct {
		code int
		want string
	}{
		{200, "HTTP/1.1 200 OK\r\n"},
		{404, "HTTP/1.1 404 Not Found\r\n"},
		{222, "HTTP/1.1 222 unknown\r\n"},
		{299, "HTTP/1.1 299 unknown\r\n"},
		{413, "HTTP/1.1 413 Payload Too Large\r\n"},
		{418, "HTTP/1.1 418 I'm a Teapot\r\n"},
		{425, "HTTP/1.1 425 Too Early\r\n"},
		{509, "HTTP/1.1 509 Bandwidth Limit Exceeded\r\n"},
		{599, "HTTP/1.1 599 unknown\r\n"},
		{999, "HTTP/1.1 999 unknown\r\n"},
	} {
		var r fasthttp.Response
		setStatus(&r.Header, tc.code)
		if got := r.String(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("setStatus(%d): status line %q, want %q", tc.code, strings.SplitN(got, "\r\n", 2)[0], tc.want)
		}
		// A pooled header is reused: the next response's phrase must not be this one's.
		r.Reset()
		setStatus(&r.Header, 200)
		if got := r.String(); !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") {
			t.Errorf("after %d, 200 was sent as %q", tc.code, strings.SplitN(got, "\r\n", 2)[0])
		}
	}
}

// TestRefusedHeaderKeepsReason: a response whose header node's writeHead refuses answers 500
// with the reason phrase of the status it gave, as node had set it (compat scenario
// imp-header-refused-reason); a status node refuses keeps the 500's own.
func TestRefusedHeaderKeepsReason(t *testing.T) {
	for _, tc := range []struct{ is, want string }{
		{`{"headers":{"X-U":"\u2713"}}`, "HTTP/1.1 500 OK\r\n"},
		{`{"statusCode":404,"headers":{"X U":"v"}}`, "HTTP/1.1 500 Not Found\r\n"},
		{`{"statusCode":299,"headers":{"X-C":"a\u0001b"}}`, "HTTP/1.1 500 unknown\r\n"},
		{`{"statusCode":1000,"headers":{"X U":"v"}}`, "HTTP/1.1 500 Internal Server Error\r\n"},
		{`{"headers":{"X-A":"fine"}}`, "HTTP/1.1 200 OK\r\n"},
	} {
		h, ctx := newBenchHandler(t, `{"protocol":"http","port":4545,"stubs":[{"responses":[{"is":`+tc.is+`}]}]}`, impostertest.RawRequest("GET", "/", "", ""), false)
		ctx.Response.Reset()
		h.handle(ctx)
		if got := ctx.Response.String(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: status line %q, want %q", tc.is, strings.SplitN(got, "\r\n", 2)[0], tc.want)
		}
	}
}
