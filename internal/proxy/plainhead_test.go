package proxy

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/netconn"
)

// fasthttpHead is what fasthttp's parse of the response head block makes of it, as a head
// (ok false when it refuses it).
func fasthttpHead(block []byte) (h head, ok bool) {
	var r fasthttp.ResponseHeader
	r.DisableNormalizing()
	r.SetNoDefaultContentType(true)
	if err := r.Read(bufio.NewReader(bytes.NewReader(block))); err != nil {
		return h, false
	}
	return head{status: r.StatusCode(), length: r.ContentLength(), ctype: r.ContentType(),
		cenc: r.Peek("Content-Encoding"), close: r.ConnectionClose()}, true
}

// samePlainHead fails t when block, a head checkHead reads whole, is plain and fasthttp's
// parse of it differs from plainHead's.
func samePlainHead(t *testing.T, block []byte) (plain bool) {
	t.Helper()
	start, end, lines, perr := checkHeadLines(block, nil)
	if perr != nil || end == 0 {
		return false
	}
	block = block[start:end]
	got, ok := plainHead(block, lines)
	if !ok {
		return false
	}
	want, wok := fasthttpHead(block)
	if !wok {
		t.Fatalf("%q: plain, but fasthttp refuses it", block)
	}
	if got.status != want.status || got.length != want.length || !bytes.Equal(got.ctype, want.ctype) ||
		!bytes.Equal(got.cenc, want.cenc) || got.close != want.close {
		t.Fatalf("%q: plainHead %+v, fasthttp %+v", block, got, want)
	}
	return true
}

// TestPlainHead: a plain head reads as fasthttp reads it; any other (another version, a status
// without a body, no or a second Content-Length, chunked, a Trailer) is not plain.
func TestPlainHead(t *testing.T) {
	for _, tc := range []struct {
		head  string
		plain bool
	}{
		{"HTTP/1.1 200 OK\r\nServer: fasthttp\r\nDate: x\r\nContent-Type: text/plain\r\nContent-Length: 24\r\n\r\n", true},
		{"HTTP/1.1 201 Created\r\ncontent-length: 0\r\nconnection: close\r\n\r\n", true},
		{"HTTP/1.1 500 Oops\r\nConnection: close\r\nConnection: keep-alive\r\nContent-Length: 3\r\n\r\n", true},
		{"HTTP/1.1 404\r\nCONNECTION:  close \t\r\nContent-Length:\t007 \r\n\r\n", true},
		{"HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 1\r\n\r\n", true},
		{"HTTP/1.1 200 OK\r\nContent-Type: a\r\nContent-Type: image/png \r\nContent-Encoding: x\r\ncontent-encoding: gzip\r\nContent-Length: 1\r\n\r\n", true},
		{"HTTP/1.1 999 Odd\r\nContent-Length: 123456789012345\r\nX-Long-Name-Of-Sixteen: v\r\nX-Seven: caf\xe9\r\n\r\n", true},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1234567890123456\r\n\r\n", false},
		{"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n", false},
		{"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", false},
		{"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n", false},
		{"HTTP/1.1 199 Odd\r\nContent-Length: 0\r\n\r\n", false},
		{"HTTP/1.1 000 Zero\r\nContent-Length: 0\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTrailer: X-T\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\ntrailer: Content-Length\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n", false}, // checkHead refuses it
		{"\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", true},
	} {
		if got := samePlainHead(t, []byte(tc.head)); got != tc.plain {
			t.Errorf("%q: plain %v, want %v", tc.head, got, tc.plain)
		}
	}
}

// FuzzPlainHead: a head checkHead reads whole that plainHead calls plain reads as fasthttp's
// parse reads it.
func FuzzPlainHead(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 24\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 500 E\r\nConnection: close\r\ncontent-encoding: br\r\nContent-Length: 0\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 302 Found\r\nLocation: /x\r\nCONTENT-TYPE:  a/b \r\nContent-Length:  12 \r\n\r\n"))
	f.Fuzz(func(t *testing.T, block []byte) { samePlainHead(t, block) })
}

