package httpserver

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
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
