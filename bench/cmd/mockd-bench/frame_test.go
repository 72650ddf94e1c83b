package main

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestParseFrame(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		eof      bool
		n        int // 0: incomplete
		status   int
		body     string
		close    bool
		err      bool
	}{
		{name: "content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npong", n: 42, status: 200, body: "pong"},
		{name: "header case", in: "HTTP/1.1 201 Created\r\ncontent-length:2\r\nCONNECTION: Close\r\n\r\nok", n: 63, status: 201, body: "ok", close: true},
		{name: "short body", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\npong"},
		{name: "no header end", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"},
		{name: "more than one", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1", n: 39, status: 200, body: "a"},
		{name: "chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\npong\r\n3;x=1\r\n-ok\r\n0\r\n\r\n", n: 73, status: 200, body: "pong-ok"},
		{name: "chunked trailers", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nX-T: 1\r\n\r\n", n: 66, status: 200, body: "a"},
		{name: "chunked partial", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\npong\r\n0\r\n"},
		{name: "chunked bad size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", err: true},
		{name: "chunked bad end", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", err: true},
		{name: "until close, open", in: "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody"},
		{name: "until close", in: "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody", eof: true, n: 42, status: 200, body: "body", close: true},
		{name: "no body 204", in: "HTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n", n: 46, status: 204},
		{name: "no body 304", in: "HTTP/1.1 304 Not Modified\r\n\r\n", n: 29, status: 304},
		{name: "http/1.0", in: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", n: 38, status: 200, close: true},
		{name: "http/1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", n: 62, status: 200},
		{name: "not http", in: "SSH-2.0-x\r\n\r\n", err: true},
		{name: "bad status", in: "HTTP/1.1 2x0 OK\r\n\r\n", err: true},
		{name: "bad length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: true},
		{name: "bad header", in: "HTTP/1.1 200 OK\r\nno colon\r\n\r\n", err: true},
		{name: "huge header", in: "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxHeader), err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, err := parseFrame([]byte(tc.in), tc.eof, nil)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if tc.err {
				return
			}
			if f.n != tc.n {
				t.Fatalf("n = %d, want %d", f.n, tc.n)
			}
			if f.n == 0 {
				return
			}
			if f.status != tc.status || string(f.body) != tc.body || f.close != tc.close {
				t.Errorf("got status %d body %q close %v, want %d %q %v", f.status, f.body, f.close, tc.status, tc.body, tc.close)
			}
		})
	}
}

// Every prefix of a whole response is incomplete, never an error or a shorter response.
func TestParseFramePrefixes(t *testing.T) {
	for _, in := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\npong\r\n3\r\n-ok\r\n0\r\n\r\n",
	} {
		for i := 0; i < len(in); i++ {
			f, _, err := parseFrame([]byte(in[:i]), false, nil)
			if err != nil || f.n != 0 {
				t.Fatalf("prefix %q: n %d, err %v", in[:i], f.n, err)
			}
		}
		if f, _, err := parseFrame([]byte(in), false, nil); err != nil || f.n != len(in) {
			t.Fatalf("%q: n %d, err %v", in, f.n, err)
		}
	}
}

// FuzzParseFrame checks the parser against fasthttp's: a response parseFrame accepts whole has
// the status and body fasthttp reads from the same bytes.
func FuzzParseFrame(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npong"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\npong\r\n0\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		fr, _, err := parseFrame(in, false, nil)
		if err != nil || fr.n == 0 {
			return
		}
		if fr.n > len(in) {
			t.Fatalf("n %d beyond the input (%d)", fr.n, len(in))
		}
		var resp fasthttp.Response
		if err := resp.Read(bufio.NewReader(bytes.NewReader(in[:fr.n]))); err != nil {
			return // fasthttp is stricter about some headers
		}
		if resp.StatusCode() != fr.status {
			t.Fatalf("status %d, fasthttp %d", fr.status, resp.StatusCode())
		}
		if !bytes.Equal(resp.Body(), fr.body) {
			t.Fatalf("body %q, fasthttp %q", fr.body, resp.Body())
		}
	})
}