// TestForwardPlainHeads: answers with a plain head (read without fasthttp's parse) and
// without (parsed) are recorded alike, their bodies read whole on a kept-alive connection, and
// a plain answer past the body limit fails as before.
func TestForwardPlainHeads(t *testing.T) {
	png := "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 3\r\n\r\n\x89PN"
	tests := []struct{ name, answer, want string }{
		{"plain text", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello",
			`{"statusCode":200,"headers":{"Content-Type":"text/plain","Content-Length":"5"},"body":"hello","_mode":"text"}`},
		{"plain binary", png,
			`{"statusCode":200,"headers":{"Content-Type":"image/png","Content-Length":"3"},"body":"iVBO","_mode":"binary"}`},
		{"plain gzip, the last encoding", "HTTP/1.1 200 OK\r\nContent-Encoding: x\r\ncontent-encoding: gzip\r\nContent-Length: 2\r\n\r\nzz",
			`{"statusCode":200,"headers":{"Content-Encoding":"x","content-encoding":"gzip","Content-Length":"2"},"body":"eno=","_mode":"binary"}`},
		{"plain json closing", "HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
			`{"statusCode":503,"headers":{"Connection":"close","Content-Length":"7"},"body":{"a":1},"_mode":"text"}`},
		{"chunked, parsed", "HTTP/1.1 200 OK\r\nContent-Type: image/gif\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
			`{"statusCode":200,"headers":{"Content-Type":"image/gif","Transfer-Encoding":"chunked"},"body":"aGk=","_mode":"binary"}`},
		{"HTTP/1.0, parsed", "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi",
			`{"statusCode":200,"headers":{"Content-Type":"text/plain","Content-Length":"2"},"body":"hi","_mode":"text"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, cerr := Compile(config.NewObject("to", "http://"+rawOrigin(t, tt.answer)), 0)
			if cerr != nil {
				t.Fatal(cerr)
			}
			for i := range 3 { // on a kept-alive connection when the answer keeps it
				got, err := p.Forward(context.Background(), &Request{Method: "GET", URI: []byte("/x")})
				if err != nil {
					t.Fatal(err)
				}
				if s := string(config.MarshalJSON(got, 0)); s != tt.want {
					t.Errorf("request %d: got  %s\nwant %s", i+1, s, tt.want)
				}
			}
		})
	}
	t.Run("past the limit", func(t *testing.T) {
		p, cerr := Compile(config.NewObject("to", "http://"+rawOrigin(t, png)), 2)
		if cerr != nil {
			t.Fatal(cerr)
		}
		_, err := p.Forward(context.Background(), &Request{Method: "GET", URI: []byte("/x")})
		if err == nil || !strings.Contains(err.Error(), "is larger than 2 bytes") {
			t.Fatalf("%v, want larger than 2 bytes", err)
		}
	})
}

// TestTokenFold: for a token name, tokenFold is bytes.EqualFold with the lower-case name of
// its length: every token byte at every place of each name checkHeadLines and plainHead
// compare (each place is compared on its own, so one byte changed at a time is all of them).
func TestTokenFold(t *testing.T) {
	for _, lower := range []string{"content-length", "transfer-encoding", "content-type", "content-encoding", "connection", "trailer"} {
		for at := range len(lower) {
			for c := range 256 {
				if !netconn.TokenByte(byte(c)) {
					continue
				}
				for _, base := range []string{lower, strings.ToUpper(lower)} {
					name := []byte(base)
					name[at] = byte(c)
					if got, want := tokenFold(name, lower), bytes.EqualFold(name, []byte(lower)); got != want {
						t.Errorf("tokenFold(%q, %q) = %v, want %v", name, lower, got, want)
					}
				}
			}
		}
	}
}
